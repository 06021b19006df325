"""The tracker under 10x overload against the client floor, side by side in one run (not a test;
`./dev bench tracker_overload`).

The same load (tests/harness/overload.py: 1,000 clients from four processes, four `tools/call ready` each, against
`--max-in-flight 100` on SQLite) goes, in alternating rounds, to three servers:

- the client floor: a server that answers every request 503 at once (tests/perf/instant_503.py), what the load
  generator and the machine cost by themselves;
- the tracker admitting by count alone (`--max-queue-seconds 0`, admission before cost-aware admission);
- the tracker as it ships (cost-aware admission, the default `--max-queue-seconds`).

Writes the latency percentiles, the admitted requests' p99 against the floor's and the load average to
tests/perf/reports/tracker_overload.json. Target (issue 20): admitted p99 <= 2x the client floor.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

from tests.harness.overload import (
    CLIENTS_PER_PROCESS,
    MAX_IN_FLIGHT,
    PROCESSES,
    REQUESTS_PER_CLIENT,
    generate,
    instant_503,
    p99,
    summary,
    unanswered,
)
from tests.harness.tracker import TrackerProcess
from tests.perf._report import verdict, write_report

ROUNDS = int(os.environ.get("BEE_OVERLOAD_ROUNDS", "3"))
TARGET = 2.0  # admitted p99 at most this many times the floor's p99


def main() -> None:
    common = ("--max-in-flight", str(MAX_IN_FLIGHT), "--log-level", "warning")
    with tempfile.TemporaryDirectory() as scratch:
        by_cost = TrackerProcess(Path(scratch) / "by-cost", None, *common)
        by_count = TrackerProcess(Path(scratch) / "by-count", None, *common, "--max-queue-seconds", "0")
        rounds: dict[str, list[dict[str, Any]]] = {"floor": [], "count": [], "cost": []}
        load: list[float] = []
        try:
            by_cost.start()
            by_count.start()
            with instant_503() as floor_url:
                for round_number in range(ROUNDS):
                    for name, url, token in (
                        ("floor", floor_url, "none"),
                        ("count", by_count.url, by_count.token("load@example.com")),
                        ("cost", by_cost.url, by_cost.token("load@example.com")),
                    ):
                        load.append(os.getloadavg()[0])
                        outcomes = generate(url, token)
                        if lost := unanswered(outcomes):
                            raise SystemExit(f"{name}: requests not answered: {dict(lost)}")
                        rounds[name].append(summary(outcomes))
                        print(f"round {round_number + 1}/{ROUNDS} {name}: {rounds[name][-1]['outcomes']}", flush=True)
        finally:
            by_cost.stop()
            by_count.stop()

    floor = p99(rounds["floor"], "shed")
    report = {
        "clients": PROCESSES * CLIENTS_PER_PROCESS,
        "processes": PROCESSES,
        "requestsPerClient": REQUESTS_PER_CLIENT,
        "maxInFlight": MAX_IN_FLIGHT,
        "rounds": ROUNDS,
        "loadAverage1m": {"min": min(load), "max": max(load)},
        "medianP99Ms": {
            "floor": floor,
            "floorFirst": p99(rounds["floor"], "first"),
            "floorLater": p99(rounds["floor"], "later"),
            **{
                f"{name}{part[0].upper()}{part[1:]}": p99(rounds[name], part)
                for name in ("count", "cost")
                for part in ("served", "shed", "servedFirst", "servedLater")
            },
        },
        "served": {name: statistics.median(r["served"]["count"] for r in rounds[name]) for name in ("count", "cost")},
        "admittedP99VsFloor": {
            name: verdict(p99(rounds[name], "served") / floor, TARGET, higher_is_better=False)
            for name in ("count", "cost")
        },
        # After each connection's first request: the steady overload, once the opening burst is answered.
        "laterAdmittedP99VsFloorLater": {
            name: verdict(p99(rounds[name], "servedLater") / p99(rounds["floor"], "later"), TARGET, False)
            for name in ("count", "cost")
        },
        "runs": rounds,
    }
    path = write_report("tracker_overload", report)
    print(json.dumps({k: v for k, v in report.items() if k != "runs"}, indent=2), f"\nreport: {path}")


if __name__ == "__main__":
    main()
