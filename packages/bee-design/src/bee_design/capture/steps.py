"""One wall-clock deadline over the whole capture of one page at one viewport, and the name of the step it stalled in.

Playwright's calls into a page can wait forever — an ``evaluate`` on a page whose script keeps the main thread
busy, ``document.fonts.ready`` while a web font never arrives — and their own ``timeout`` options do not cover
every call. So the deadline is enforced from outside every call, by asyncio: when it passes, the call in progress is
abandoned, and the caller kills the browser (:mod:`.browser`) rather than asking a hung page to close.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from bee_contracts import BeeError, ErrorCode
from bee_design.capture.navigation import Navigations, origin

T = TypeVar("T")


class Steps:
    """The steps of capturing ``url`` at ``viewport``, run under one deadline of ``seconds``.

    Each :meth:`run` names the step it runs, so an expired deadline says where the page stalled; a navigation of the
    main frame to a refused origin ends the step in progress at once.
    """

    def __init__(
        self, url: str, viewport: str, seconds: float, navigations: Navigations, abandoned: set[asyncio.Future[Any]]
    ) -> None:
        self.url = url
        self.viewport = viewport
        self.seconds = seconds
        self.navigations = navigations
        self.step = "starting"
        #: The ``--wait-for`` selector while the step is waiting for it (its deadline is a missing element).
        self.selector: str | None = None
        self.where = f"{url} (viewport {viewport})"
        #: Calls given up on: left to fail once the browser is killed, and collected then (see :func:`collect`).
        self.abandoned = abandoned

    async def within(self, body: Callable[[], Awaitable[T]]) -> T:
        """Run ``body`` (the whole capture) under the deadline.

        Raises:
            BeeError: ``deadline_exceeded`` naming the page, viewport and step when the deadline passes (or
                ``not_found`` when the step was waiting for the ``--wait-for`` element); ``forbidden`` when the page
                went to another origin.
        """
        timer = asyncio.timeout(self.seconds)
        try:
            async with timer:
                result = await body()
        except TimeoutError:
            if not timer.expired():
                raise
            self.raise_if_refused()
            raise self._stalled() from None
        self.raise_if_refused()
        return result

    async def run(self, step: str, work: Awaitable[T], *, selector: str | None = None) -> T:
        """Await ``work`` as step ``step`` (waiting for the ``--wait-for`` ``selector``, when given); give up on it
        as soon as the main frame is sent to a refused origin.

        Raises:
            BeeError: ``forbidden`` when the page went to another origin (whatever ``work`` raised meanwhile).
        """
        self.step, self.selector = step, selector
        # Scheduled even when the page has gone already (the wait below then returns at once): a coroutine never
        # awaited would be reported.
        task = asyncio.ensure_future(work)
        refused = asyncio.ensure_future(self.navigations.refusal.wait())
        try:
            await asyncio.wait((task, refused), return_when=asyncio.FIRST_COMPLETED)
        finally:
            refused.cancel()
            if task.done():
                if not task.cancelled():
                    task.exception()  # retrieved here, so asyncio does not report it when it is not raised below
            else:
                # Not cancelled: Playwright leaves a cancelled call's reply pending, and reports it as an exception
                # nobody retrieved once the browser is gone. Left running, the call fails then, and is collected.
                self.abandoned.add(task)
        self.raise_if_refused()  # a navigation away destroys the page's context: the refusal explains any failure
        return task.result()

    def raise_if_refused(self) -> None:
        """Raise the refusal when the main frame was sent to a refused origin.

        Raises:
            BeeError: ``forbidden``, naming the page, where it went and the flag that allows it.
        """
        refused = self.navigations.refused
        if refused is None:
            return
        went = "redirected" if self.navigations.how == "redirect" else "navigated"
        scheme, host, port = origin(self.url)
        given = f"{scheme}://{host}" + (f":{port}" if port is not None else "")
        raise BeeError(
            ErrorCode.FORBIDDEN,
            f"{self.where} {went} to {refused}, outside the origin {given} it was given; the capture is refused "
            f"and no evidence was kept. Capture {refused} itself, or pass --allow-cross-origin-redirect to follow it",
            details={"url": self.url, "viewport": self.viewport, "to": refused, "how": self.navigations.how},
        )

    def _stalled(self) -> BeeError:
        if self.selector is not None:
            return BeeError(
                ErrorCode.NOT_FOUND,
                f"element {self.selector!r} never appeared on {self.where} within {self.seconds:g} s; no evidence "
                "was kept",
                details={"url": self.url, "viewport": self.viewport, "selector": self.selector},
            )
        return BeeError(
            ErrorCode.DEADLINE_EXCEEDED,
            f"{self.where} stalled {self.step}: its capture did not finish within {self.seconds:g} s, so the browser "
            "was killed and no evidence was kept. Raise --timeout, or fix the page (a script that keeps the main "
            "thread busy, or a font or other resource that never arrives, stalls it)",
            details={
                "url": self.url,
                "viewport": self.viewport,
                "step": self.step,
                "timeoutSeconds": self.seconds,
                "navigations": max(0, self.navigations.documents - 1),
            },
        )


async def collect(abandoned: set[asyncio.Future[Any]], seconds: float) -> None:
    """Wait up to ``seconds`` for the calls given up on to end (they fail once the browser is killed), and retrieve
    their outcomes; cancel any still running."""
    if not abandoned:
        return
    done, pending = await asyncio.wait(abandoned, timeout=seconds)
    for future in done:
        if not future.cancelled():
            future.exception()
    for future in pending:
        future.cancel()
    abandoned.clear()
