"""One supervisor per state folder: an exclusive ``flock`` on ``supervisor.lock``, which holds the owner's pid.

The kernel releases the lock when its holder dies, however it dies, so a stale file never blocks a new
supervisor; the pid written into it lets a refusal name the one already running and lets `bee supervise stop`
signal it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from bee_contracts import BeeError, ErrorCode

LOCK_FILE = "supervisor.lock"


class StateLock:
    """The held lock on a state folder; :meth:`release` (or the process's end) gives it up."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock and write this process's pid into the file.

        Raises:
            BeeError: ``conflict`` naming the pid of the supervisor that holds it; ``invalid_argument`` when the
                folder cannot be created or written.
        """
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise BeeError(
                ErrorCode.INVALID_ARGUMENT,
                f"cannot use the state folder {self.folder}: {exc.strerror or exc}",
                details={"state": str(self.folder)},
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _read_pid(fd)
            os.close(fd)
            who = f"pid {pid}" if pid else "another process"
            raise BeeError(
                ErrorCode.CONFLICT,
                f"another supervisor ({who}) is already running on the state folder {self.folder}; stop it with "
                f"`bee supervise stop`, or give this one its own state folder",
                details={"state": str(self.folder), "pid": pid},
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing the descriptor drops the lock
            self._fd = None


def _read_pid(fd: int) -> int | None:
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


def running_pid(folder: Path) -> int | None:
    """The pid of the supervisor holding ``folder``'s lock, or None when none holds it."""
    return holder_pid(folder / LOCK_FILE)


def holder_pid(path: Path) -> int | None:
    """The pid written in the lock file ``path`` while a process holds its ``flock`` (-1 when it wrote none), or
    None when none holds it: a supervisor's, or `bee bd`'s warm answerer's (``answer-….lock``)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_pid(fd) or -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
