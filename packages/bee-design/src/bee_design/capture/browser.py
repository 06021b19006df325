"""The Chromium a capture runs, and how it ends: closed when every capture is done, killed when one fails.

A page that stalls is not asked to close — a renderer whose main thread is busy may never answer — the browser is
killed, all of it:

- Playwright's driver starts the browser as the leader of a new session and process group, and the browser's
  zygotes, renderers and GPU and network services stay in that group: one ``killpg`` reaches them.
- Chromium's crash handler (``chrome_crashpad_handler``) daemonises out of the group (a double fork into a session
  of its own). It inherits the browser's environment, and Bee starts the browser with a variable of its own
  (:data:`MARK`, a fresh token per run), so the handler is found by that token in ``/proc/<pid>/environ``. (The
  zygotes and what they fork start from an environment Chromium builds, without the token; they stay in the group.)

Every process is killed through a pidfd opened *before* it is looked at, so a process that merely reused a number is
never signalled, and the group only while it has live members. :func:`kill` returns once no process of the group
and no marked process is left — waiting on the pidfds, not on time — or after :data:`_GONE_WITHIN` seconds, which
SIGKILL never needs. The browser's pid comes from the browser itself (the DevTools ``SystemInfo.getProcessInfo``),
while it is known to be running.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import select
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from bee_contracts import BeeError, ErrorCode

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

    from bee_design.capture.settings import Settings

#: The environment variable a capture's browser and its crash handler carry, set to that run's token.
MARK: Final = "BEE_CAPTURE_BROWSER"
#: Seconds a finished browser is given to close before it is killed.
CLOSE_GRACE: Final = 5.0
#: Seconds to wait for killed processes to be gone (SIGKILL cannot be refused; this only bounds the wait).
_GONE_WITHIN: Final = 10.0
_PROC: Final = Path("/proc")


@dataclass
class Chromium:
    """A running browser: Playwright's handle, its process group, and the token its processes carry."""

    browser: Browser
    #: The browser's process group, or None when it shares Bee's own (then the token alone finds its processes).
    group: int | None
    token: str
    #: The full command line, as chrome://version shows it (filled in once the browser has started).
    command_line: str = ""

    async def close(self) -> None:
        """Close the browser politely within :data:`CLOSE_GRACE` seconds, then make sure nothing of it is left."""
        try:
            # Whatever stops the polite close (a timeout, a browser already gone), the kill below ends the browser.
            with contextlib.suppress(Exception):
                async with asyncio.timeout(CLOSE_GRACE):
                    await self.browser.close()
        finally:
            self.kill()

    def kill(self) -> None:
        """SIGKILL every process of the browser and wait until none is left. Idempotent; never raises."""
        kill(self.group, self.token)


async def launch(playwright: Playwright, settings: Settings) -> Chromium:
    """Start the browser ``settings`` name with Bee's flags, and find its processes.

    Raises:
        BeeError: ``not_found`` when the browser does not start; ``unavailable`` when it does not say its pid.
    """
    from playwright.async_api import Error as PlaywrightError

    token = secrets.token_hex(8)
    try:
        browser = await playwright.chromium.launch(
            executable_path=settings.executable,
            args=settings.launch_flags(),
            headless=True,
            env={**os.environ, MARK: token},
            timeout=0,  # the caller's deadline bounds the launch
        )
    except PlaywrightError as exc:
        kill(None, token)
        raise BeeError(
            ErrorCode.NOT_FOUND,
            f"Chromium at {settings.executable} did not start: {first_line(exc)}",
            details={"browser": settings.executable},
        ) from None
    try:
        session = await browser.new_browser_cdp_session()
        info = await session.send("SystemInfo.getProcessInfo")
        await session.detach()
        pid = next(int(p["id"]) for p in info["processInfo"] if p.get("type") == "browser")
    except (PlaywrightError, StopIteration, KeyError, ValueError) as exc:
        await Chromium(browser, None, token).close()
        raise BeeError(
            ErrorCode.UNAVAILABLE,
            f"Chromium at {settings.executable} started but did not say its process id ({first_line(exc)})",
            details={"browser": settings.executable},
        ) from None
    group = _group_of(pid)
    # Never the group Bee itself is in: a browser without a group of its own is found by its token alone.
    return Chromium(browser, None if group in (None, os.getpgrp()) else group, token)


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def _stat(entry: Path) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses)."""
    try:
        stat = (entry / "stat").read_text()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2 :].split()


def kill(group: int | None, token: str) -> None:
    """SIGKILL the live processes of process group ``group`` and those whose environment carries ``MARK=token``,
    and wait until none is left (at most :data:`_GONE_WITHIN` seconds)."""
    deadline = time.monotonic() + _GONE_WITHIN
    while time.monotonic() < deadline:
        victims = _find(group, token)
        if not victims:
            return
        try:
            if group is not None:
                # Signalled only while it has live members (just found), so the id cannot have been reused.
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(group, signal.SIGKILL)
            for pidfd in victims:
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            _wait_exited(victims, deadline)
        finally:
            for pidfd in victims:
                os.close(pidfd)


def _find(group: int | None, token: str) -> list[int]:
    """Pidfds of the live processes in ``group`` or whose environment carries ``MARK=token``.

    Each pidfd is opened before the process is looked at, so what it refers to is the process that was checked.
    """
    if not _PROC.is_dir():
        return []  # without /proc nothing can be found: the browser's own close is all there is
    needle = f"{MARK}={token}".encode()
    found: list[int] = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            pidfd = os.pidfd_open(int(entry.name))
        except OSError:
            continue  # gone already
        if _is_victim(entry, group, needle):
            found.append(pidfd)
        else:
            os.close(pidfd)
    return found


def _is_victim(entry: Path, group: int | None, needle: bytes) -> bool:
    fields = _stat(entry)
    if fields is None or len(fields) < 3 or fields[0] in ("Z", "X"):
        return False  # gone, or dead already and waiting for its parent
    if group is not None and fields[2] == str(group):
        return True
    try:
        environ = (entry / "environ").read_bytes()
    except OSError:
        return False  # not ours to read, or gone
    return needle in environ.split(b"\0")


def _wait_exited(pidfds: list[int], deadline: float) -> None:
    """Wait until every pidfd is readable (its process has exited), or the deadline."""
    poller = select.poll()
    for pidfd in pidfds:
        poller.register(pidfd, select.POLLIN)
    waiting = len(pidfds)
    while waiting and (left := deadline - time.monotonic()) > 0:
        for pidfd, _ in poller.poll(left * 1000):
            poller.unregister(pidfd)
            waiting -= 1


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (Playwright appends call logs), or its class name."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else exc.__class__.__name__
