"""Import and export of 100,000 Beads issues, before and after, side by side in one run (`./dev bench transfer`).

The issues are real lines from tests/fixtures/beads with new ids (beads_corpus.py): about 1.1 KB each, with the
labels, dependencies and comments real exports have. Each run is one `bee tracker import` or `export` process (the
"before" one is the baseline commit's bee_tracker, extracted with git archive and put first on PYTHONPATH, driven
by its own CLI) on a fresh store; its wall time, CPU time (user + system of all its threads, from wait4) and peak
resident memory (the process's own VmHWM: see peak.py) are recorded. The legacy file is imported by both; the
backup directory only by the code that reads it. The "after" import of the legacy file is also run once with its
phases timed (inserts on the writer thread, the search index, and the rest: reading, parsing, checks and rows) to
say where the CPU goes.

Writes tests/perf/reports/transfer.json. BEE_BENCH_ISSUES changes the count, BEE_BENCH_BASELINE the baseline
commit (default: where this branch left main), BEE_BENCH_ROUNDS the rounds per measurement (the fastest counts:
other work on a shared machine only ever adds time). The machine is shared, so wall time is reported beside CPU
time; on a quiet machine the two agree.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.harness.postgres import PostgresServer, binaries
from tests.perf._report import write_report
from tests.perf.beads_corpus import write_backup, write_legacy
from tests.perf.peak import run_tracker

ROOT = Path(__file__).resolve().parents[2]

ISSUES = int(os.environ.get("BEE_BENCH_ISSUES", "100000"))
ROUNDS = int(os.environ.get("BEE_BENCH_ROUNDS", "1"))
TARGETS = {"import_s": 15.0, "import_peak_mb": 200.0, "export_s": 3.0}

#: Times the phases of one import in process (the "after" code only): which part of the CPU goes where.
_PHASES = """
import json, sys, time
from pathlib import Path
from bee_tracker.store import open_store, sources, sqlite
spent = {"inserts": 0.0, "search index": 0.0}
def timed(name, method):
    # the CPU of the calling thread only: inserts run on the import's writer thread while the main one parses
    def wrapper(*args, **kwargs):
        started = time.thread_time()
        try:
            return method(*args, **kwargs)
        finally:
            spent[name] += time.thread_time() - started
    return wrapper
sqlite._SqliteTx.load = timed("inserts", sqlite._SqliteTx.load)
sqlite._SqliteTx.resume_search_index = timed("search index", sqlite._SqliteTx.resume_search_index)
store = open_store(sys.argv[2])
started = time.process_time()
store.import_from(sources.choose(Path(sys.argv[1])))
total = time.process_time() - started
spent["reading, parsing, checks, rows (Python)"] = total - sum(spent.values())
print(json.dumps({"cpu_s": round(total, 2), **{k: round(v, 2) for k, v in spent.items()}}))
"""


def baseline() -> str:
    wanted = os.environ.get("BEE_BENCH_BASELINE")
    if wanted:
        return wanted
    found = subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True, check=True)
    return found.stdout.strip()


def extract(commit: str, into: Path) -> Path:
    """The baseline's bee_tracker sources under ``into``; returns the directory to put on PYTHONPATH."""
    archive = subprocess.run(
        ["git", "archive", commit, "packages/bee-tracker/src"], cwd=ROOT, capture_output=True, check=True
    )
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "packages" / "bee-tracker" / "src"


def best(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest of the rounds by CPU time (all must have succeeded), with every round's numbers kept."""
    chosen = min(samples, key=lambda s: (s["exit"] != 0, s["cpu_s"]))
    return {**chosen, "rounds": [{k: s[k] for k in ("wall_s", "cpu_s", "peak_mb")} for s in samples]}


def transfer(version: str, env: dict[str, str], store: Any, source: Path, work: Path) -> dict[str, Any]:
    """Import ``source`` into a fresh store, export it to a file: the numbers of both, and whether they match."""
    imports, exports = [], []
    out = work / f"out-{version}.jsonl"
    for round_number in range(ROUNDS):
        url = store(f"{version}-{round_number}")
        home = ["--home", str(work / f"home-{version}-{round_number}"), "--store", url]
        imports.append(run_tracker(["import", *home, str(source)], env))
        if imports[-1]["exit"] != 0:
            break
        exports.append(run_tracker(["export", *home, str(out)], env))
    result: dict[str, Any] = {"import": best(imports)}
    if exports:
        result["export"] = best(exports)
        if source.is_file():
            result["export_identical"] = filecmp.cmp(out, source, shallow=False)
        result["export_bytes"] = out.stat().st_size if out.exists() else 0
    return result


def verdicts(after: dict[str, Any]) -> dict[str, str]:
    found = {}
    for name, value in (
        ("import_s", after["import"]["cpu_s"]),
        ("import_peak_mb", after["import"]["peak_mb"]),
        ("export_s", after.get("export", {}).get("cpu_s", float("inf"))),
    ):
        target = TARGETS[name]
        found[name] = f"{value} (target <= {target}: {'met' if value <= target else 'NOT met'})"
    return found


def main() -> None:
    commit = baseline()
    with tempfile.TemporaryDirectory(prefix="bee-bench-transfer-") as scratch:
        work = Path(scratch)
        legacy = work / "issues.jsonl"
        backup = work / "backup"
        sizes = {"legacy_bytes": write_legacy(legacy, ISSUES), "backup_bytes": write_backup(backup, ISSUES)}
        before_src = extract(commit, work / "baseline")
        env_after = {**os.environ}
        env_before = {**os.environ, "PYTHONPATH": os.pathsep.join([str(before_src), os.environ.get("PYTHONPATH", "")])}
        stores: dict[str, Any] = {"sqlite": lambda name: str(work / f"{name}.db")}
        server = None
        bindir = binaries()
        if bindir is not None and os.environ.get("BEE_BENCH_POSTGRES", "1") == "1":
            server = PostgresServer(bindir)
            server.start()
            stores["postgres"] = lambda name: server.create_database()
        results: dict[str, Any] = {}

        def report() -> dict[str, Any]:
            after = results.get("sqlite", {}).get("legacy file, after")
            return {
                "issues": ISSUES,
                "baseline": commit,
                "rounds": ROUNDS,
                **sizes,
                "targets (after, SQLite, legacy file; CPU seconds)": verdicts(after) if after else {},
                "results": results,
            }

        try:
            for store_name, store in stores.items():
                runs = results.setdefault(store_name, {})
                for name, version, env, source in (
                    ("legacy file, before", "before", env_before, legacy),
                    ("legacy file, after", "after", env_after, legacy),
                    ("backup directory, after", "after-backup", env_after, backup),
                ):
                    runs[name] = transfer(version, env, store, source, work)
                    write_report("transfer", report())  # what is measured is kept, whatever comes next
            phases = subprocess.run(
                [sys.executable, "-c", _PHASES, str(legacy), str(work / "phases.db")],
                capture_output=True,
                text=True,
                check=False,
            )
            where = "legacy file, after: where the import's CPU goes"
            results["sqlite"][where] = json.loads(phases.stdout) if phases.returncode == 0 else phases.stderr[-600:]
        finally:
            if server is not None:
                server.stop()
            shutil.rmtree(work / "baseline", ignore_errors=True)
    final = report()
    path = write_report("transfer", final)
    print(json.dumps(final, indent=2))
    print(f"report: {path}")


if __name__ == "__main__":
    main()
