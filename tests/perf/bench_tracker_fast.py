"""The tracker's stateless fast path against the raw floor, side by side in one run (not a test;
`./dev bench tracker_fast`).

Three servers, measured in alternating rounds with the same load generator (tests/perf/bench_tracker.py's: real
HTTP, real HS256 tokens, 8 concurrent callers over 4 processes), `get` and `ready` on SQLite:

- **floor**: a raw Starlette app that verifies the same JWT with PyJWT and answers a fixed result
  (tests/perf/raw_jwt_floor.py);
- **fast**: `bee tracker serve`, where tools/call takes the fast path (the default);
- **sdk**: the same tracker with ``BEE_HTTP_FAST_PATH=0``, every request through the SDK's per-request server run.

For each cell: requests per second, p50/p99 latency, and the server's CPU per request (from /proc). Targets (issue
20): fast `get` >= 0.5x the floor's rate, fast `ready` >= 0.3x. Writes tests/perf/reports/tracker_fast.json.

The load generator shares the 2 cores with the server, so every rate includes its cost; the ratios are what compare.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.harness.postgres import free_port
from tests.perf._report import median, verdict, write_report
from tests.perf.bench_tracker import BEE, Server, measure, seed, tokens_for

CLIENTS = 8
OPERATIONS = ("get", "ready")
ROUNDS = int(os.environ.get("BEE_BENCH_ROUNDS", "3"))
TARGETS = {"get": 0.5, "ready": 0.3}
_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of process ``pid`` and its finished children."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / _TICKS


def tracker(home: Path, store: str, *, fast: bool) -> Server:
    port = free_port()
    argv = [str(BEE), "tracker", "serve", "--home", str(home), "--store", store, "--port", str(port)]
    env = {**os.environ, "BEE_HTTP_FAST_PATH": "1" if fast else "0"}
    return Server([*argv, "--log-level", "warning", "--max-connections", "40"], port, env=env)


def cell(server: Server, tokens: list[str], operation: str) -> dict[str, Any]:
    before = cpu_seconds(server.process.pid)
    row: dict[str, Any] = measure([server.url], tokens, operation, CLIENTS)
    used = cpu_seconds(server.process.pid) - before
    requests = row["opsPerSecond"] * float(os.environ.get("BEE_BENCH_SECONDS", "4"))
    row["serverCpuMsPerRequest"] = used * 1000 / requests if requests else float("nan")
    return row


def run_all() -> dict[str, Any]:
    load_at_start = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="bee-bench-tracker-fast-"))
    home = work / "sqlite"
    database = str(home / "tracker.db")
    seed(home, database)
    tokens = tokens_for(home)
    secret = (home / "signing-key").read_text().strip()
    port = free_port()
    servers = {
        "floor": Server([sys.executable, str(Path(__file__).parent / "raw_jwt_floor.py"), str(port), secret], port),
        "fast": tracker(home, database, fast=True),
        "sdk": tracker(home, database, fast=False),
    }
    rows: list[dict[str, Any]] = []
    try:
        for round_number in range(ROUNDS):
            for operation in OPERATIONS:
                for name, server in servers.items():
                    row = cell(server, tokens, operation)
                    row.update(server=name, operation=operation, round=round_number)
                    rows.append(row)
                    print(
                        f"round {round_number} {name:<6} {operation:<6} {row['opsPerSecond']:7.0f} req/s  "
                        f"p50 {row['p50Ms']:5.1f} ms  p99 {row['p99Ms']:6.1f} ms  "
                        f"server CPU {row['serverCpuMsPerRequest']:.2f} ms/req  errors {row['errors'] or 'none'}",
                        flush=True,
                    )
    finally:
        for server in servers.values():
            server.stop()
    return {
        "clients": CLIENTS,
        "rounds": ROUNDS,
        "rows": rows,
        "loadAverageAtStart": load_at_start,
        "loadAverage": os.getloadavg(),
    }


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for operation in OPERATIONS:
        for name in ("floor", "fast", "sdk"):
            mine = [r for r in rows if r["server"] == name and r["operation"] == operation]
            summary[f"{name}_{operation}_ops"] = median([r["opsPerSecond"] for r in mine])
            summary[f"{name}_{operation}_cpu_ms"] = median([r["serverCpuMsPerRequest"] for r in mine])
            summary[f"{name}_{operation}_p99_ms"] = median([r["p99Ms"] for r in mine])
        floor = summary[f"floor_{operation}_ops"]
        summary[f"fast_{operation}_vs_floor"] = summary[f"fast_{operation}_ops"] / floor
        summary[f"sdk_{operation}_vs_floor"] = summary[f"sdk_{operation}_ops"] / floor
        summary[f"fast_{operation}_vs_sdk"] = summary[f"fast_{operation}_ops"] / summary[f"sdk_{operation}_ops"]
        # The same comparison in server CPU per request: what the rates would be if the server had the cores to
        # itself (the load generator shares them, and on a busy machine it is what limits every rate).
        floor_cpu = summary[f"floor_{operation}_cpu_ms"]
        summary[f"fast_{operation}_cpu_vs_floor"] = floor_cpu / summary[f"fast_{operation}_cpu_ms"]
        summary[f"sdk_{operation}_cpu_vs_floor"] = floor_cpu / summary[f"sdk_{operation}_cpu_ms"]
    return summary


def main() -> None:
    report = run_all()
    report["summary"] = summary = summarize(report["rows"])
    path = write_report("tracker_fast", report)
    for operation in OPERATIONS:
        ratio = summary[f"fast_{operation}_vs_floor"]
        print(f"fast {operation} vs floor: {verdict(ratio, TARGETS[operation], higher_is_better=True)}")
        print(f"sdk  {operation} vs floor: {summary[f'sdk_{operation}_vs_floor']:.2f}x")
        cpu = summary[f"fast_{operation}_cpu_vs_floor"]
        print(f"fast {operation} vs floor in server CPU per request: {verdict(cpu, TARGETS[operation], True)}")
    print(f"load average at the start: {report['loadAverageAtStart']}, at the end: {report['loadAverage']}")
    print(f"report: {path}")


if __name__ == "__main__":
    main()
