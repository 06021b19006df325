"""Capturing pages with the system Chromium: one browser and one page for every URL and viewport.

Screenshots go to a temporary folder beside the output folder, which is renamed into place only when every
capture succeeded, so an interrupted or failed run leaves nothing half-written where evidence is expected.
"""

from __future__ import annotations

import re
import secrets
import shutil
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bee_contracts import BeeError, ErrorCode, invalid
from bee_design import digests
from bee_design._version import __version__
from bee_design.capture.evidence import (
    EVIDENCE_FILE,
    NAME,
    PRODUCER,
    VIEWPORT_NAME,
    Capture,
    Evidence,
    Font,
    file_name,
)
from bee_design.capture.settings import FIXED_TIME, SCREENSHOT_STYLE, Settings, Viewport, executable_exists

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

#: Distinct font styles probed per page for the fonts the browser matched (one element each).
_FONT_PROBES: Final = 50

_SETTLE = """async () => {
  await document.fonts.ready;
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
}"""

# Marks one element per distinct computed font (and one more where the text is outside Latin-1, which may fall back
# to another font), so the browser can say which platform fonts it used for each.
_MARK_FONT_PROBES = """(limit) => {
  const seen = new Set();
  let count = 0;
  const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
  while (walker.nextNode() && count < limit) {
    const text = walker.currentNode;
    const element = text.parentElement;
    if (!element || !text.data.trim()) continue;
    const style = getComputedStyle(element);
    if (style.display === "none" || style.visibility === "hidden") continue;
    const wide = /[^\\u0000-\\u00ff]/.test(text.data) ? "|wide" : "";
    const key = [style.fontFamily, style.fontWeight, style.fontStyle, style.fontStretch].join("|") + wide;
    if (seen.has(key)) continue;
    seen.add(key);
    element.setAttribute("data-bee-font-probe", String(count++));
  }
  return count;
}"""


@dataclass(frozen=True)
class Target:
    """A page to capture and the name its screenshots go by."""

    name: str
    url: str


def parse_target(text: str) -> Target:
    """``NAME=URL`` or ``URL`` (the name is then the URL's path: ``/`` is ``index``, ``/a/b.html`` ``a/b.html``).

    Raises:
        BeeError: ``invalid_argument`` for a URL that is not http(s) or file, or a bad name.
    """
    name, sep, url = text.partition("=")
    if not sep or "://" in name:
        name, url = "", text
    if not re.match(r"^(https?|file)://", url):
        raise invalid(f"{url!r} is not an http(s):// or file:// URL; give URL or NAME=URL")
    if not name:
        path = re.sub(r"^[a-z]+://[^/]*", "", url).split("?", 1)[0].split("#", 1)[0].strip("/")
        name = re.sub(r"[^A-Za-z0-9._:/-]+", "-", path) or "index"
        if not re.match(r"[A-Za-z0-9_]", name):
            name = "_" + name
    if not NAME.match(name):
        raise invalid(
            f"capture name {name!r} is not valid; use letters, digits and . _ : / - (up to 255), e.g. home=URL"
        )
    return Target(name, url)


def parse_viewport(text: str) -> Viewport:
    """``NAME=WIDTHxHEIGHT``, e.g. ``desktop=1440x900``.

    Raises:
        BeeError: ``invalid_argument`` saying the expected form.
    """
    match = re.fullmatch(r"([^=]+)=(\d{1,5})x(\d{1,5})", text.strip())
    if not match or not VIEWPORT_NAME.match(match.group(1)):
        raise invalid(f"viewport {text!r} is not NAME=WIDTHxHEIGHT (e.g. desktop=1440x900, mobile=390x844)")
    width, height = int(match.group(2)), int(match.group(3))
    if not (1 <= width <= 16384 and 1 <= height <= 16384):
        raise invalid(f"viewport {text!r}: width and height must be 1–16384 pixels")
    return Viewport(match.group(1), width, height)


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
            HTTP error) or the awaited element never appears; ``deadline_exceeded`` when a page does not load in
            time. Nothing is left in ``out`` on failure.
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
        (partial / EVIDENCE_FILE).write_bytes(evidence.to_bytes(key))
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


def _run(targets: list[Target], settings: Settings, folder: Path, progress: Progress | None) -> Evidence:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    flags = settings.launch_flags()
    timeout_ms = settings.timeout_seconds * 1000
    total = len(targets) * len(settings.viewports)
    captures: list[Capture] = []
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(
                executable_path=settings.executable, args=flags, headless=True, timeout=timeout_ms
            )
        except PlaywrightError as exc:
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"Chromium at {settings.executable} did not start: {_first_line(exc)}",
                details={"browser": settings.executable},
            ) from None
        try:
            command_line = _command_line(browser)
            context = browser.new_context(**settings.context_options())
            page = context.new_page()
            page.clock.set_fixed_time(FIXED_TIME)
            for target in targets:
                for viewport in settings.viewports:
                    if progress is not None:
                        progress(len(captures), total, f"{target.name} @ {viewport.name}")
                    captures.append(_capture_one(context, page, target, viewport, settings=settings, folder=folder))
            if progress is not None:
                progress(total, total, "done")
            browser_facts = {
                "name": "chromium",
                "version": browser.version,
                "executable": settings.executable,
                "flags": flags,
                "commandLine": command_line,
            }
        finally:
            browser.close()
    return Evidence(
        producer=PRODUCER,
        version=__version__,
        captured_at=datetime.now(UTC).isoformat(timespec="seconds"),
        browser=browser_facts,
        settings=settings.to_json(),
        captures=tuple(captures),
    )


def _capture_one(
    context: BrowserContext, page: Page, target: Target, viewport: Viewport, *, settings: Settings, folder: Path
) -> Capture:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    started = time.perf_counter()
    timeout_ms = settings.timeout_seconds * 1000
    where = f"{target.url} (viewport {viewport.name})"
    page.set_viewport_size({"width": viewport.width, "height": viewport.height})
    try:
        response = page.goto(target.url, wait_until="load", timeout=timeout_ms)
    except PlaywrightTimeout:
        raise BeeError(
            ErrorCode.DEADLINE_EXCEEDED,
            f"{where} did not finish loading within {settings.timeout_seconds:g} s; raise --timeout or check the page",
            details={"url": target.url},
        ) from None
    except PlaywrightError as exc:
        reason = re.search(r"net::[A-Z_]+", str(exc))
        raise BeeError(
            ErrorCode.NOT_FOUND,
            f"{target.url} did not answer ({reason.group(0) if reason else _first_line(exc)}); is the server "
            "running and the URL right?",
            details={"url": target.url},
        ) from None
    if response is not None and response.status >= 400:
        raise BeeError(
            ErrorCode.NOT_FOUND,
            f"{target.url} answered HTTP {response.status}; capture a page that loads",
            details={"url": target.url, "status": response.status},
        )
    if settings.wait_for:
        try:
            page.wait_for_selector(settings.wait_for, state="visible", timeout=timeout_ms)
        except PlaywrightTimeout:
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"element {settings.wait_for!r} never appeared on {where} within {settings.timeout_seconds:g} s",
                details={"url": target.url, "selector": settings.wait_for},
            ) from None
        except PlaywrightError as exc:
            raise invalid(f"--wait-for {settings.wait_for!r} is not a valid selector ({_first_line(exc)})") from None
    page.evaluate(_SETTLE)
    png = page.screenshot(
        type="png",
        animations="disabled",
        caret="hide",
        scale="css",
        full_page=settings.full_page,
        style=SCREENSHOT_STYLE,
        timeout=timeout_ms,
    )
    fonts = _fonts(context, page)
    name = file_name(target.name, viewport.name)
    (folder / name).write_bytes(png)
    image_width, image_height = struct.unpack(">II", png[16:24])
    return Capture(
        name=target.name,
        url=target.url,
        viewport=viewport.name,
        width=viewport.width,
        height=viewport.height,
        file=name,
        sha256=digests.of_bytes(png),
        bytes=len(png),
        image_width=image_width,
        image_height=image_height,
        fonts=fonts,
        seconds=round(time.perf_counter() - started, 4),
    )


def _fonts(context: BrowserContext, page: Page) -> tuple[Font, ...]:
    """The platform fonts Chromium used for the page's text, one probe per distinct computed font."""
    if not page.evaluate(_MARK_FONT_PROBES, _FONT_PROBES):
        return ()
    session = context.new_cdp_session(page)
    try:
        session.send("DOM.enable")
        session.send("CSS.enable")
        root = session.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        probes = session.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-bee-font-probe]"})
        used: dict[tuple[str, str], dict[str, Any]] = {}
        for node in probes["nodeIds"]:
            for font in session.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]:
                key = (font["familyName"], font.get("postScriptName", ""))
                entry = used.setdefault(key, {"custom": bool(font.get("isCustomFont")), "glyphs": 0})
                entry["glyphs"] += int(font.get("glyphCount", 0))
    finally:
        session.detach()
    return tuple(Font(family, post, entry["custom"], entry["glyphs"]) for (family, post), entry in sorted(used.items()))


def _command_line(browser: Browser) -> str:
    """The browser's full command line as chrome://version shows it: the flags Playwright and the system's
    Chromium wrapper (Debian's /etc/chromium.d) add, besides Bee's."""
    from playwright.sync_api import Error as PlaywrightError

    page = browser.new_page()
    try:
        page.goto("chrome://version")
        return page.inner_text("#command_line").strip()
    except PlaywrightError:
        return ""
    finally:
        page.close()


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
