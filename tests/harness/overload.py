"""10× overload, generated: 1,000 clients from four processes (tests/harness/overload_client.py), each on its own
connection, sending `tools/call ready` back to back against a server admitting 100 at a time.

Used by the test that every request is answered (tests/reliability/test_tracker_overload.py) and by the benchmark
that compares admitted latency with the client floor (tests/perf/bench_tracker_overload.py).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.harness.postgres import free_port

PROCESSES = 4
CLIENTS_PER_PROCESS = 250
REQUESTS_PER_CLIENT = int(os.environ.get("BEE_OVERLOAD_REQUESTS", "4"))
MAX_IN_FLIGHT = int(os.environ.get("BEE_OVERLOAD_MAX_IN_FLIGHT", "100"))
CLIENT = Path(__file__).with_name("overload_client.py")
FLOOR = Path(__file__).parents[1] / "perf" / "instant_503.py"
#: What a request may come to besides an error: served, the host's own busy result, or shed at the edge.
ANSWERED = frozenset({"served", "busy-503", "busy-tool"})

#: One request: its outcome, whether it was its connection's first, and its latency in seconds.
Outcome = tuple[str, bool, float]


def generate(url: str, token: str, requests: int = REQUESTS_PER_CLIENT) -> list[Outcome]:
    """The four load-generating processes against ``url``, started together once all are ready, each client sending
    ``requests`` calls: every outcome."""
    spec = json.dumps({"url": url, "token": token, "clients": CLIENTS_PER_PROCESS, "requests": requests})
    workers = [
        subprocess.Popen([sys.executable, str(CLIENT), spec], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(PROCESSES)
    ]
    try:
        for worker in workers:
            assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
        outcomes: list[Outcome] = []
        for worker in workers:
            out, _ = worker.communicate(timeout=800)
            assert worker.returncode == 0
            outcomes += [(kind, first, seconds) for kind, first, seconds in json.loads(out)]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait(timeout=30)
    assert len(outcomes) == PROCESSES * CLIENTS_PER_PROCESS * requests
    return outcomes


def unanswered(outcomes: list[Outcome]) -> Counter[str]:
    """The outcomes that are not an answer (a drop, an error status, a 503 without Retry-After), counted."""
    return Counter(kind for kind, _, _ in outcomes if kind not in ANSWERED)


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)

    return {"count": len(ordered), "p50Ms": at(0.5), "p90Ms": at(0.9), "p99Ms": at(0.99), "maxMs": at(1.0)}


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    """The outcomes and percentiles of one round; the first request of each connection meets the burst (1,000
    connections opening at once), later ones the steady overload, so they are reported apart too."""
    report: dict[str, Any] = {
        "outcomes": dict(sorted(Counter(kind for kind, _, _ in outcomes).items())),
        **percentiles([seconds for _, _, seconds in outcomes]),
    }
    for label, selected in (
        ("served", [s for kind, _, s in outcomes if kind == "served"]),
        ("shed", [s for kind, _, s in outcomes if kind == "busy-503"]),
        ("first", [s for _, first, s in outcomes if first]),
        ("later", [s for _, first, s in outcomes if not first]),
        ("servedFirst", [s for kind, first, s in outcomes if kind == "served" and first]),
        ("servedLater", [s for kind, first, s in outcomes if kind == "served" and not first]),
    ):
        if selected:
            report[label] = percentiles(selected)
    return report


def p99(rounds: list[dict[str, Any]], part: str) -> float:
    """The median over rounds of one part's p99, in ms."""
    return float(statistics.median(r[part]["p99Ms"] for r in rounds if part in r))


@contextmanager
def instant_503() -> Iterator[str]:
    """The client floor (tests/perf/instant_503.py) on a free port: its /mcp URL."""
    port = free_port()
    floor = subprocess.Popen([sys.executable, str(FLOOR), str(port)], stdout=subprocess.PIPE, text=True)
    try:
        assert floor.stdout is not None and floor.stdout.readline().strip() == "ready"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        floor.terminate()
        floor.wait(timeout=30)
        if floor.stdout is not None:
            floor.stdout.close()
