"""`bee setup-mcp` while an editor saves the same file: no entry the editor or Bee added is ever lost.

A second process plays the editor: it adds ``user-0``, ``user-1``, … to ``.mcp.json``, one per save, each save
made the way a careful editor makes it (read, change, write only over what it read: the same
``write_if_unchanged`` Bee uses, so any entry lost is Bee's doing). Meanwhile `bee setup-mcp` runs again and again,
each run from a registry with one more stdio host, so each run adds an entry of its own (``bee-h0``, ``bee-h1``, …).
At the end every entry either side added must be in the file. A run may be refused (the file kept changing); it
must then have written nothing, and it is counted.
"""

import json
import os
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from click.testing import CliRunner

from bee_cli import make_cli
from bee_cli.commands import register as register_cli
from bee_contracts import hosts as registry
from bee_contracts.hosts import HostEntry

SAVES = int(os.environ.get("BEE_RELIABILITY_SAVES", "1200"))

EDITOR = r"""
import json, os, sys
from bee_contracts.files import write_if_unchanged

path, saves = sys.argv[1], int(sys.argv[2])
folder = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
name = os.path.basename(path)
retries = 0
for k in range(saves):
    while True:
        with open(path, "rb") as stream:
            raw = stream.read()
        document = json.loads(raw)
        document["mcpServers"][f"user-{k}"] = {"command": "tool", "args": [str(k)]}
        if write_if_unchanged(folder, name, json.dumps(document, indent=2).encode(), expected=raw, mode=0o644):
            break
        retries += 1
print(retries)
"""


@pytest.mark.timeout(900)  # a shared 2-core machine, two processes rewriting a growing file
def test_an_editor_saving_while_setup_mcp_writes_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record_property: Callable[[str, object], None]
) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    path = project / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"theirs": {"command": "x"}}}, indent=2))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("BEE_TRACKER_URL", raising=False)
    module = sys.modules[__name__]
    points: list[EntryPoint] = []
    monkeypatch.setattr(registry, "entry_points", lambda group: list(points))
    cli = make_cli([register_cli])

    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(path), str(SAVES)], stdout=subprocess.PIPE, text=True)
    written, refused, runs = [], 0, 0
    try:
        while editor.poll() is None:
            host = HostEntry(f"h{runs}", "stdio", ("h", "serve", "{checkout}"), "mcp")
            monkeypatch.setattr(module, f"HOST_{runs}", host, raising=False)
            points.append(EntryPoint(name=host.name, value=f"{__name__}:HOST_{runs}", group=registry.ENTRY_POINT_GROUP))
            result = CliRunner().invoke(cli, ["setup-mcp", "--tool", "claude", "--project", str(project)])
            if result.exit_code == 0:
                written.append(f"bee-h{runs}")
            else:
                assert "another program kept saving it" in result.output, result.output
                refused += 1
            runs += 1
        editor_retries = int(editor.communicate(timeout=60)[0])
    finally:
        editor.kill()
        editor.wait()
    assert editor.returncode == 0

    servers = json.loads(path.read_text())["mcpServers"]
    missing_user = [f"user-{k}" for k in range(SAVES) if f"user-{k}" not in servers]
    missing_bee = [name for name in written if name not in servers]
    record_property("setup_mcp_runs", runs)
    record_property("setup_mcp_refused", refused)
    record_property("editor_retries", editor_retries)
    print(f"{runs} setup-mcp runs ({refused} refused), {SAVES} editor saves ({editor_retries} retried)")
    assert runs > 10, "setup-mcp barely ran while the editor saved; the test proved nothing"
    assert written, "every setup-mcp run was refused: none of Bee's entries was at stake"
    assert "theirs" in servers
    assert missing_user == [], f"setup-mcp lost {len(missing_user)} of the editor's {SAVES} entries"
    assert missing_bee == [], f"{len(missing_bee)} of setup-mcp's {len(written)} entries are gone"
    assert not [name for name in os.listdir(project) if name.endswith(".tmp")], "a temporary file was left behind"
