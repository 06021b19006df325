"""What `bee bd ready --json` loads before it answers: its own group and the store's read path, not the `bee`
command's plugins, the warm front end, or the store's import and export code (their cost is the command's start;
tests/perf/bench_cli.py measures it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.tracker.bd.run import bd

#: Loaded only by what `bee bd ready` does not do: find plugins by entry point (importlib.metadata), relay a stdio
#: host (the front end), build the root group, import or export Beads files, read the audit log, speak MCP.
NOT_FOR_READING = (
    "importlib.metadata",
    "bee_cli.group",
    "bee_cli.frontend",
    "bee_tracker.store.importing",
    "bee_tracker.store.backup",
    "bee_tracker.store.transfer",
    "bee_tracker.store.export",
    "bee_tracker.store.audit",
    "mcp",
    "pydantic",
    "httpx",
    "rich",
)

_RUN = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(m for m in {names!r} if m in sys.modules)), file=sys.stderr))
from bee_cli.main import main
main(["bd", "--store", {store!r}, "ready", "--json"])
"""


def test_bee_bd_ready_goes_straight_to_its_group_and_the_read_path(tmp_path: Path) -> None:
    store = str(tmp_path / "t.db")
    made = bd("create", "Ready", "--silent", store=store).stdout.strip()
    code = _RUN.format(names=NOT_FOR_READING, store=store)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert [issue["id"] for issue in json.loads(done.stdout)] == [made]
    assert json.loads(done.stderr.splitlines()[-1]) == []
    assert done.stdout == bd("ready", "--json", store=store).stdout  # the answer the root group's bd gives


def test_the_direct_way_answers_as_the_root_group_does(tmp_path: Path) -> None:
    """Help, usage errors and failures: the same bytes and exit code as `bee bd` built by the root group with every
    plugin, each run as a process."""
    bee = str(Path(sys.executable).parent / "bee")
    for argv in (["bd", "frobnicate"], ["bd", "--home", str(tmp_path / "none"), "ready"], ["bd", "--help"]):
        direct = subprocess.run([bee, *argv], capture_output=True, text=True, timeout=120, check=False)
        code = f"from bee_cli.group import run; run({argv!r})"
        rooted = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
        assert (direct.returncode, direct.stdout, direct.stderr) == (rooted.returncode, rooted.stdout, rooted.stderr)
