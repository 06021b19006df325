"""10x overload: 1,000 concurrent clients from four processes against `--max-in-flight 100`.

Every request must be answered: a 200 with a JSON-RPC result, or a 503 with Retry-After (shed at the edge). None may
be closed without a response. The latency percentiles are printed and written to
tests/perf/reports/tracker_overload.json; they are reported, not asserted (the target, p99 <= 1 s, is tracked in
docs/operations.md).
"""

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.harness.tracker import TrackerFactory
from tests.perf._report import write_report

pytestmark = pytest.mark.e2e

PROCESSES = 4
CLIENTS_PER_PROCESS = 250
REQUESTS_PER_CLIENT = int(os.environ.get("BEE_OVERLOAD_REQUESTS", "4"))
MAX_IN_FLIGHT = int(os.environ.get("BEE_OVERLOAD_MAX_IN_FLIGHT", "100"))
CLIENT = Path(__file__).with_name("overload_client.py")


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)

    return {"count": len(ordered), "p50Ms": at(0.5), "p90Ms": at(0.9), "p99Ms": at(0.99), "maxMs": at(1.0)}


@pytest.mark.timeout(900)
def test_thousand_clients_are_all_answered_served_or_shed(tracker_factory: TrackerFactory) -> None:
    server = tracker_factory(None, "--max-in-flight", str(MAX_IN_FLIGHT), "--log-level", "warning")
    token = server.token("load@example.com")
    spec = {
        "url": server.url,
        "token": token,
        "clients": CLIENTS_PER_PROCESS,
        "requests": REQUESTS_PER_CLIENT,
        # Long enough for every process to start and open its event loop before the first request.
        "start_at": time.time() + 5,
    }
    workers = [
        subprocess.Popen([sys.executable, str(CLIENT), json.dumps(spec)], stdout=subprocess.PIPE, text=True)
        for _ in range(PROCESSES)
    ]
    outcomes: list[tuple[str, bool, float]] = []
    for worker in workers:
        out, _ = worker.communicate(timeout=800)
        assert worker.returncode == 0
        outcomes += [(kind, first, seconds) for kind, first, seconds in json.loads(out)]

    counts = Counter(kind for kind, _, _ in outcomes)
    report = {
        "clients": PROCESSES * CLIENTS_PER_PROCESS,
        "processes": PROCESSES,
        "requestsPerClient": REQUESTS_PER_CLIENT,
        "maxInFlight": MAX_IN_FLIGHT,
        "requests": len(outcomes),
        "outcomes": dict(sorted(counts.items())),
        **percentiles([seconds for _, _, seconds in outcomes]),
    }
    # The first request of each connection meets the burst (1,000 connections opening at once); later ones the
    # steady overload. Reported apart, because they differ by an order of magnitude on this machine.
    for label, selected in (
        ("served", [s for kind, _, s in outcomes if kind == "served"]),
        ("shed", [s for kind, _, s in outcomes if kind == "busy-503"]),
        ("first", [s for _, first, s in outcomes if first]),
        ("later", [s for _, first, s in outcomes if not first]),
    ):
        if selected:
            report[label] = percentiles(selected)
    path = write_report("tracker_overload", report)
    print(json.dumps(report, indent=2), f"\nreport: {path}")

    assert len(outcomes) == PROCESSES * CLIENTS_PER_PROCESS * REQUESTS_PER_CLIENT
    unanswered = {kind: count for kind, count in counts.items() if kind not in {"served", "busy-503", "busy-tool"}}
    assert unanswered == {}, report
    # The server is still healthy and serving after the storm.
    assert httpx.get(f"http://127.0.0.1:{server.port}/health", timeout=30).status_code == 200
