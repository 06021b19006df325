"""The Chromium a capture runs, and how it ends: closed when every capture is done, killed when one fails.

A page that stalls is not asked to close — a renderer whose main thread is busy may never answer — the browser is
killed, all of it:

- Playwright's driver starts the browser as the leader of a new session and process group, and the browser's
  zygotes, renderers and GPU and network services stay in that group: one ``killpg`` reaches them.
- Chromium's crash handler (``chrome_crashpad_handler``) daemonises out of the group. Every process of the browser
  inherits its environment, and Bee starts it with a variable of its own (:data:`MARK`, a fresh token per run), so
  the handler is found by that token in ``/proc/<pid>/environ`` and killed through a pidfd opened *before* the
  environment is read — a process that merely reused the number is never signalled.

:meth:`Chromium.kill` returns only once neither a process of the group nor a marked process is left (or after
:data:`_GONE_WITHIN` seconds, which SIGKILL never needs). The browser's pid comes from the browser itself (the
DevTools ``SystemInfo.getProcessInfo``) while it is known to be running.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from bee_contracts import BeeError, ErrorCode

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

    from bee_design.capture.settings import Settings

#: The environment variable every process of a capture's browser carries, set to that run's token.
MARK: Final = "BEE_CAPTURE_BROWSER"
#: Seconds a finished browser is given to close before it is killed.
CLOSE_GRACE: Final = 5.0
#: Seconds to wait for killed processes to be gone (SIGKILL cannot be refused; this only bounds the wait).
_GONE_WITHIN: Final = 10.0
_PROC: Final = Path("/proc")


@dataclass
class Chromium:
    """A running browser: Playwright's handle, its pid and process group, and the token its processes carry."""

    browser: Browser
    pid: int
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
        deadline = time.monotonic() + _GONE_WITHIN
        while time.monotonic() < deadline:
            # The group is signalled only while it has live members, so its id cannot have been reused meanwhile.
            grouped = self.group is not None and _live_members(self.group)
            if grouped and self.group is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.group, signal.SIGKILL)
            marked = _kill_marked(self.token)
            if not grouped and not marked:
                return
            time.sleep(0.01)


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
        _kill_marked(token)
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
        Chromium(browser, 0, None, token).kill()
        raise BeeError(
            ErrorCode.UNAVAILABLE,
            f"Chromium at {settings.executable} started but did not say its process id ({first_line(exc)})",
            details={"browser": settings.executable},
        ) from None
    group = _group_of(pid)
    # Never the group Bee itself is in: a browser without a group of its own is found by its token alone.
    return Chromium(browser, pid, None if group in (None, os.getpgrp()) else group, token)


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


def _pids() -> list[Path]:
    if not _PROC.is_dir():
        return []  # without /proc, the group is killed once and not watched
    return [entry for entry in _PROC.iterdir() if entry.name.isdigit() and int(entry.name) != os.getpid()]


def _live_members(group: int) -> bool:
    """Whether process group ``group`` has a live process (zombies are dead already, waiting for their parent)."""
    for entry in _pids():
        fields = _stat(entry)
        if fields is not None and len(fields) > 2 and fields[0] not in ("Z", "X") and fields[2] == str(group):
            return True
    return False


def _kill_marked(token: str) -> bool:
    """SIGKILL every live process whose environment carries ``MARK=token``; whether there was any."""
    needle = f"{MARK}={token}".encode()
    found = False
    for entry in _pids():
        try:
            pidfd = os.pidfd_open(int(entry.name))
        except OSError:
            continue  # gone already
        try:
            fields = _stat(entry)
            if fields is None or fields[0] in ("Z", "X"):
                continue
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue  # not ours to read, or gone
            if needle in environ.split(b"\0"):
                found = True
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        finally:
            os.close(pidfd)
    return found


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (Playwright appends call logs), or its class name."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else exc.__class__.__name__
