"""`bee bd` start to answer, side by side in one run (`./dev bench cli`).

Each is a fresh process, as a script or an agent's shell runs it, timed from spawn to exit (answer printed), on one
SQLite store holding a real export (steveyegge__vc: 274 issues) and served by a real `bee tracker serve`:

- ``python``: a bare ``python -c pass`` (the floor of any Python command line);
- ``floor_stdlib``: ``python -c "import json, sqlite3"``, the least any command answering JSON from SQLite in Python
  loads; ``floor_click``: that and click, the least a click command line answering it loads;
- ``bee``: ``bee --help`` (the ``bee`` command's own start: its plugins loaded);
- ``ready_local``: ``bee bd ready --json`` on the local store (the one the issue's target is about), answered by the
  warm answerer (bee_cli.answerer), as every `bee bd` is unless ``BEE_WARM=0``; ``ready_local_cold`` the same in its
  own process (``BEE_WARM=0``); ``ready_local_one``: ``-n 1``, the first ready issue, warm;
- ``mcp_call``: a fresh ``python`` posting one 2026-07-28 ``tools/call`` of ``ready`` to the tracker with httpx (the
  least an MCP call from a new process costs);
- ``ready_remote``: ``bee bd --url … ready --json``, warm, and ``ready_remote_cold``;
- and the commands that read every issue: ``stats`` and ``blocked``, locally and over HTTP, and ``list``; ``stats``
  also on a store of 5,000 issues shaped like real exports (tests/perf/beads_corpus.py), to show how it grows.

Target (issue 28): ``ready_local`` within 1.5× of ``python``. The warm cases run against an answerer of the bench's
own (a private runtime folder), started by the untimed round and waited for before any timing. Every process reads
compiled bytecode, as an installed Bee does (its wheels are compiled at install): the processes write and read it
under a temporary ``PYTHONPYCACHEPREFIX``, whatever ``PYTHONDONTWRITEBYTECODE`` says, and one untimed round runs
first to write it.
Medians of RUNS (BEE_BENCH_RUNS). Writes tests/perf/reports/cli.json.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.harness.tracker import TrackerProcess
from tests.perf import beads_corpus
from tests.perf._report import median, verdict, write_report

RUNS = int(os.environ.get("BEE_BENCH_RUNS", "7"))
TARGET = 1.5
EXPORT = Path(__file__).resolve().parents[1] / "fixtures" / "beads" / "steveyegge__vc.jsonl"
#: The larger store's issues.
LARGE = 5000
BEE = str(Path(sys.executable).parent / "bee")

_POST = """
import sys, httpx
body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ready", "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}}
headers = {"Authorization": "Bearer " + sys.argv[2], "Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "ready"}
answer = httpx.post(sys.argv[1], json=body, headers=headers, timeout=60)
answer.raise_for_status()
print(answer.text[:100])
"""


def _answerer_ready(argv: list[str], env: dict[str, str]) -> None:
    """Wait until a warm command is answered by the answerer (its socket is there and answers)."""
    folder = Path(env["XDG_RUNTIME_DIR"]) / "bee"
    deadline = time.monotonic() + 120
    while not list(folder.glob("warm-*/answer-*.sock")):
        assert time.monotonic() < deadline, "the warm answerer did not start"
        time.sleep(0.1)
    _timed(argv, env)


def _timed(argv: list[str], env: dict[str, str]) -> float:
    environ = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env={**environ, **env}, timeout=600, check=False)
    elapsed = time.perf_counter() - start
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return elapsed


def _token_file(folder: Path, server: TrackerProcess) -> str:
    path = folder / f"token-{server.port}"
    path.write_text(server.token("bench@example.com"))
    path.chmod(0o600)
    return str(path)


def _imported(folder: Path, name: str, source: Path) -> str:
    store = str(folder / f"{name}.db")
    subprocess.run([BEE, "tracker", "import", "--store", store, str(source)], check=True, capture_output=True)
    return store


def main() -> None:
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        store = _imported(folder, "vc", EXPORT)
        beads_corpus.write_legacy(folder / "large.jsonl", LARGE)
        large = _imported(folder, "large", folder / "large.jsonl")
        server, server_large = TrackerProcess(folder / "home", store), TrackerProcess(folder / "home-large", large)
        runtime = Path(tempfile.mkdtemp(prefix="bb", dir="/tmp"))  # short: a socket's path is at most 107 bytes
        server.start()
        server_large.start()
        try:
            token = server.token("bench@example.com")
            local, remote = [BEE, "bd", "--store", store], [BEE, "bd", "--url", server.url]
            large_remote = [BEE, "bd", "--url", server_large.url, "--token-file", _token_file(folder, server_large)]
            env = {
                "BEE_TRACKER_TOKEN": token,
                "PYTHONPYCACHEPREFIX": str(folder / "pycache"),
                "BEE_WARM": "1",
                "XDG_RUNTIME_DIR": str(runtime),
                "BEE_ANSWER_IDLE_SECONDS": "30",
            }
            cold = {"BEE_WARM": "0"}
            cases: dict[str, list[str]] = {
                "python": [sys.executable, "-c", "pass"],
                "floor_stdlib": [sys.executable, "-c", "import json, sqlite3"],
                "floor_click": [sys.executable, "-c", "import click, json, sqlite3"],
                "bee": [BEE, "--help"],
                "ready_local": [*local, "ready", "--json"],
                "ready_local_cold": [*local, "ready", "--json"],
                "ready_local_one": [*local, "ready", "--json", "-n", "1"],
                "mcp_call": [sys.executable, "-c", _POST, server.url, token],
                "ready_remote": [*remote, "ready", "--json"],
                "ready_remote_cold": [*remote, "ready", "--json"],
                "list_local": [*local, "list", "--json"],
                "list_remote": [*remote, "list", "--json"],
                "blocked_local": [*local, "blocked", "--json"],
                "blocked_remote": [*remote, "blocked", "--json"],
                "stats_local": [*local, "stats", "--json"],
                "stats_remote": [*remote, "stats", "--json"],
                "stats_5k_local": [BEE, "bd", "--store", large, "stats", "--json"],
                "stats_5k_remote": [*large_remote, "stats", "--json"],
            }
            envs = {case: {**env, **cold} if case.endswith("_cold") else env for case in cases}
            samples: dict[str, list[float]] = {case: [] for case in cases}
            for case, argv in cases.items():  # untimed: writes the bytecode every later run reads
                _timed(argv, envs[case])
            _answerer_ready(cases["ready_local"], env)
            for _ in range(RUNS):  # the cases take turns, so a slow moment of the machine falls on all of them
                for case, argv in cases.items():
                    samples[case].append(_timed(argv, envs[case]))
        finally:
            server.stop()
            server_large.stop()
            shutil.rmtree(runtime, ignore_errors=True)  # its answerer sees its socket gone, and exits
    results: dict[str, Any] = {
        name: {"median_s": round(median(values), 4), "samples_s": [round(v, 4) for v in values]}
        for name, values in samples.items()
    }
    ratio = results["ready_local"]["median_s"] / results["python"]["median_s"]
    warm_over_cold = {
        name: round(results[name]["median_s"] / results[f"{name}_cold"]["median_s"], 3)
        for name in ("ready_local", "ready_remote")
    }
    over_bee = results["ready_local"]["median_s"] / results["bee"]["median_s"]
    floors = {
        name: round(results[name]["median_s"] / results["python"]["median_s"], 2)
        for name in ("floor_stdlib", "floor_click")
    }
    report = {
        "runs": RUNS,
        "issues": sum(1 for _ in EXPORT.open()),
        "targets": {"ready_local_over_python": TARGET},
        "results": results,
        "ratios": {
            "ready_local_over_python": round(ratio, 2),
            "ready_local_over_bee_help": round(over_bee, 2),
            "ready_local_one_over_python": round(
                results["ready_local_one"]["median_s"] / results["python"]["median_s"], 2
            ),
            "ready_local_cold_over_python": round(
                results["ready_local_cold"]["median_s"] / results["python"]["median_s"], 2
            ),
            **{f"{name}_warm_over_cold": value for name, value in warm_over_cold.items()},
            **{f"{name}_over_python": value for name, value in floors.items()},
        },
    }
    path = write_report("cli", report)
    for name, result in results.items():
        print(f"{name:18} {result['median_s']:.3f} s")
    print(f"bee bd ready --json / python -c pass: {verdict(ratio, TARGET, higher_is_better=False)}")
    print(f"bee bd ready --json / bee --help: {over_bee:.2f}x")
    print(f"report: {path}")


if __name__ == "__main__":
    main()
