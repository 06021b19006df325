"""Board benchmark over real HTTP (not a test; `./dev bench board`).

A `bee tracker serve` holding a real Beads export plus generated issues (2,000 live issues in all, with blockers,
epics, claims and closed work) answers the board's pages to one signed-in browser-like client, one request at a
time: the board page, the columns fragment, the live-update poll when nothing changed (204) and after a change, an
issue page, the graph SVG (drawn, then cached), search and epics. Also the server's CPU time per poll, which is what
an open board costs the tracker. On SQLite, and on PostgreSQL when its binaries are installed.

Writes tests/perf/reports/board.json and prints the medians. The target: the board page in under 100 ms.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from tests.harness.postgres import PostgresServer, binaries
from tests.harness.tracker import TrackerProcess
from tests.perf._report import median, write_report

ROOT = Path(__file__).resolve().parents[2]

BEE = Path(sys.executable).parent / "bee"
EXPORT = ROOT / "tests" / "fixtures" / "beads" / "gastownhall__beads__sqlite-era.jsonl"
LIVE_ISSUES = 2000
ROUNDS = int(os.environ.get("BEE_BENCH_ROUNDS", "60"))
TARGET_MS = 100.0
ACTOR = "lead@example.com"


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def generated(count: int, prefix: str = "gen") -> list[str]:
    """``count`` issues shaped like a real backlog: epics with children, blocking chains, claims, closed work."""
    rng = random.Random(12)
    lines = []
    stamp = "2026-01-0{}T10:00:00Z"
    labels = ["api", "ui", "storage", "sync", "docs", "cli", "perf", "security"]
    for n in range(count):
        issue_id = f"{prefix}-{n:05d}"
        record: dict[str, Any] = {
            "id": issue_id,
            "title": f"Generated issue {n}: {rng.choice(['fix', 'add', 'document'])} the {rng.choice(labels)} part",
            "description": "A generated issue for the board benchmark. " * rng.randint(1, 6),
            "status": rng.choices(["open", "in_progress", "closed", "blocked"], [55, 10, 30, 5])[0],
            "priority": rng.randint(0, 4),
            "issue_type": "epic" if n % 50 == 0 else rng.choice(["task", "bug", "feature", "chore"]),
            "labels": rng.sample(labels, rng.randint(0, 3)),
            "created_at": stamp.format(1 + n % 9),
            "updated_at": stamp.format(1 + n % 9),
        }
        if record["status"] == "in_progress":
            record["assignee"] = f"agent-{n % 7}@example.com"
        if record["status"] == "closed":
            record["closed_at"] = stamp.format(1 + n % 9)
        dependencies = []
        if n % 50:
            dependencies.append(
                {"issue_id": issue_id, "depends_on_id": f"{prefix}-{n - n % 50:05d}", "type": "parent-child"}
            )
        if n > 10 and rng.random() < 0.25:
            dependencies.append(
                {"issue_id": issue_id, "depends_on_id": f"{prefix}-{rng.randint(0, n - 1):05d}", "type": "blocks"}
            )
        if dependencies:
            record["dependencies"] = dependencies
        lines.append(json.dumps(record))
    return lines


def bee(*args: str) -> str:
    return subprocess.run([str(BEE), "tracker", *args], capture_output=True, text=True, check=True).stdout


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(
    http: httpx.Client, path: str, rounds: int = ROUNDS, status: int = 200, call: dict[str, Any] | None = None
) -> dict[str, float]:
    """GET ``path`` (or POST the JSON-RPC ``call`` to it) ``rounds`` times, one at a time."""
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        answer = http.get(path) if call is None else http.post(path, json=call)
        samples.append((time.perf_counter() - started) * 1000)
        assert answer.status_code == status, (path, answer.status_code, answer.text[:300])
        assert call is None or not answer.json()["result"].get("isError"), answer.text[:300]
    return {
        "p50_ms": round(median(samples), 2),
        "p95_ms": round(percentile(samples, 0.95), 2),
        "max_ms": round(max(samples), 2),
    }


def measure(store: str, home: Path) -> dict[str, Any]:
    server = TrackerProcess(home, store, "--log-level", "warning")
    server.start()
    base = server.url.removesuffix("/mcp")
    try:
        with httpx.Client(base_url=base, timeout=60, follow_redirects=False) as http:
            form_match = re.search(r'name="form_token" value="([^"]+)"', http.get("/board/signin").text)
            assert form_match is not None
            form = form_match.group(1)
            token = bee("token", "--home", str(home), "--actor", ACTOR).strip()
            signed = http.post("/board/signin", data={"form_token": form, "token": token}, headers={"origin": base})
            assert signed.status_code == 303, signed.text
            page = http.get("/board/").text
            counts = dict(re.findall(r'id="col-(\w+)">[^<]*<span class="count">(\d+)</span>', page))
            poll_match = re.search(r'hx-get="([^"]+)" hx-trigger', page)
            assert poll_match is not None
            poll = poll_match.group(1).replace("&amp;", "&")
            epic = "gen-00000"
            results: dict[str, Any] = {"columns": counts, "page_bytes": len(page.encode())}
            results["board page"] = timed(http, "/board/")
            # Side by side, the practical floor: the same Ready column (its first 50 cards) as an agent gets it,
            # one `ready` call over /mcp in JSON, with no page around it and none of the other three columns.
            ready = {"name": "ready", "arguments": {"limit": 50}}
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ready}
            mcp_headers = {"authorization": f"Bearer {token}", "accept": "application/json, text/event-stream"}
            with httpx.Client(base_url=base, timeout=60, headers=mcp_headers) as agent:
                results["ready tool, 50 cards (MCP, JSON)"] = timed(agent, "/mcp", call=call)
            results["board page, filtered"] = timed(http, "/board/?type=task&priority=1")
            results["poll, unchanged (204)"] = timed(http, poll, status=204)
            results["columns fragment"] = timed(http, "/board/columns")
            results["issue page (epic)"] = timed(http, f"/board/issues/{epic}")
            started = time.perf_counter()
            http.get(f"/board/graph/{epic}")
            results["graph SVG, first drawing"] = {"ms": round((time.perf_counter() - started) * 1000, 1)}
            results["graph SVG, cached"] = timed(http, f"/board/graph/{epic}")
            results["search"] = timed(http, "/board/search?q=generated+storage")
            results["epics"] = timed(http, "/board/epics", rounds=max(5, ROUNDS // 4))
            assert server.process is not None
            before = cpu_seconds(server.process.pid)
            polls = ROUNDS * 5
            for _ in range(polls):
                assert http.get(poll).status_code == 204
            results["server CPU per unchanged poll (ms)"] = round(
                (cpu_seconds(server.process.pid) - before) * 1000 / polls, 3
            )
            return results
    finally:
        server.stop()


def main() -> None:
    report: dict[str, Any] = {"live_issues": LIVE_ISSUES, "rounds": ROUNDS, "target_ms": TARGET_MS, "stores": {}}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        home = folder / "home"
        bee("init", "--home", str(home))
        stores = {"sqlite": str(home / "tracker.db")}
        postgres, bindir = None, binaries()
        if bindir is not None:
            postgres = PostgresServer(bindir)
            postgres.start()
            stores["postgres"] = postgres.create_database()
        try:
            for name, store in stores.items():
                imported = json.loads(bee("import", "--home", str(home), "--store", store, str(EXPORT)))["imported"]
                extra = folder / f"generated-{name}.jsonl"
                extra.write_text("\n".join(generated(LIVE_ISSUES - imported)) + "\n")
                bee("import", "--home", str(home), "--store", store, str(extra))
                measured = measure(store, home)
                measured["real_issues"] = imported
                report["stores"][name] = measured
                board = measured["board page"]["p50_ms"]
                verdict = "met" if board < TARGET_MS else "NOT met"
                print(f"{name}: board page p50 {board} ms, p95 {measured['board page']['p95_ms']} ms ({verdict})")
                for key, value in measured.items():
                    print(f"  {key}: {value}")
        finally:
            if postgres is not None:
                postgres.stop()
    path = write_report("board", report)
    print(f"report: {path}")


if __name__ == "__main__":
    main()
