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


def main(argv: list[str]) -> int:
    report, separator, *command = argv
    if separator != "--" or not command:
        sys.exit("usage: python -m tests.harness.reaper REPORT -- COMMAND...")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")
    status = subprocess.call(command)
    _reap()
    left = descendants(os.getpid())
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
