"""`bee setup-mcp`'s file edits: how long an edit takes as the file grows, and how many entries are lost when another
process saves the same file while Bee writes, under three ways of writing it.

- ``blind``: read, change, replace (what setup-mcp did before: a save landing meanwhile is lost);
- ``check``: the same, with the file compared with what was read just before the rename (no exchange);
- ``exchange``: Bee's way (``write_if_unchanged``): the check, then a renameat2 exchange that puts back a save
  landing between the check and the swap.

The other process saves the way a careful editor does (``write_if_unchanged``), so any loss is the writer's.

    .venv/bin/python -m tests.perf.bench_setup_mcp        # writes tests/perf/reports/setup_mcp.json
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bee_cli import jsonfile
from bee_cli.jsonedit import JsonText
from bee_cli.jsonfile import Place, rewrite
from bee_contracts import files
from tests.perf._report import median, write_report

EDITOR = r"""
import json, os, sys
from bee_contracts.files import write_if_unchanged
path, stop = sys.argv[1], sys.argv[2]
folder = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
k = 0
while not os.path.exists(stop):
    with open(path, "rb") as stream:
        raw = stream.read()
    document = json.loads(raw)
    document["mcpServers"][f"user-{k}"] = {"command": "tool"}
    if write_if_unchanged(folder, os.path.basename(path), json.dumps(document).encode(), expected=raw, mode=0o644):
        k += 1
print(k)
"""


def edit_seconds(entries: int, repeats: int = 7) -> float:
    """The median time of one setup-mcp edit (read, parse, splice, check, write) of a file with ``entries``."""
    times = []
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        servers = {f"user-{k}": {"command": "tool", "args": ["--n", str(k)], "timeout": 1e3} for k in range(entries)}
        for repeat in range(repeats):
            (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))
            started = time.perf_counter()
            rewrite(Place(root, ".mcp.json", "the project"), _adding(f"bee-{repeat}"), jsonc=False)
            times.append(time.perf_counter() - started)
    return median(times)


def _adding(name: str):
    def edit(document: JsonText | None) -> JsonText:
        assert document is not None
        document.put(("mcpServers", name), {"command": "/bin/bee", "args": ["mcp", "serve"]})
        return document

    return edit


def _blind(folder: int, name: str, data: bytes, **_: object) -> bool:
    files.write_atomic(Path(f"/proc/self/fd/{folder}").resolve() / name, data, mode=0o644)
    return True


def race(mode: str, writes: int) -> dict[str, int]:
    """Bee adds ``writes`` entries while the editor process adds its own; how many of each side's are missing."""
    real_write, real_libc = jsonfile.write_if_unchanged, files._libc_renameat2
    if mode == "blind":
        jsonfile.write_if_unchanged = _blind  # type: ignore[assignment]  # the old way, for comparison
    elif mode == "check":
        files._libc_renameat2 = lambda: None  # type: ignore[assignment]  # as on a system without renameat2
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            path, stop = root / ".mcp.json", root / "stop"
            path.write_text('{"mcpServers": {}}')
            editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(path), str(stop)], stdout=subprocess.PIPE)
            written = refused = 0
            for k in range(writes):
                try:
                    if rewrite(Place(root, ".mcp.json", "the project"), _adding(f"bee-{k}"), jsonc=False):
                        written += 1
                except jsonfile.ConfigFileError:
                    refused += 1
            stop.touch()
            saved = int(editor.communicate(timeout=120)[0])
            servers = json.loads(path.read_text())["mcpServers"]
    finally:
        jsonfile.write_if_unchanged, files._libc_renameat2 = real_write, real_libc  # type: ignore[assignment]
    return {
        "bee_writes": written,
        "bee_refused": refused,
        "bee_entries_lost": sum(1 for k in range(writes) if f"bee-{k}" not in servers) - refused,
        "editor_saves": saved,
        "editor_entries_lost": sum(1 for k in range(saved) if f"user-{k}" not in servers),
    }


def main() -> None:
    writes = int(os.environ.get("BEE_BENCH_WRITES", "400"))
    sizes = {str(n): round(edit_seconds(n) * 1000, 2) for n in (10, 100, 1200)}
    print("edit ms by entries:", sizes)
    races = {}
    for mode in ("blind", "check", "exchange"):
        races[mode] = race(mode, writes)
        print(mode, races[mode])
    path = write_report("setup_mcp", {"edit_ms_by_entries": sizes, "race": races, "bee_writes_per_mode": writes})
    print(path)


if __name__ == "__main__":
    main()
