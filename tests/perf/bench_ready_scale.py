"""Ready at scale, the quick check: `ready`, `claim`, `add_note` and the ready count at 1,000 and 100,000
generated issues on SQLite and PostgreSQL, after the import's statistics refresh (not a test;
`./dev bench ready_scale`).

The full scale benchmark (`bench_scale.py`) also times the previous code's queries and the board, and takes most of
an hour; this one takes a few minutes and answers the targets `ready` p50 at 100,000 ≤ 20 ms and ≤ 3× its time at
1,000, and `claim`/`add_note` ≤ 10 ms, on the same generated backlogs. Writes tests/perf/reports/ready_scale.json.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from bee_tracker import calls
from bee_tracker.store import SqlStore, open_store
from tests.perf._report import write_report
from tests.perf.bench_scale import generated

SIZES = (1_000, 100_000)
ROUNDS = 30
ACTOR = "bench@example.com"


def p50_ms(action: Callable[[], Any], rounds: int = ROUNDS) -> float:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return round(statistics.median(samples) * 1000, 2)


def measure(store: SqlStore, count: int) -> dict[str, float]:
    started = time.perf_counter()
    store.import_lines(generated(count))
    imported = time.perf_counter() - started
    ready = p50_ms(lambda: calls.call(store, "ready", ACTOR, {"limit": 50}))
    ids = iter(issue["id"] for issue in calls.call(store, "ready", ACTOR, {"limit": 100})["data"]["issues"])
    claim = p50_ms(lambda: calls.call(store, "claim", ACTOR, {"id": next(ids)}), 25)
    first = calls.call(store, "ready", ACTOR, {"limit": 1})["data"]["issues"][0]["id"]
    note = p50_ms(lambda: calls.call(store, "add_note", ACTOR, {"id": first, "text": "measured"}), 25)
    with store.db.read() as tx:
        counted = p50_ms(lambda: tx.rows("SELECT COUNT(*) FROM readiness r WHERE r.is_ready = 1"))
    return {
        "import_s": round(imported, 1),
        "ready_ms": ready,
        "claim_ms": claim,
        "add_note_ms": note,
        "count_ms": counted,
    }


def main() -> None:
    from tests.harness.postgres import PostgresServer, binaries

    results: dict[str, dict[str, dict[str, float]]] = {"sqlite": {}, "postgresql": {}}
    with tempfile.TemporaryDirectory(prefix="bee-ready-scale-") as folder:
        for count in SIZES:
            store = open_store(f"{folder}/s{count}.db")
            results["sqlite"][str(count)] = measure(store, count)
            store.close()
            print("sqlite", count, results["sqlite"][str(count)], flush=True)
    bindir = binaries()
    if bindir is not None:
        server = PostgresServer(bindir)
        server.start()
        try:
            for count in SIZES:
                store = open_store(server.create_database())
                results["postgresql"][str(count)] = measure(store, count)
                store.close()
                print("postgresql", count, results["postgresql"][str(count)], flush=True)
        finally:
            server.stop()
    verdicts = {}
    for name, sizes in results.items():
        if not sizes:
            continue
        small, large = sizes[str(SIZES[0])], sizes[str(SIZES[-1])]
        verdicts[name] = {
            "ready_at_100000_le_20ms": large["ready_ms"] <= 20,
            "ready_growth_le_3x": large["ready_ms"] <= 3 * small["ready_ms"],
            "ready_growth": round(large["ready_ms"] / small["ready_ms"], 2),
            "claim_and_add_note_le_10ms": all(s["claim_ms"] <= 10 and s["add_note_ms"] <= 10 for s in sizes.values()),
        }
    write_report("ready_scale", {"sizes": list(SIZES), "results": results, "targets": verdicts})
    print(verdicts)


if __name__ == "__main__":
    main()
