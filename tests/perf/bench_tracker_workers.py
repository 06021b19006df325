"""The tracker on PostgreSQL with one worker, two workers (`bee tracker serve --workers 2`: two processes on one
port) and two replicas (two servers on two ports, the callers split between them), side by side in one run (not a
test; `./dev bench tracker_workers`).

Throughput and p50/p99 of ready, get, claim and add_note at 1, 8 and 32 clients, measured the way
tests/perf/bench_tracker.py measures (its load generator, its seed of 60,000 issues), each configuration on a fresh
database. Every configuration gets the same totals: --max-connections 40 and the default --max-in-flight of 100
(with --workers 2 each worker has half of each). Writes tests/perf/reports/tracker_workers.json.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.harness.postgres import PostgresServer, binaries, free_port
from tests.perf import bench_tracker as bench
from tests.perf._report import machine, write_report

CONFIGS = {"1 worker": (1, 1), "2 workers": (2, 1), "2 replicas": (1, 2)}  # name: (workers, replicas)


def serve(home: Path, store: str, workers: int) -> bench.Server:
    port = free_port()
    argv = [str(bench.BEE), "tracker", "serve", "--home", str(home), "--store", store, "--port", str(port)]
    argv += ["--log-level", "warning", "--max-connections", "40", "--workers", str(workers)]
    return bench.Server(argv, port)


def run_all() -> dict[str, Any]:
    bindir = binaries()
    if bindir is None:
        sys.exit("PostgreSQL is needed (the Debian postgresql package)")
    work = Path(tempfile.mkdtemp(prefix="bee-bench-workers-"))
    rows: list[dict[str, Any]] = []
    pg = PostgresServer(bindir)
    pg.start()
    try:
        for name, (workers, replicas) in CONFIGS.items():
            url = pg.create_database()
            home = work / name.replace(" ", "-")
            bench.seed(home, url)
            tokens = bench.tokens_for(home)
            servers = [serve(home, url, workers) for _ in range(replicas)]
            try:
                rows += bench.run_config(name, [s.url for s in servers], tokens, bench.OPERATIONS)
            finally:
                for server in servers:
                    server.stop()
    finally:
        pg.stop()
    return {"secondsPerCell": bench.SECONDS, "machine": machine(), "rows": rows}


def summarize(report: dict[str, Any]) -> dict[str, Any]:
    by = {(r["config"], r["operation"], r["clients"]): r for r in report["rows"]}
    summary: dict[str, Any] = {}
    for operation in bench.OPERATIONS:
        one = by.get(("1 worker", operation, 32))
        for other in ("2 workers", "2 replicas"):
            row = by.get((other, operation, 32))
            if one and row:
                key = f"{other.replace(' ', '_')}_vs_1_worker_{operation}_32"
                summary[key] = row["opsPerSecond"] / one["opsPerSecond"]
    return summary


def main() -> None:
    report = run_all()
    report["summary"] = summarize(report)
    path = write_report("tracker_workers", report)
    print(json.dumps(report["summary"], indent=2))
    print(f"report: {path}")


if __name__ == "__main__":
    main()
