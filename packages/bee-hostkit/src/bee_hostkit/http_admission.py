"""Which request the HTTP edge admits: a count, and what the admitted work costs.

A count alone (``max_in_flight``) lets a host take on more than it can finish in time: 100 admitted calls of ~6 ms
CPU each on one GIL finish together, after 0.6 s or more, while the shed ones were answered at once. So the rule
asks how long the work already admitted will take, and sheds a request that would only wait behind it:

    admit  when  in_flight < min_in_flight                               (the floor, always)
           or    in_flight < max_in_flight and in_flight * cost <= max_queue_seconds

``cost`` is the wall-clock time the host spends per finished request, measured at the edge: while at least one
admitted request is in flight, the time between one finishing and the next (the first interval counted from the
moment the host became busy). One GIL serves the admitted requests in turn, so that interval is what each one adds
to the wait of the next; requests that overlap (a handler waiting on PostgreSQL, a second core) shorten it, and
CPU taken by other processes lengthens it, as they change what the host finishes. Intervals are averaged with
weights that halve every ``HALF_LIFE_SECONDS``, over a prior of ``PRIOR_COST_SECONDS`` worth one finished request,
so a cold host admits a burst of ``max_queue_seconds / PRIOR_COST_SECONDS`` or the floor (not ``max_in_flight``),
and an idle host returns to the prior.

A caller that sends slow requests inflates ``cost``; the damage is bounded four ways. One interval counts at most
``2 * max_queue_seconds``, so one slow call can hold the estimate at that bound only until the next calls finish;
the floor keeps admitting ``min_in_flight`` requests whatever the estimate says, so the estimate always gets new
samples and the host never sheds everything; the weights halve every two seconds, so an estimate recovers within
seconds of the slow calls stopping; and a request that is slow because its body arrives slowly is ended by the
edge's request timeout. A caller whose calls really are expensive does take capacity from others, as it would
under a count; it cannot take more than ``max_queue_seconds`` of queued work beyond the floor.

The object is pure: the caller passes the clock (``time.monotonic()``), so tests drive it with plain numbers.
"""

from __future__ import annotations

import json
import logging
from typing import Any

logger = logging.getLogger("bee.hostkit.edge")

#: The cost assumed before anything has been measured (and after an idle spell): a typical tracker call.
PRIOR_COST_SECONDS = 0.005
#: How fast old intervals lose weight: a host whose calls got cheaper (or dearer) is believed within seconds.
HALF_LIFE_SECONDS = 2.0
#: At most one "shedding" warning per this many seconds (the counts cover the whole interval).
SHED_LOG_INTERVAL = 10.0


def busy_json(description: str, retry_after_seconds: int) -> bytes:
    """The body of a shed request's 503."""
    body: dict[str, Any] = {"error": "busy", "error_description": description}
    return json.dumps({**body, "retry_after_seconds": retry_after_seconds}).encode()


class Admission:
    """The in-flight count and cost estimate shared by every connection of one server process (one event loop,
    so no lock), and the answers a shed request gets (built once: shedding must cost as little as possible).

    ``limit`` is the hard cap (None: no cap), ``max_queue_seconds`` the queued-work target (None: count only),
    ``floor`` how many requests are admitted whatever the estimate says (at most ``limit``).
    """

    def __init__(
        self,
        limit: int | None,
        retry_after_seconds: int,
        *,
        max_queue_seconds: float | None = None,
        floor: int = 1,
    ) -> None:
        self.limit = limit
        self.max_queue_seconds = max_queue_seconds
        self.floor = min(floor, limit) if limit is not None else floor
        self.in_flight = 0
        self.retry_after = [(b"retry-after", str(retry_after_seconds).encode())]
        self.at_limit_body = busy_json(
            f"the host is at its limit of {limit} requests in flight; retry after {retry_after_seconds} s",
            retry_after_seconds,
        )
        self.queued_body = busy_json(
            f"the host holds as much work as it finishes in {max_queue_seconds or 0:g} s; retry after "
            f"{retry_after_seconds} s",
            retry_after_seconds,
        )
        self._max_sample = 2 * max_queue_seconds if max_queue_seconds is not None else 0.0
        # Decayed sums of the measured intervals and of their count, as of ``_decayed_at``.
        self._busy = 0.0
        self._finished = 0.0
        self._decayed_at = 0.0
        self._mark = 0.0  # the last finish, or when the host last became busy
        # Shed requests since the last warning: at the hard limit, and by queued work.
        self._shed_at_limit = 0
        self._shed_by_cost = 0
        self._last_report: float | None = None

    def cost(self, now: float) -> float:
        """The estimated seconds of host time per admitted request, as of ``now``."""
        weight = self._weight(now)
        return (self._busy * weight + PRIOR_COST_SECONDS) / (self._finished * weight + 1.0)

    def try_enter(self, now: float) -> bytes | None:
        """Admit a request arriving at ``now`` (None), or say why not: the body of its 503."""
        in_flight = self.in_flight
        if in_flight >= self.floor:
            if self.limit is not None and in_flight >= self.limit:
                self._shed_at_limit += 1
                self._note_shed(now)
                return self.at_limit_body
            if self.max_queue_seconds is not None and in_flight * self.cost(now) > self.max_queue_seconds:
                self._shed_by_cost += 1
                self._note_shed(now)
                return self.queued_body
        if in_flight == 0:
            self._mark = now  # busy from here: the first finish is measured from now
        self.in_flight = in_flight + 1
        return None

    def leave(self, now: float) -> None:
        """An admitted request finished at ``now``: release its slot and learn from the interval."""
        self.in_flight -= 1
        if self.max_queue_seconds is None:
            return
        weight = self._weight(now)
        self._busy = self._busy * weight + min(max(now - self._mark, 0.0), self._max_sample)
        self._finished = self._finished * weight + 1.0
        self._decayed_at = self._mark = now

    def _weight(self, now: float) -> float:
        """How much of the sums as of ``_decayed_at`` still counts at ``now``."""
        elapsed = now - self._decayed_at
        return 0.5 ** (elapsed / HALF_LIFE_SECONDS) if elapsed > 0 else 1.0

    def _note_shed(self, now: float) -> None:
        # One line per interval: an overloaded server must not also flood its log.
        if self._last_report is not None and now - self._last_report < SHED_LOG_INTERVAL:
            return
        at_limit, by_cost = self._shed_at_limit, self._shed_by_cost
        logger.warning(
            "shedding: answered %d with 503 (%d at the limit of %s requests in flight, %d over %s s of queued work "
            "at %.1f ms a request)",
            at_limit + by_cost,
            at_limit,
            self.limit,
            by_cost,
            f"{self.max_queue_seconds:g}" if self.max_queue_seconds is not None else "-",
            self.cost(now) * 1000,
        )
        self._shed_at_limit = self._shed_by_cost = 0
        self._last_report = now
