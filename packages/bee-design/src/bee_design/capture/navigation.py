"""Where a page's main frame goes while it is captured: the documents it commits, and whether it left its origin.

A capture is of the origin it was given. The main frame of the page may still move: an HTTP redirect while it
loads, a ``<meta http-equiv=refresh>``, or a script that sets ``location`` after the load event. :class:`Navigations`
watches the page's main frame from the moment a capture starts: every committed navigation counts as a new
document, and a navigation request that has neither committed nor ended is pending (so the capture waits for it,
settles and shoots again, and the screenshot, its fonts and the recorded final URL all describe the same
document); the first navigation request to another origin — scheme, host and port — is refused at once, unless the
capture allows it (``--allow-cross-origin-redirect``).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from playwright.async_api import Frame, Page, Request

#: Ports a URL without one uses, by scheme (so ``http://h/`` and ``http://h:80/`` are one origin).
_DEFAULT_PORTS: Final = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def origin(url: str) -> tuple[str, str, int | None]:
    """The origin of ``url``: scheme, host and port, lower-cased, the scheme's default port filled in.

    Every ``file:`` URL shares one origin here (the browser gives each an opaque one, but a capture of a local file
    that moves to another local file has not left the machine). A URL that does not parse has an origin no other
    URL shares.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return ("invalid", url, None)
    scheme = parts.scheme.lower()
    if scheme == "file":
        return ("file", "", None)
    return (scheme, (parts.hostname or "").lower(), port if port is not None else _DEFAULT_PORTS.get(scheme))


class Navigations:
    """The main-frame navigations of ``page`` since this watch began, until :meth:`close`.

    ``documents`` counts committed main-frame navigations (the capture's own ``goto`` among them); ``pending`` holds
    the main-frame navigation requests still under way; ``refused`` is the first URL of another origin the main
    frame was sent to, and ``refusal`` is set when it is, so a step waiting on the page can give up at once instead
    of at the deadline.
    """

    def __init__(self, page: Page, url: str, *, allow_cross_origin: bool) -> None:
        self._page = page
        self._origin = origin(url)
        self._allow = allow_cross_origin
        self.documents = 0
        self.refused: str | None = None
        #: How the page was sent there: "redirect" (an HTTP redirect) or "navigation" (anything else).
        self.how = "navigation"
        self.refusal = asyncio.Event()
        self.pending: set[Request] = set()
        self._settled = asyncio.Event()
        self._settled.set()
        # Until the capture's own navigation starts, the page still shows the previous capture's document, whose
        # late moves are not this capture's.
        self._started = False
        page.on("request", self._on_request)
        page.on("requestfinished", self._done)
        page.on("requestfailed", self._done)
        page.on("framenavigated", self._on_navigated)

    def close(self) -> None:
        """Stop watching (the page serves the next capture, which watches for itself)."""
        self._page.remove_listener("request", self._on_request)
        self._page.remove_listener("requestfinished", self._done)
        self._page.remove_listener("requestfailed", self._done)
        self._page.remove_listener("framenavigated", self._on_navigated)

    async def settled(self) -> None:
        """Return once no main-frame navigation is pending (it committed, failed, or ended without a document)."""
        await self._settled.wait()

    def start(self) -> None:
        """Count from here: the capture is about to navigate to its URL."""
        self._started = True

    def foreign(self, url: str) -> bool:
        """Whether ``url`` is of another origin than the capture's and the capture does not allow that."""
        return not self._allow and origin(url) != self._origin

    def check(self, url: str, how: str = "navigation") -> None:
        """Record ``url`` as refused (the first one only) when it is :meth:`foreign`."""
        if self.refused is None and self.foreign(url):
            self.refused, self.how = url, how
            self.refusal.set()

    # The two listeners run inside Playwright's event dispatch: they must not raise.
    def _on_request(self, request: Request) -> None:
        if self._started and request.is_navigation_request() and _is_main(request):
            self.pending.add(request)
            self._settled.clear()
            self.check(request.url, "redirect" if request.redirected_from is not None else "navigation")

    def _on_navigated(self, frame: Frame) -> None:
        if self._started and frame.parent_frame is None:
            self.documents += 1
            self.check(frame.url)
            # The committed navigation replaced any other under way.
            self.pending.clear()
            self._settled.set()

    def _done(self, request: Request) -> None:
        self.pending.discard(request)
        if not self.pending:
            self._settled.set()


def _is_main(request: Request) -> bool:
    try:
        return request.frame.parent_frame is None
    except Exception:  # a request of a service worker has no frame; it is not a navigation of ours
        return False
