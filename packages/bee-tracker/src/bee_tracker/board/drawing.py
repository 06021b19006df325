"""The board's graph pictures, drawn without slowing anyone else down.

Graphviz can take seconds, or forever, on a dense graph, and anyone who can write links can make one. So drawing
is kept apart from everything else a request does:

- **Its own queue.** The graph's store read finishes, and gives its store slot back, before drawing starts.
  Drawing runs in worker threads of its own, at most :data:`CONCURRENT` at once (``dot`` itself at the lowest CPU
  priority); at most :data:`QUEUED` more requests wait for one. Past that the answer is immediate: :class:`Busy`,
  which the graph route answers 503 with ``Retry-After``. The event loop only waits.
- **Once per picture.** A picture is keyed by its neighbourhood's fingerprint. Drawn pictures are kept
  (:data:`DRAWN_KEPT`); requests for a picture being drawn wait for that drawing instead of starting another.
- **Not retried.** A picture that could not be drawn (it took longer than :data:`~.dot.TIMEOUT_SECONDS`, its DOT was
  too large, or ``dot`` failed) is remembered by its fingerprint for :data:`FAILED_SECONDS` (:data:`FAILED_KEPT`
  at most), and every request for it meanwhile is answered at once, without ``dot``: :class:`Undrawable`.
- **Dense graphs in words.** A neighbourhood with more than :func:`most_links` links for its issues is not even
  tried: Graphviz's layout grows much faster than the number of links (150 issues joined at random by 250 links
  took 28 s here, by 200 links 3 s). The issue page then lists the links in words, with a note saying why.

What is kept lives in the tracker process (each worker of ``--workers`` keeps its own).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

import anyio
import anyio.to_thread

from bee_contracts import BeeError, ErrorCode
from bee_tracker.board import dot
from bee_tracker.board.graph import Neighbourhood

#: Pictures drawn at once per process (each a ``dot`` process and a worker thread).
CONCURRENT: Final = 2
#: Requests for other pictures that may wait for a drawing slot; one more is answered at once.
QUEUED: Final = 4
#: What a request refused for a full queue is told to wait, in seconds.
RETRY_AFTER_SECONDS: Final = 5
#: Drawn pictures kept, by fingerprint.
DRAWN_KEPT: Final = 64
#: Pictures that could not be drawn, kept by fingerprint, and for how long.
FAILED_KEPT: Final = 512
FAILED_SECONDS: Final = 3600.0
#: A neighbourhood is dense past this many links per issue shown (or :data:`LINKS_ALWAYS_DRAWN`, if more).
LINKS_PER_ISSUE: Final = 1.5
LINKS_ALWAYS_DRAWN: Final = 60


class Busy(Exception):
    """Every drawing slot and queue place is taken; try again in :data:`RETRY_AFTER_SECONDS`."""

    retry_after_seconds = RETRY_AFTER_SECONDS


class Undrawable(Exception):
    """This picture is not drawn: too dense, too large, or it could not be drawn before; the message says which."""


def most_links(issues: int) -> int:
    """The most links a neighbourhood of ``issues`` issues may have and still be drawn."""
    return max(LINKS_ALWAYS_DRAWN, int(LINKS_PER_ISSUE * issues))


class Drawer:
    """One process's graph pictures: its queue, what it drew, and what it could not draw (see the module docstring).

    Used from the event loop (:meth:`svg`, :meth:`refusal`); the drawing itself runs in worker threads.
    """

    def __init__(
        self,
        *,
        concurrent: int = CONCURRENT,
        queued: int = QUEUED,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._slots = anyio.CapacityLimiter(concurrent)
        self._capacity = concurrent + queued
        self._clock = clock
        self._admitted = 0  # drawings running or waiting for a slot (changed on the event loop only)
        self._drawing: dict[str, anyio.Event] = {}  # fingerprint → set when its drawing has ended
        # Written by the worker threads, read on the event loop.
        self._lock = threading.Lock()
        self._drawn: OrderedDict[str, bytes] = OrderedDict()
        self._failed: OrderedDict[str, tuple[float, str]] = OrderedDict()  # fingerprint → (until, why)

    @property
    def full(self) -> bool:
        """Whether a new drawing would be refused now (every slot and queue place taken): checked before the
        neighbourhood is even read, so a refusal costs next to nothing."""
        return self._admitted >= self._capacity

    def refusal(self, hood: Neighbourhood) -> str | None:
        """Why ``hood``'s picture will not be drawn, or None when it may be: it is dense, or could not be drawn
        recently. Cheap: no DOT is written and nothing waits."""
        links, issues = len(hood.links), len(hood.nodes)
        if links > most_links(issues):
            return (
                f"it has {links} links among {issues} issues, more than the {most_links(issues)} the board draws "
                "for that many"
            )
        with self._lock:
            failed = self._failed.get(hood.fingerprint)
            if failed is not None and failed[0] <= self._clock():
                del self._failed[hood.fingerprint]
                failed = None
        return failed[1] if failed else None

    async def svg(self, hood: Neighbourhood) -> bytes:
        """The picture of ``hood``: kept, or drawn now in a worker thread (waiting for the drawing of the same
        picture, if one is under way).

        Raises:
            Undrawable: see :meth:`refusal`; or it could not be drawn now (then it is remembered).
            Busy: every slot and queue place is taken.
            BeeError: ``unavailable`` when Graphviz is not installed or cannot start.
        """
        key = hood.fingerprint
        while True:
            why = self.refusal(hood)
            if why is not None:
                raise Undrawable(why)
            with self._lock:
                drawn = self._drawn.get(key)
                if drawn is not None:
                    self._drawn.move_to_end(key)
                    return drawn
            under_way = self._drawing.get(key)
            if under_way is None:
                break
            await under_way.wait()
        if self.full:
            raise Busy
        self._admitted += 1
        ended = self._drawing[key] = anyio.Event()
        try:
            # Not cancellable once started (the thread runs dot to its end), so what it finds is always kept.
            return await anyio.to_thread.run_sync(self._draw_and_keep, hood, limiter=self._slots)
        finally:
            self._admitted -= 1
            del self._drawing[key]
            ended.set()

    def _draw_and_keep(self, hood: Neighbourhood) -> bytes:
        """In a worker thread: write the DOT, run ``dot``, title the SVG; keep the picture or why there is none."""
        try:
            picture = dot.svg(dot.drawing(hood))
        except BeeError as exc:
            if exc.code == ErrorCode.UNAVAILABLE:
                raise  # nothing about this picture: Graphviz is missing, and may be installed any minute
            why = {
                ErrorCode.DEADLINE_EXCEEDED: f"Graphviz could not draw it within {dot.TIMEOUT_SECONDS:g} s",
                ErrorCode.INVALID_ARGUMENT: "it " + exc.message.removeprefix("this graph "),
            }.get(exc.code, "Graphviz failed to draw it")
            with self._lock:
                self._failed[hood.fingerprint] = (self._clock() + FAILED_SECONDS, why)
                while len(self._failed) > FAILED_KEPT:
                    self._failed.popitem(last=False)
            raise Undrawable(why) from None
        with self._lock:
            self._drawn[hood.fingerprint] = picture
            while len(self._drawn) > DRAWN_KEPT:
                self._drawn.popitem(last=False)
        return picture
