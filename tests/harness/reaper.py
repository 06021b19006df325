"""Run a command and report every process it left behind: ``python -m tests.harness.reaper REPORT -- COMMAND…``.

The runner makes itself a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``), so every process the command starts
— however it detaches: a new session, a new process group, a double fork — stays its descendant, and is reparented
to it when its own parent exits. Once the command has exited, the runner writes its live descendants to REPORT as
JSON (``{pid: command line}``), kills them, reaps them, and exits with the command's status.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36


def _reap() -> None:
    """Collect every child that has exited (zombies reparented here among them)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def descendants(root: int) -> dict[int, str]:
    """The live descendants of ``root``: pid → command line."""
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] in ("Z", "X"):
            continue
        parents[int(entry.name)] = int(fields[1])
        commands[int(entry.name)] = command.replace(b"\0", b" ").decode(errors="replace").strip()[:300]
    found: dict[int, str] = {}
    for pid in parents:
        ancestor = parents.get(pid)
        while ancestor is not None and ancestor not in (root, 0, 1):
            ancestor = parents.get(ancestor)
        if ancestor == root:
            found[pid] = commands[pid]
    return found


def _settled_descendants(rounds: int = 40, pause: float = 0.05) -> dict[int, str]:
    """The live descendants once two scans in a row agree.

    One scan of /proc is not a snapshot: a child that forks and exits while the scan runs can be read as a zombie
    after the listing was taken without its new child, and then neither is found (seen on a loaded machine).
    """
    _reap()
    seen = descendants(os.getpid())
    for _ in range(rounds):
        time.sleep(pause)
        _reap()
        again = descendants(os.getpid())
        if again == seen:
            break
        seen = again
    return seen


def main(argv: list[str]) -> int:
    report, separator, *command = argv
    if separator != "--" or not command:
        sys.exit("usage: python -m tests.harness.reaper REPORT -- COMMAND...")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")
    status = subprocess.call(command)
    left = _settled_descendants()
    Path(report).write_text(json.dumps({str(pid): line for pid, line in left.items()}))
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while descendants(os.getpid()) and time.monotonic() < deadline:
        _reap()
        time.sleep(0.05)
    _reap()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
