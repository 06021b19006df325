"""An import into a store that already holds issues against the same import into an empty one, before and after,
side by side in one run on SQLite and PostgreSQL (`./dev bench import_nonempty`).

Two legacy files of 20,000 issues each are generated from the real exports in tests/fixtures/beads (beads_corpus.py:
real lines with new ids, their labels, dependencies and comments): A and B, and B's first tenth. Each scenario imports
its setup with one `bee tracker import` process, then measures a second one (wall time, CPU time of the process, its
peak memory), against the scenario it is compared with:

- **empty**: B into an empty store (what the next three are compared with);
- **other issues**: B into a store holding A (20,000 other issues);
- **same issues**: A again into a store holding A (every line replaces an untouched issue);
- **tombstones**: B into a store holding A's 20,000 ids as tombstones (Beads' deletions): the `issues` table is empty
  when the import starts, so PostgreSQL's statistics say it is small while the import grows it;
- **a tenth, empty** and **a tenth into other issues**: 2,000 lines of B into an empty store and into one holding A:
  a store ten times the import, which is brought up to date around what the import touched (the others, where the
  import is as large as the store, are rebuilt whole: store/importing.py).

"before" is the code this branch left main at (its bee_tracker extracted with git archive and put first on
PYTHONPATH), "after" this checkout's. The target: each store-holding scenario within 2x the empty one, after. On
PostgreSQL much of the work is the server's, so its CPU seconds over the import (the postmaster's and its
processes', ended backends included) are recorded beside the command's, and the ratios count both; on a shared
machine CPU seconds are the steadier measure, wall time is reported beside them.

Writes tests/perf/reports/import_nonempty.json. BEE_BENCH_ISSUES changes the size of each file, BEE_BENCH_ROUNDS the
rounds per measurement (the one with the least CPU counts: other work on a shared machine only ever adds time),
BEE_BENCH_BASELINE the baseline commit, BEE_BENCH_POSTGRES=0 leaves PostgreSQL out, BEE_BENCH_SQLITE=0 SQLite.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.harness.postgres import PostgresServer, binaries
from tests.perf._report import write_report
from tests.perf.beads_corpus import go_json, issues
from tests.perf.bench_transfer import baseline, extract
from tests.perf.peak import run_tracker

ISSUES = int(os.environ.get("BEE_BENCH_ISSUES", "20000"))
ROUNDS = int(os.environ.get("BEE_BENCH_ROUNDS", "3"))
TARGET = 2.0

#: Scenario -> (the file imported first, or None for an empty store; the file measured; the scenario compared with).
SCENARIOS: dict[str, tuple[str | None, str, str | None]] = {
    "empty": (None, "b", None),
    "other issues": ("a", "b", "empty"),
    "same issues": ("a", "a", "empty"),
    "tombstones": ("a-deleted", "b", "empty"),
    "a tenth, empty": (None, "b-tenth", None),
    "a tenth into other issues": ("a", "b-tenth", "a tenth, empty"),
}


def write_files(work: Path) -> dict[str, Path]:
    """A, B (``ISSUES`` issues each, different ids), B's first tenth and A's ids as tombstones."""
    records = list(issues(2 * ISSUES))
    files = {name: work / f"{name}.jsonl" for name in ("a", "b", "b-tenth", "a-deleted")}
    with (
        files["a"].open("w") as a,
        files["b"].open("w") as b,
        files["b-tenth"].open("w") as tenth,
        files["a-deleted"].open("w") as deleted,
    ):
        for n, record in enumerate(records):
            (a if n < ISSUES else b).write(go_json(record) + "\n")
            if ISSUES <= n < ISSUES + ISSUES // 10:
                tenth.write(go_json(record) + "\n")
            if n < ISSUES:
                gone = {"id": record["id"], "title": record["title"], "status": "tombstone"}
                deleted.write(go_json({**gone, "deleted_at": "2026-01-05T00:00:00Z", "deleted_by": "bench"}) + "\n")
    return files


def server_cpu(server: PostgresServer) -> float:
    """CPU seconds the server has used so far: the postmaster, its processes, and those that ended (a backend
    ends with its connection, and the postmaster reaps it)."""
    tick = os.sysconf("SC_CLK_TCK")
    postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        pid, ppid = int(entry.name), int(fields[1])
        if pid == postmaster:
            total += sum(int(f) for f in fields[11:15])  # utime, stime, and the reaped children's
        elif ppid == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total / tick


def scenario(
    setup: Path | None,
    measured: Path,
    env: dict[str, str],
    store: Callable[[], str],
    home: Path,
    server: PostgresServer | None,
) -> dict[str, Any]:
    """The import of ``measured`` with the least CPU (the command's and the server's) of ``ROUNDS``, each into a
    fresh store holding ``setup``."""
    samples = []
    for _ in range(ROUNDS):
        args = ["--home", str(home), "--store", store()]
        if setup is not None:
            done = run_tracker(["import", *args, str(setup)], env)
            if done["exit"] != 0:
                return {"setup failed": done}
        before = server_cpu(server) if server is not None else 0.0
        sample = run_tracker(["import", *args, str(measured)], env)
        if server is not None:
            sample["server_cpu_s"] = round(server_cpu(server) - before, 2)
        sample["total_cpu_s"] = round(sample["cpu_s"] + sample.get("server_cpu_s", 0.0), 2)
        samples.append(sample)
        shutil.rmtree(home, ignore_errors=True)
    chosen = min(samples, key=lambda s: (s["exit"] != 0, s["total_cpu_s"]))
    keys = ("wall_s", "cpu_s", "server_cpu_s", "total_cpu_s", "peak_mb")
    return {**chosen, "rounds": [{k: s[k] for k in keys if k in s} for s in samples]}


def ratios(runs: dict[str, Any]) -> dict[str, str]:
    """Each store-holding scenario's CPU seconds (the command's and the server's) and wall time against those of the
    scenario it is compared with, with the target's verdict on CPU seconds."""
    found = {}
    for name, run in runs.items():
        compared = SCENARIOS[name][2]
        if compared is None or compared not in runs or "wall_s" not in run:
            continue
        empty = runs[compared]
        cpu, wall = run["total_cpu_s"] / empty["total_cpu_s"], run["wall_s"] / empty["wall_s"]
        verdict = "met" if cpu <= TARGET else "NOT met"
        found[name] = f"CPU {cpu:.2f}x, wall {wall:.2f}x of {compared} (target CPU <= {TARGET}x: {verdict})"
    return found


def main() -> None:
    commit = baseline()
    with tempfile.TemporaryDirectory(prefix="bee-bench-nonempty-") as scratch:
        work = Path(scratch)
        files = write_files(work)
        file_bytes = files["a"].stat().st_size
        before_src = extract(commit, work / "baseline")
        path = os.pathsep.join([str(before_src), os.environ.get("PYTHONPATH", "")])
        versions = {"before": {**os.environ, "PYTHONPATH": path}, "after": {**os.environ}}
        counter = iter(range(1_000_000))
        stores: dict[str, Callable[[], str]] = {}
        if os.environ.get("BEE_BENCH_SQLITE", "1") == "1":
            stores["sqlite"] = lambda: str(work / f"store-{next(counter)}.db")
        server = None
        bindir = binaries()
        if bindir is not None and os.environ.get("BEE_BENCH_POSTGRES", "1") == "1":
            server = PostgresServer(bindir)
            server.start()
            stores["postgres"] = server.create_database
        results: dict[str, Any] = {}

        def report() -> dict[str, Any]:
            return {
                "issues_per_file": ISSUES,
                "file_bytes": file_bytes,
                "baseline": commit,
                "rounds": ROUNDS,
                "target": f"after, each store-holding scenario's CPU seconds <= {TARGET}x the empty store's",
                "ratios": {
                    store: {version: ratios(runs) for version, runs in by_version.items() if "empty" in runs}
                    for store, by_version in results.items()
                },
                "results": results,
            }

        try:
            for store_name, store in stores.items():
                for version, env in versions.items():
                    runs = results.setdefault(store_name, {}).setdefault(version, {})
                    for name, (setup, measured, _) in SCENARIOS.items():
                        source = files[setup] if setup else None
                        on = server if store_name == "postgres" else None
                        runs[name] = scenario(source, files[measured], env, store, work / "home", on)
                        write_report("import_nonempty", report())  # what is measured is kept, whatever comes next
        finally:
            if server is not None:
                server.stop()
            shutil.rmtree(work / "baseline", ignore_errors=True)
        final = report()
    written = write_report("import_nonempty", final)
    print(json.dumps(final["ratios"], indent=2))
    print(f"report: {written}")


if __name__ == "__main__":
    main()
