"""Cooperative deadlines: handlers call :meth:`Deadline.check` between units of work."""

from __future__ import annotations

import time
from collections.abc import Callable

from bee_contracts import BeeError, ErrorCode


class Deadline:
    """A point in monotonic time after which a call must stop and report ``deadline_exceeded``."""

    def __init__(self, seconds: float, *, clock: Callable[[], float] | None = None) -> None:
        self.seconds = seconds
        self._clock = clock or time.monotonic
        self._expires = self._clock() + seconds

    @property
    def remaining(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self._expires - self._clock())

    @property
    def expired(self) -> bool:
        return self._clock() >= self._expires

    def check(self, doing: str = "") -> None:
        """Raise ``deadline_exceeded`` when the deadline has passed.

        Raises:
            BeeError: with code ``deadline_exceeded``; nothing partial is delivered.
        """
        if self.expired:
            what = f" while {doing}" if doing else ""
            raise BeeError(
                ErrorCode.DEADLINE_EXCEEDED,
                f"the call ran past its {self.seconds:g}-second deadline{what}; nothing partial was delivered. "
                "Select less (fewer or smaller selections) and call again.",
            )


def never() -> Deadline:
    """A deadline far enough away that it never fires (for CLI use of handlers)."""
    return Deadline(10.0**9)
