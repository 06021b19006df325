"""`bee setup-mcp`'s file edits: how long an edit takes as the file grows, and how many entries are lost when another
process saves the same file while Bee writes, under three ways of writing it.

- ``blind``: read, change, replace (what setup-mcp did before: a save landing meanwhile is lost);
- ``check``: the same, with the file compared with what was read just before the rename (no exchange);
- ``exchange``: Bee's way (``write_if_unchanged``): the check, then a renameat2 exchange that puts back a save
  landing between the check and the swap.

The other process saves the way a careful editor does (``write_if_unchanged``), so any loss is the writer's. The
race is run twice: on an editor's growing file through setup-mcp's own edit, and on a tiny file two processes
update as fast as they can (where the instant between the check and the rename is hit most often).

    ./dev bench setup_mcp        # writes tests/perf/reports/setup_mcp.json
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bee_cli import jsonfile
from bee_cli.jsonedit import JsonText
from bee_cli.jsonfile import Place, rewrite
from bee_contracts import files
from tests.perf._report import median, write_report

EDITOR = r"""
import json, os, sys
from bee_contracts.files import write_if_unchanged
path, saves = sys.argv[1], int(sys.argv[2])
folder = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
k = 0
while k < saves:
    with open(path, "rb") as stream:
        raw = stream.read()
    document = json.loads(raw)
    document["mcpServers"][f"user-{k}"] = {"command": "tool"}
    if write_if_unchanged(folder, os.path.basename(path), json.dumps(document).encode(), expected=raw, mode=0o644):
        k += 1
print(k)
"""


COUNTER = r"""
import json, os, sys
from bee_contracts.files import write_if_unchanged
path, stop = sys.argv[1], sys.argv[2]
folder = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
saved = 0
while not os.path.exists(stop):
    with open(path, "rb") as stream:
        raw = stream.read()
    document = json.loads(raw)
    document["theirs"] += 1
    if write_if_unchanged(folder, os.path.basename(path), json.dumps(document).encode(), expected=raw, mode=0o644):
        saved += 1
print(saved)
"""


def counters(mode: str, writes: int) -> dict[str, int]:
    """Both sides increment a counter of their own in one small file, as fast as they can: each lost update is a
    count missing at the end. The narrow window between the check and the rename is hit far more often here."""
    real_libc = files._libc_renameat2
    if mode == "check":
        files._libc_renameat2 = lambda: None  # type: ignore[assignment]  # as on a system without renameat2
    try:
        with tempfile.TemporaryDirectory() as name:
            root = Path(name)
            path, stop = root / "f.json", root / "stop"
            path.write_text('{"ours": 0, "theirs": 0}')
            other = subprocess.Popen([sys.executable, "-c", COUNTER, str(path), str(stop)], stdout=subprocess.PIPE)
            folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
            ours = kept_aside = 0
            try:
                while ours < writes:
                    raw = path.read_bytes()
                    document = json.loads(raw)
                    document["ours"] += 1
                    data = json.dumps(document).encode()
                    if mode == "blind":
                        files.write_atomic(path, data, mode=0o644)
                        ours += 1
                    else:
                        try:
                            if files.write_if_unchanged(folder, "f.json", data, expected=raw, mode=0o644):
                                ours += 1
                        except files.KeptAside as aside:
                            # Two saves of theirs in the instant of the swap: ours did not land, one of theirs is
                            # beside the file (its count is in the later one). Counted, cleared, and read again.
                            kept_aside += 1
                            os.unlink(aside.name, dir_fd=folder)
            finally:
                os.close(folder)
                stop.touch()
            theirs = int(other.communicate(timeout=120)[0])
            final = json.loads(path.read_text())
    finally:
        files._libc_renameat2 = real_libc
    return {
        "bee_writes": ours,
        "bee_updates_lost": ours - final["ours"],
        "other_writes": theirs,
        "other_updates_lost": theirs - final["theirs"],
        "kept_aside": kept_aside,
    }


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


def _adding(name: str) -> Callable[[JsonText | None], JsonText]:
    def edit(document: JsonText | None) -> JsonText:
        assert document is not None
        document.put(("mcpServers", name), {"command": "/bin/bee", "args": ["mcp", "serve"]})
        return document

    return edit


def _blind(
    folder: int, name: str, data: bytes, *, expected: bytes | None, mode: int, owner: tuple[int, int] | None = None
) -> bool:
    """The old write, without the check: whatever the file holds now is replaced. Takes ``write_if_unchanged``'s
    arguments, as it stands in for it."""
    del expected, mode, owner
    files.write_atomic(Path(f"/proc/self/fd/{folder}").resolve() / name, data, mode=0o644)
    return True


def race(mode: str, saves: int) -> dict[str, int]:
    """Bee adds entries for as long as the editor process makes ``saves`` of its own; how many of each side's are
    missing at the end."""
    # jsonfile's rewrite calls write_if_unchanged by the name it imported it under, so that name is the one replaced;
    # the function itself is bee_contracts.files's.
    real_write, real_libc = files.write_if_unchanged, files._libc_renameat2
    if mode == "blind":
        # The old way, for comparison. attr-defined: the name is jsonfile's import, not part of its interface.
        jsonfile.write_if_unchanged = _blind  # type: ignore[attr-defined]  # jsonfile's import, as said above
    elif mode == "check":
        files._libc_renameat2 = lambda: None  # type: ignore[assignment]  # as on a system without renameat2
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            path = root / ".mcp.json"
            path.write_text('{"mcpServers": {}}')
            editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(path), str(saves)], stdout=subprocess.PIPE)
            written = refused = tries = 0
            while editor.poll() is None:
                try:
                    if rewrite(Place(root, ".mcp.json", "the project"), _adding(f"bee-{tries}"), jsonc=False):
                        written += 1
                except jsonfile.ConfigFileError:
                    refused += 1
                tries += 1
            saved = int(editor.communicate(timeout=120)[0])
            servers = json.loads(path.read_text())["mcpServers"]
    finally:
        files._libc_renameat2 = real_libc
        jsonfile.write_if_unchanged = real_write  # type: ignore[attr-defined]  # as above: jsonfile's import
    return {
        "bee_writes": written,
        "bee_refused": refused,
        "bee_entries_lost": sum(1 for k in range(tries) if f"bee-{k}" not in servers) - refused,
        "editor_saves": saved,
        "editor_entries_lost": sum(1 for k in range(saved) if f"user-{k}" not in servers),
    }


def main() -> None:
    saves = int(os.environ.get("BEE_BENCH_SAVES", "600"))
    sizes = {str(n): round(edit_seconds(n) * 1000, 2) for n in (10, 100, 1200)}
    print("edit ms by entries:", sizes, flush=True)
    races = {}
    for mode in ("blind", "check", "exchange"):
        races[mode] = race(mode, saves)
        print(mode, races[mode], flush=True)
    writes = int(os.environ.get("BEE_BENCH_COUNTER_WRITES", "5000"))
    tight = {}
    for mode in ("blind", "check", "exchange"):
        tight[mode] = counters(mode, writes)
        print("counters", mode, tight[mode], flush=True)
    report = {
        "edit_ms_by_entries": sizes,
        "race": races,
        "editor_saves_per_mode": saves,
        "counters": tight,
        "counter_writes_per_mode": writes,
    }
    path = write_report("setup_mcp", report)
    print(path)


if __name__ == "__main__":
    main()
