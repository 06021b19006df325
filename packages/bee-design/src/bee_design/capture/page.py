"""Capturing one page at one viewport: navigate, settle, screenshot, read the fonts — every step under one deadline.

The page settles in named steps, so a stall is named: the load event; the ``--wait-for`` element; a task on the
page's main thread (a script that keeps it busy stalls here); ``document.fonts.ready``; two animation frames; the
screenshot; the platform fonts Chromium used. When the main frame commits another document meanwhile (a script or
a meta refresh after the load event, within the page's origin), the page is settled and shot again, so the
screenshot, its fonts and the final URL recorded with them describe one document; a page that never stops
navigating runs into the deadline. Any failure of the browser becomes a :class:`BeeError` naming the page.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import struct
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from bee_contracts import BeeError, ErrorCode, invalid
from bee_contracts.files import write_atomic
from bee_design import digests
from bee_design.capture.browser import first_line
from bee_design.capture.evidence import Capture, Font, file_name
from bee_design.capture.navigation import Navigations
from bee_design.capture.settings import SCREENSHOT_STYLE, Settings, Viewport
from bee_design.capture.steps import Steps

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page, ViewportSize

    from bee_design.capture.targets import Target

#: Distinct font styles probed per page for the fonts the browser matched (one element each).
_FONT_PROBES: Final = 50

# A task through the page's timer queue: it runs only once the tasks queued before it (a script's busy loop among
# them) have finished.
_MAIN_THREAD = "() => new Promise((done) => setTimeout(done, 0))"
_FONTS_READY = "async () => { await document.fonts.ready; }"
_TWO_FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"

# Marks one element per distinct computed font (and one more where the text is outside Latin-1, which may fall back
# to another font), so the browser can say which platform fonts it used for each.
_MARK_FONT_PROBES = """(limit) => {
  for (const old of document.querySelectorAll("[data-bee-font-probe]")) old.removeAttribute("data-bee-font-probe");
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


async def capture_page(
    context: BrowserContext,
    page: Page,
    target: Target,
    viewport: Viewport,
    *,
    settings: Settings,
    folder: Path,
    abandoned: set[asyncio.Future[Any]],
) -> Capture:
    """Capture ``target`` at ``viewport`` into ``folder``, within ``settings.timeout_seconds`` from start to end.

    Raises:
        BeeError: ``deadline_exceeded`` naming the step that stalled; ``not_found`` when the URL does not answer,
            answers an HTTP error, or the ``--wait-for`` element never appears; ``forbidden`` when the page goes to
            another origin and that is not allowed; ``invalid_argument`` for a ``--wait-for`` that is not a
            selector; ``unavailable`` when the browser fails otherwise. The caller must then kill the browser, and
            collect the calls given up on (``abandoned``: :func:`.steps.collect`).
    """
    navigations = Navigations(page, target.url, allow_cross_origin=settings.allow_cross_origin)
    steps = Steps(target.url, viewport.name, settings.timeout_seconds, navigations, abandoned)
    shot = _Shot(context, page, settings, steps)
    try:
        return await steps.within(lambda: shot.take(target, viewport, folder))
    finally:
        navigations.close()


class _Shot:
    """The steps of one capture, on the page the whole run shares."""

    def __init__(self, context: BrowserContext, page: Page, settings: Settings, steps: Steps) -> None:
        self.context = context
        self.page = page
        self.settings = settings
        self.steps = steps

    async def take(self, target: Target, viewport: Viewport, folder: Path) -> Capture:
        from playwright.async_api import Error as PlaywrightError

        started = time.perf_counter()
        page, steps, navigations = self.page, self.steps, self.steps.navigations
        size: ViewportSize = {"width": viewport.width, "height": viewport.height}
        await steps.run("resizing the viewport", page.set_viewport_size(size))
        await self._navigate(target.url)
        shot: tuple[bytes, tuple[Font, ...]] | None = None
        while shot is None:
            document = navigations.documents
            try:
                shot = await self._settle_and_shoot()
            except PlaywrightError as exc:
                if navigations.documents == document and not navigations.pending:
                    raise self._failed(exc) from None
                # The page navigated (within its origin) while settling: a navigation destroys what was evaluated.
            if navigations.pending:
                await steps.run("waiting for the page's own navigation", navigations.settled())
            if navigations.documents != document:
                shot = None  # of a document the page has left: settle and shoot the new one
        png, fonts = shot
        final_url = page.url
        navigations.check(final_url)
        steps.raise_if_refused()
        name = file_name(target.name, viewport.name)
        write_atomic(folder / name, png, mode=0o644)
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
            final_url=final_url,
        )

    async def _navigate(self, url: str) -> None:
        from playwright.async_api import Error as PlaywrightError

        self.steps.navigations.start()
        try:
            response = await self.steps.run("navigating", self.page.goto(url, wait_until="commit", timeout=0))
        except PlaywrightError as exc:
            reason = re.search(r"net::[A-Z_]+", str(exc))
            if reason and reason.group(0) == "net::ERR_UNSAFE_PORT":
                port = urlsplit(url).port
                raise BeeError(
                    ErrorCode.INVALID_ARGUMENT,
                    f"Chromium refuses to load {url}: port {port} is one browsers keep for other protocols "
                    "(net::ERR_UNSAFE_PORT); serve the page on another port",
                    details={"url": url},
                ) from None
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"{url} did not answer ({reason.group(0) if reason else first_line(exc)}); is the server running and "
                "the URL right?",
                details={"url": url},
            ) from None
        if response is not None and response.status >= 400:
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"{url} answered HTTP {response.status}; capture a page that loads",
                details={"url": url, "status": response.status},
            )

    async def _settle_and_shoot(self) -> tuple[bytes, tuple[Font, ...]]:
        page, steps, settings = self.page, self.steps, self.settings
        await steps.run("loading (waiting for the load event)", page.wait_for_load_state("load", timeout=0))
        if settings.wait_for:
            await steps.run(
                f"waiting for the element {settings.wait_for!r}",
                page.wait_for_selector(settings.wait_for, state="visible", timeout=0),
                selector=settings.wait_for,
            )
        await steps.run("waiting for the page's main thread (a script keeps it busy)", page.evaluate(_MAIN_THREAD))
        await steps.run("waiting for fonts (document.fonts.ready)", page.evaluate(_FONTS_READY))
        await steps.run("waiting for two animation frames", page.evaluate(_TWO_FRAMES))
        png = await steps.run(
            "taking the screenshot",
            page.screenshot(
                type="png",
                animations="disabled",
                caret="hide",
                scale="css",
                full_page=settings.full_page,
                style=SCREENSHOT_STYLE,
                timeout=0,
            ),
        )
        fonts = await steps.run("reading the fonts the page used", _fonts(self.context, page))
        return png, fonts

    def _failed(self, exc: Exception) -> BeeError:
        steps = self.steps
        if steps.selector is not None and "selector" in str(exc):
            return invalid(f"--wait-for {steps.selector!r} is not a valid selector ({first_line(exc)})")
        return BeeError(
            ErrorCode.UNAVAILABLE,
            f"Chromium failed on {steps.where} while {steps.step} ({first_line(exc)}); the browser was stopped and "
            "no evidence was kept",
            details={"url": steps.url, "viewport": steps.viewport, "step": steps.step},
        )


async def _fonts(context: BrowserContext, page: Page) -> tuple[Font, ...]:
    """The platform fonts Chromium used for the page's text, one probe per distinct computed font."""
    from playwright.async_api import Error as PlaywrightError

    if not await page.evaluate(_MARK_FONT_PROBES, _FONT_PROBES):
        return ()
    session = await context.new_cdp_session(page)
    try:
        await session.send("DOM.enable")
        await session.send("CSS.enable")
        root = (await session.send("DOM.getDocument", {"depth": 0}))["root"]["nodeId"]
        probes = await session.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-bee-font-probe]"})
        used: dict[tuple[str, str], dict[str, Any]] = {}
        for node in probes["nodeIds"]:
            for font in (await session.send("CSS.getPlatformFontsForNode", {"nodeId": node}))["fonts"]:
                key = (font["familyName"], font.get("postScriptName", ""))
                entry = used.setdefault(key, {"custom": bool(font.get("isCustomFont")), "glyphs": 0})
                entry["glyphs"] += int(font.get("glyphCount", 0))
    finally:
        with contextlib.suppress(PlaywrightError):  # a page that navigated meanwhile took the session with it
            await session.detach()
    return tuple(Font(family, post, entry["custom"], entry["glyphs"]) for (family, post), entry in sorted(used.items()))
