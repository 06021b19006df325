"""Eight people asking at once, and again as soon as they are answered, for dependency graphs Graphviz cannot draw
in time, while someone else loads the board page: that person's page times, unloaded and under the attack.

The hostile graphs are the kind anyone who can write links makes: an epic whose child waits on a chain of 148
issues with extra links across it, under the board's density limit (so Graphviz is tried), which ``dot`` cannot lay
out within its timeout. Each of the eight works through epics of their own, so every request is a new picture; two
are drawn at a time, four wait, and the other two are refused with 503 and ask again when ``Retry-After`` says.

Used by the test of the promise (tests/reliability/test_board_graph_load.py, which writes no file) and by the
benchmark that records the numbers in tests/perf/reports/board_graph_load.json
(`./dev bench board_graph_load`, tests/perf/bench_board_graph_load.py).
"""

from __future__ import annotations

import itertools
import json
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

from bee_tracker.board import drawing
from tests.harness.tracker import TrackerProcess

ATTACKERS = 8
EPICS_EACH = 4
CHAIN = 148
SAMPLES = 60
#: The promise: the board page under attack, at most this many times its unloaded median.
RATIO = 3.0


def hostile_epic(prefix: str, rng: random.Random) -> list[dict[str, Any]]:
    """An epic, its child, and a chain of issues the child waits for, with forward links across the chain: as many
    links as the board still draws for that many issues."""
    epic, child = f"{prefix}-e", f"{prefix}-c"
    chain = [f"{prefix}-{n:03d}" for n in range(CHAIN)]
    waits: dict[str, set[str]] = {issue_id: set() for issue_id in chain}
    for earlier, later in itertools.pairwise(chain):
        waits[earlier].add(later)
    links = 1 + 1 + (CHAIN - 1)
    while links < drawing.most_links(CHAIN + 2):
        a, b = sorted(rng.sample(range(CHAIN), 2))
        if chain[b] not in waits[chain[a]]:
            waits[chain[a]].add(chain[b])
            links += 1

    def issue(issue_id: str, deps: list[dict[str, Any]], issue_type: str = "task") -> dict[str, Any]:
        title = f"hostile {issue_id} " + "words " * 6
        fields = {"id": issue_id, "title": title, "status": "open", "priority": 2, "issue_type": issue_type}
        return {**fields, "dependencies": deps}

    def dep(issue_id: str, target: str, kind: str = "blocks") -> dict[str, Any]:
        return {"issue_id": issue_id, "depends_on_id": target, "type": kind}

    lines = [issue(epic, [], "epic"), issue(child, [dep(child, epic, "parent-child"), dep(child, chain[0])])]
    lines += [issue(i, [dep(i, target) for target in sorted(waits[i])]) for i in chain]
    return lines


def attackers_epics() -> list[list[str]]:
    """Each attacker's epics (their id prefixes)."""
    return [[f"h{a}x{e}" for e in range(EPICS_EACH)] for a in range(ATTACKERS)]


def import_hostile_graphs(home: Path, scratch: Path) -> None:
    """Every attacker's hostile epics, imported into the tracker home ``home`` (``scratch`` holds the export)."""
    rng = random.Random(16)
    source = scratch / "hostile.jsonl"
    with source.open("w") as out:
        for prefix in (p for each in attackers_epics() for p in each):
            out.writelines(json.dumps(line) + "\n" for line in hostile_epic(prefix, rng))
    subprocess.run(
        [str(Path(sys.executable).parent / "bee"), "tracker", "import", "--home", str(home), str(source)],
        check=True,
        capture_output=True,
        timeout=600,
    )


def sign_in(base: str, token: str) -> httpx.Client:
    browser = httpx.Client(base_url=base, timeout=120)
    page = browser.get("/board/signin")
    [form_token] = re.findall(r'name="form_token" value="([^"]+)"', page.text)
    answer = browser.post(
        "/board/signin", data={"form_token": form_token, "token": token, "next": "/board/"}, headers={"origin": base}
    )
    assert answer.status_code == 303, answer.text
    return browser


def dot_children(pid: int) -> int:
    """How many ``dot`` processes the server ``pid`` is running now."""
    count = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)
            name = fields[0].split("(", 1)[1]
        except (OSError, IndexError):
            continue
        if name == "dot" and int(fields[1].split()[1]) == pid:
            count += 1
    return count


def board_page_ms(browser: httpx.Client) -> float:
    started = time.perf_counter()
    answer = browser.get("/board/")
    elapsed = (time.perf_counter() - started) * 1000
    assert answer.status_code == 200, answer.text
    return elapsed


def _attack(
    browser: httpx.Client, mine: list[str], stop: threading.Event, answers: Counter[str], retry: set[str]
) -> None:
    """Ask for one hostile graph after another, each as soon as the last was answered; when refused for a full
    queue, ask again for the same graph when told to (sooner is a plain flood of HTTP requests, which no route of any
    server outlasts on two cores shared with its attackers)."""
    turn = 0
    while not stop.is_set():
        answer = browser.get(f"/board/graph/{mine[turn % len(mine)]}-e")
        answers[str(answer.status_code)] += 1
        if answer.status_code == 503:
            retry.add(answer.headers.get("retry-after", "missing"))
            stop.wait(float(answer.headers.get("retry-after", "1")))
        else:
            turn += 1


def measure(server: TrackerProcess) -> dict[str, Any]:
    """The board page's times for one person on ``server`` (holding :func:`import_hostile_graphs`), unloaded and
    while the attackers ask for their graphs, and what the attackers were answered: the report."""
    base = f"http://127.0.0.1:{server.port}"
    with ExitStack() as clients:
        person, *attackers = [
            sign_in(base, server.token(who))
            for who in ["lead@example.com", *(f"attacker{n}@example.com" for n in range(ATTACKERS))]
        ]
        for browser in (person, *attackers):
            clients.callback(browser.close)
        for _ in range(5):  # warm up: templates, statements, caches
            board_page_ms(person)
        unloaded = [board_page_ms(person) for _ in range(SAMPLES)]
        answers, retry_after, busy_dots, loaded = Counter[str](), set[str](), [], []
        stop = threading.Event()
        threads = [
            threading.Thread(target=_attack, args=(browser, mine, stop, answers, retry_after))
            for browser, mine in zip(attackers, attackers_epics(), strict=True)
        ]
        try:
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 120  # a give-up guard: Graphviz is at work before anything is measured
            assert server.process is not None  # started
            while dot_children(server.process.pid) < drawing.CONCURRENT:
                assert time.monotonic() < deadline, "the hostile requests never got Graphviz started"
                time.sleep(0.05)
            for _ in range(SAMPLES):
                busy_dots.append(dot_children(server.process.pid))
                loaded.append(board_page_ms(person))
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=120)

    unloaded_ms, loaded_ms = statistics.median(unloaded), statistics.median(loaded)
    return {
        "attackers": ATTACKERS,
        "hostileIssuesPerGraph": CHAIN + 2,
        "hostileLinksPerGraph": drawing.most_links(CHAIN + 2),
        "samples": SAMPLES,
        "boardPageUnloaded": {"p50Ms": round(unloaded_ms, 1), "maxMs": round(max(unloaded), 1)},
        "boardPageUnderAttack": {"p50Ms": round(loaded_ms, 1), "maxMs": round(max(loaded), 1)},
        "ratio": round(loaded_ms / unloaded_ms, 2),
        "promise": f"<= {RATIO}x",
        "dotRunningWhileSampled": dict(sorted(Counter(busy_dots).items())),
        "attackAnswers": dict(sorted(answers.items())),
        "retryAfter": sorted(retry_after),
    }
