"""`get` in one batch against its former one-statement-at-a-time reads, side by side in one run (not a test;
`./dev bench get_reads`).

In process, through the store as the host calls it (``SqlStore.read``), on PostgreSQL and on SQLite: the batched
handler (bee_tracker.handlers.get) and the sequential one it replaced (tests/tracker/sequential_get.py, kept for
this and for the tests), alternating call by call over the same issues. A store of 5,000 imported issues with
labels, comments and blocking links; the issues read are ready ones (one batch) and blocked ones (a second batch
names why). Per call: wall time, this process's CPU time and the PostgreSQL backend's CPU time (from /proc), and
round trips (ReadyForQuery messages in libpq's protocol trace); and the throughput of 8 threads sharing a pool of
8 connections, as the tracker's worker threads do, in alternating turns. Writes tests/perf/reports/get_reads.json.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bee_contracts.shapes.tracker import GetArgs
from bee_tracker.handlers.get import get
from bee_tracker.store import SqlStore, open_store
from bee_tracker.store.ops import Read
from bee_tracker.store.postgres import PostgresDatabase
from tests.harness.postgres import PostgresServer, binaries
from tests.perf._report import write_report
from tests.tracker.sequential_get import sequential_get
from tests.tracker.test_get_reads import Traced

ISSUES = 5_000
ROUNDS = int(os.environ.get("BEE_BENCH_ROUNDS", "2000"))
THREADS = 8
SECONDS = float(os.environ.get("BEE_BENCH_SECONDS", "8"))
#: Turns of each handler in the threaded measurement (SECONDS in all for each).
SLICES = 8
HANDLERS: dict[str, Callable[[Read, Any], Any]] = {"batched": get, "sequential": sequential_get}
#: Issues read: ready ones, and (every tenth issue blocks on the one before it) blocked ones.
READY = [f"b-{n:05d}" for n in range(1, 1000, 10)]
BLOCKED = [f"b-{n:05d}" for n in range(10, 1000, 10)]


def seed_lines() -> list[str]:
    lines = []
    for n in range(ISSUES):
        issue_id = f"b-{n:05d}"
        record: dict[str, Any] = {
            "id": issue_id,
            "title": f"benchmark task {n}",
            "description": "what to do, in a sentence or two " * 4,
            "status": "open",
            "priority": n % 5,
            "issue_type": "task",
            "labels": ["bench", f"area-{n % 7}"],
            "created_at": "2026-01-01T00:00:00Z",
            "comments": [
                {"id": n * 3 + k + 1, "issue_id": issue_id, "author": "a@example.com", "text": f"comment {k}"}
                for k in range(3)
            ],
        }
        if n % 10 == 0 and n:
            record["dependencies"] = [{"issue_id": issue_id, "depends_on_id": f"b-{n - 1:05d}", "type": "blocks"}]
        lines.append(json.dumps(record))
    return lines


def backend_cpu(store: SqlStore) -> Callable[[], float]:
    """Seconds of CPU the PostgreSQL backend of the pool's connections has used (a pool of one here)."""
    assert isinstance(store.db, PostgresDatabase)
    with store.db.pool.connection() as conn:
        pid = conn.info.backend_pid
    ticks = os.sysconf("SC_CLK_TCK")

    def used() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks

    return used


def per_call(store: SqlStore, ids: list[str], server_cpu: Callable[[], float] | None) -> dict[str, dict[str, float]]:
    """Median wall and CPU time of one call of each handler, alternating handler by handler over ``ids``."""
    wall: dict[str, list[float]] = {name: [] for name in HANDLERS}
    cpu: dict[str, float] = dict.fromkeys(HANDLERS, 0.0)
    server: dict[str, float] = dict.fromkeys(HANDLERS, 0.0)
    for n in range(ROUNDS):
        issue_id = ids[n % len(ids)]
        for name, handler in HANDLERS.items() if n % 2 else reversed(HANDLERS.items()):
            own, theirs = time.process_time(), server_cpu() if server_cpu else 0.0
            started = time.perf_counter()
            store.read(handler, {"id": issue_id, "comments_limit": 20})
            wall[name].append(time.perf_counter() - started)
            cpu[name] += time.process_time() - own
            server[name] += (server_cpu() - theirs) if server_cpu else 0.0
    return {
        name: {
            "p50Ms": round(statistics.median(wall[name]) * 1000, 3),
            "meanMs": round(statistics.fmean(wall[name]) * 1000, 3),
            "clientCpuMs": round(cpu[name] / ROUNDS * 1000, 3),
            "serverCpuMs": round(server[name] / ROUNDS * 1000, 3),
        }
        for name in HANDLERS
    }


def _turn(store: SqlStore, handler: Callable[[Read, Any], Any], ids: list[str], seconds: float) -> int:
    """Calls of ``handler`` that THREADS threads complete in ``seconds``."""
    counts = [0] * THREADS
    stop_at = time.perf_counter() + seconds

    def caller(k: int) -> None:
        i = k
        while time.perf_counter() < stop_at:
            store.read(handler, {"id": ids[i % len(ids)], "comments_limit": 20})
            counts[k] += 1
            i += THREADS

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts)


def threaded(store: SqlStore, ids: list[str]) -> dict[str, float]:
    """Calls per second of each handler from THREADS threads over SECONDS, in SLICES turns alternating with the
    other handler's (so a change in the machine's load falls on both alike)."""
    calls = dict.fromkeys(HANDLERS, 0)
    for turn in range(SLICES):
        for name, handler in HANDLERS.items() if turn % 2 else reversed(HANDLERS.items()):
            calls[name] += _turn(store, handler, ids, SECONDS / SLICES)
    return {name: round(count / SECONDS, 1) for name, count in calls.items()}


def round_trips(url: str) -> dict[str, dict[str, int]]:
    traced = Traced(url)
    try:
        return {
            kind: {name: traced.round_trips(handler, ids[0]) for name, handler in HANDLERS.items()}
            for kind, ids in (("ready", READY), ("blocked", BLOCKED))
        }
    finally:
        traced.store.close()


def measure(store: SqlStore, server_cpu: Callable[[], float] | None) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for kind, ids in (("ready", READY), ("blocked", BLOCKED)):
        for check in ids[:3]:  # the same answers, or the comparison means nothing
            args: GetArgs = {"id": check, "comments_limit": 20}
            assert store.read(get, args) == store.read(sequential_get, args), check
        result[kind] = per_call(store, ids, server_cpu)
    return result


def main() -> None:
    load = os.getloadavg()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bee-get-reads-") as folder:
        store = open_store(f"{folder}/tracker.db", prefix="b")
        store.import_lines(seed_lines())
        results["sqlite"] = {"perCall": measure(store, None), "threads8OpsPerSecond": threaded(store, READY)}
        store.close()
    bindir = binaries()
    if bindir is not None:
        server = PostgresServer(bindir)
        server.start()
        try:
            url = server.create_database()
            seeding = open_store(url, prefix="b")
            seeding.import_lines(seed_lines())
            seeding.close()
            one = SqlStore(PostgresDatabase(url, max_connections=1), prefix="b")
            per = measure(one, backend_cpu(one))
            one.close()
            pooled = SqlStore(PostgresDatabase(url, max_connections=THREADS), prefix="b")
            rates = threaded(pooled, READY)
            pooled.close()
            results["postgresql"] = {"perCall": per, "threads8OpsPerSecond": rates, "roundTrips": round_trips(url)}
        finally:
            server.stop()
    summary = {}
    for backend, found in results.items():
        for kind, cells in found["perCall"].items():
            summary[f"{backend}_{kind}_p50_sequential_over_batched"] = round(
                cells["sequential"]["p50Ms"] / cells["batched"]["p50Ms"], 2
            )
        rates = found["threads8OpsPerSecond"]
        summary[f"{backend}_threads8_batched_over_sequential"] = round(rates["batched"] / rates["sequential"], 2)
    report = {
        "issues": ISSUES,
        "rounds": ROUNDS,
        "loadAverageBefore": [round(x, 2) for x in load],
        "loadAverageAfter": [round(x, 2) for x in os.getloadavg()],
        "results": results,
        "summary": summary,
    }
    path = write_report("get_reads", report)
    print(json.dumps(report, indent=2))
    print(f"report: {path}")


if __name__ == "__main__":
    main()
