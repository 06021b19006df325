"""Spawning, watching and stopping one child process.

Three promises live here:

- **Children die with the supervisor.** On Linux each child asks the kernel, between fork and exec, for SIGKILL
  when its parent dies (``prctl(PR_SET_PDEATHSIG)``), and exits at once if the parent already died in that window.
  So even a supervisor killed with SIGKILL leaves no orphan. The signal follows the *thread* that forked, so
  children are spawned from the event loop's thread, which lives as long as the supervisor.
- **Stopping is bounded.** :func:`terminate` sends SIGTERM to the child's process group (each child leads its
  own, so helpers it started are included and a terminal's Ctrl-C reaches only the supervisor), waits up to the
  stop timeout, then sends SIGKILL.
- **No signal reaches a stranger.** The exit is observed through a pidfd, which becomes readable when the child
  ends; the child is reaped only after that, so the pid (and its group) cannot be reused while it is signalled.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

_PR_SET_PDEATHSIG = 1


@dataclass
class Child:
    """A running child process and the pipe ends the supervisor reads and writes."""

    popen: subprocess.Popen[bytes]
    #: Readable when the child ends (None where pidfds are unavailable: the exit is polled instead).
    pidfd: int | None
    #: The child's stdout and stderr together, or only its stderr when its stdout speaks a protocol.
    output: int
    #: For a stdio protocol: the child's stdout (read) and stdin (write) ends.
    protocol_out: int | None = None
    protocol_in: int | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    def close(self) -> None:
        """Release the supervisor's ends of the pipes and the pidfd."""
        for fd in (self.pidfd, self.output, self.protocol_out, self.protocol_in):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)


def _die_with_parent() -> Callable[[], None] | None:
    """The function the child runs between fork and exec, or None off Linux.

    Everything it needs is looked up here, in the parent: between fork and exec only this one thread exists, and
    it must not import or take locks another thread might have held at the fork.
    """
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    parent = os.getpid()
    kill = int(signal.SIGKILL)

    def in_child() -> None:
        if prctl(_PR_SET_PDEATHSIG, kill, 0, 0, 0) != 0:
            os._exit(126)
        if os.getppid() != parent:  # the supervisor died before the request took effect
            os._exit(126)

    return in_child


def spawn(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | None,
    pass_fds: Sequence[int] = (),
    stdio_protocol: bool = False,
) -> Child:
    """Start ``argv`` in its own process group, tied to the supervisor's life.

    With ``stdio_protocol`` the child's stdin and stdout are pipes the supervisor speaks a protocol over and only
    its stderr is output; otherwise stdin is /dev/null and stdout and stderr share one output pipe.

    Raises:
        OSError: the program could not be started (missing, not executable, a bad working directory).
    """
    read_output, write_output = os.pipe()
    protocol: tuple[int, int, int, int] | None = None
    try:
        if stdio_protocol:
            child_stdin, parent_stdin = os.pipe()
            parent_stdout, child_stdout = os.pipe()
            protocol = (child_stdin, parent_stdin, parent_stdout, child_stdout)
        popen = subprocess.Popen(  # noqa: S603 -- an argument list from the service file, never a shell
            list(argv),
            stdin=protocol[0] if protocol else subprocess.DEVNULL,
            stdout=protocol[3] if protocol else write_output,
            stderr=write_output,
            env=dict(env),
            cwd=cwd,
            pass_fds=tuple(pass_fds),
            start_new_session=True,
            preexec_fn=_die_with_parent(),  # noqa: PLW1509 -- only resolved ctypes and os calls run in the child
        )
    except BaseException:
        for fd in (read_output, *(protocol[1:3] if protocol else ())):
            os.close(fd)
        raise
    finally:
        os.close(write_output)
        if protocol:
            os.close(protocol[0])
            os.close(protocol[3])
    try:
        pidfd: int | None = os.pidfd_open(popen.pid)
    except (AttributeError, OSError):  # an old kernel or another platform: the exit is polled
        pidfd = None
    os.set_blocking(read_output, False)
    child = Child(popen, pidfd, read_output)
    if protocol:
        child.protocol_in, child.protocol_out = protocol[1], protocol[2]
        os.set_blocking(protocol[1], False)
        os.set_blocking(protocol[2], False)
    return child


async def wait_exit(child: Child) -> int:
    """Wait for the child to end, reap it, and return its exit code (negative: the signal that ended it)."""
    if child.pidfd is not None:
        await anyio.wait_readable(child.pidfd)
    else:
        while child.popen.poll() is None:
            await anyio.sleep(0.05)
    return child.popen.wait()


def signal_group(child: Child, signum: int) -> None:
    """Send ``signum`` to the child's process group (it has not been reaped, so the group is still its own)."""
    if child.popen.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signum)


async def terminate(child: Child, timeout: float) -> None:
    """SIGTERM to the child's group, then SIGKILL if it has not ended after ``timeout`` seconds.

    Returns once SIGKILL was sent (or at once, when the caller's scope is cancelled because the child ended); the
    exit itself is observed by :func:`wait_exit`.
    """
    signal_group(child, signal.SIGTERM)
    await anyio.sleep(timeout)
    signal_group(child, signal.SIGKILL)


async def read_lines(fd: int, *, max_line: int = 64 * 1024) -> AsyncIterator[bytes]:
    """The lines (without their newlines) read from the non-blocking ``fd`` until end of file.

    A line longer than ``max_line`` comes in pieces, so a child that never writes a newline cannot make the
    supervisor buffer without bound.
    """
    buffer = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            await anyio.wait_readable(fd)
            continue
        except OSError:
            chunk = b""
        if not chunk:
            if buffer:
                yield buffer
            return
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            yield line
        while len(buffer) > max_line:
            yield buffer[:max_line]
            buffer = buffer[max_line:]
