"""Capturing pages with the system Chromium: one browser and one page for every URL and viewport.

Each page at each viewport is captured within ``--timeout`` (:mod:`.page`); when one fails or stalls, the browser's
whole process group is killed (:mod:`.browser`) and the run ends. Screenshots go to a temporary folder beside the
output folder, which is renamed into place only when every capture succeeded, so a failed, stalled or interrupted
run leaves nothing where evidence is expected.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bee_contracts import BeeError, ErrorCode, invalid
from bee_contracts.files import write_atomic
from bee_design._version import __version__
from bee_design.capture.browser import CLOSE_GRACE, Chromium, launch
from bee_design.capture.evidence import EVIDENCE_FILE, PRODUCER, Capture, Evidence, file_name
from bee_design.capture.page import capture_page
from bee_design.capture.settings import FIXED_TIME, Settings, executable_exists
from bee_design.capture.steps import collect
from bee_design.capture.targets import Target

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

#: Seconds the browser may take to start (a busy machine can take many; a page's own deadline starts after).
LAUNCH_SECONDS: Final = 60.0


Progress = Callable[[int, int, str], None]


def capture(
    targets: list[Target],
    settings: Settings,
    out: Path,
    *,
    key: bytes | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> Evidence:
    """Capture every target at every viewport into the evidence folder ``out``; ``evidence.json`` is sealed with
    the root's evidence ``key`` (:mod:`.seal`; `bee design capture` always passes it).

    Raises:
        BeeError: ``invalid_argument`` for duplicate names or viewports; ``conflict`` when ``out`` exists and
            ``force`` is not set; ``not_found`` when the browser is missing, a URL does not answer (or answers an
            HTTP error) or the awaited element never appears; ``deadline_exceeded`` naming the page, viewport and
            step when a capture does not finish within ``settings.timeout_seconds``; ``forbidden`` when a page goes
            to another origin and ``settings.allow_cross_origin`` is not set. Nothing is left in ``out`` on
            failure, and no process of the browser outlives the call.
    """
    _check_plan(targets, settings)
    if out.exists() and not force:
        raise BeeError(
            ErrorCode.CONFLICT,
            f"{out} already exists; choose another --out, or pass --force to replace it",
            details={"out": str(out)},
        )
    if not executable_exists(settings.executable):
        raise BeeError(
            ErrorCode.NOT_FOUND,
            f"no browser at {settings.executable}; install Debian's chromium package (apt-get install chromium), "
            "or pass --browser PATH",
            details={"browser": settings.executable},
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.parent / f".{out.name}.partial-{secrets.token_hex(4)}"
    partial.mkdir()
    try:
        evidence = _run(targets, settings, partial, progress)
        write_atomic(partial / EVIDENCE_FILE, evidence.to_bytes(key), mode=0o644)
        _move_into_place(partial, out)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return evidence


def _check_plan(targets: list[Target], settings: Settings) -> None:
    if not targets:
        raise invalid("give at least one URL to capture")
    if not settings.viewports:
        raise invalid("give at least one --viewport NAME=WIDTHxHEIGHT")
    names = [v.name for v in settings.viewports]
    for viewport in set(names):
        if names.count(viewport) > 1:
            raise invalid(f"viewport {viewport!r} is given twice; name each viewport once")
    files: dict[str, str] = {}
    for target in targets:
        stem = file_name(target.name, "")
        if stem in files:
            raise invalid(
                f"pages {files[stem]!r} and {target.name!r} would share screenshot files; name them apart with NAME=URL"
            )
        files[stem] = target.name


def _move_into_place(partial: Path, out: Path) -> None:
    if out.exists():
        retired = out.parent / f".{out.name}.old-{secrets.token_hex(4)}"
        out.rename(retired)
        partial.rename(out)
        shutil.rmtree(retired, ignore_errors=True)
    else:
        partial.rename(out)
    # The rename is the moment the evidence exists; it is durable once the folder's entry is on disk.
    directory = os.open(out.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _run(targets: list[Target], settings: Settings, folder: Path, progress: Progress | None) -> Evidence:
    return asyncio.run(_session(targets, settings, folder, progress))


async def _session(targets: list[Target], settings: Settings, folder: Path, progress: Progress | None) -> Evidence:
    """One browser for every capture: started within the timeout, killed when any capture fails."""
    from playwright.async_api import async_playwright

    total = len(targets) * len(settings.viewports)
    captures: list[Capture] = []
    abandoned: set[asyncio.Future[Any]] = set()
    async with async_playwright() as playwright:
        chromium = await _start(playwright, settings)
        try:
            browser = chromium.browser
            context = await browser.new_context(**settings.context_options())
            page = await context.new_page()
            await page.clock.set_fixed_time(FIXED_TIME)
            for target in targets:
                for viewport in settings.viewports:
                    if progress is not None:
                        progress(len(captures), total, f"{target.name} @ {viewport.name}")
                    shot = capture_page(
                        context, page, target, viewport, settings=settings, folder=folder, abandoned=abandoned
                    )
                    captures.append(await shot)
            if progress is not None:
                progress(total, total, "done")
            browser_facts = {
                "name": "chromium",
                "version": browser.version,
                "executable": settings.executable,
                "flags": settings.launch_flags(),
                "commandLine": chromium.command_line,
            }
        except BaseException:
            chromium.kill()
            await collect(abandoned, CLOSE_GRACE)
            raise
        await chromium.close()
    return Evidence(
        producer=PRODUCER,
        version=__version__,
        captured_at=datetime.now(UTC).isoformat(timespec="seconds"),
        browser=browser_facts,
        settings=settings.to_json(),
        captures=tuple(captures),
    )


async def _start(playwright: Playwright, settings: Settings) -> Chromium:
    """Launch the browser and read its command line, within :data:`LAUNCH_SECONDS` (or the timeout, when longer).

    Raises:
        BeeError: ``deadline_exceeded`` when the browser does not start in time; what :func:`browser.launch` raises.
    """
    seconds = max(settings.timeout_seconds, LAUNCH_SECONDS)
    timer = asyncio.timeout(seconds)
    chromium: Chromium | None = None
    try:
        async with timer:
            chromium = await launch(playwright, settings)
            chromium.command_line = await _command_line(chromium.browser)
    except BaseException as exc:
        if chromium is not None:
            chromium.kill()
        if isinstance(exc, TimeoutError) and timer.expired():
            raise BeeError(
                ErrorCode.DEADLINE_EXCEEDED,
                f"Chromium at {settings.executable} did not start within {seconds:g} s; it was stopped and nothing "
                "was captured",
                details={"browser": settings.executable, "timeoutSeconds": seconds},
            ) from None
        raise
    return chromium


async def _command_line(browser: Browser) -> str:
    """The browser's full command line as chrome://version shows it: the flags Playwright and the system's
    Chromium wrapper (Debian's /etc/chromium.d) add, besides Bee's."""
    from playwright.async_api import Error as PlaywrightError

    page = await browser.new_page()
    try:
        await page.goto("chrome://version")
        return (await page.inner_text("#command_line")).strip()
    except PlaywrightError:
        return ""
    finally:
        await page.close()
