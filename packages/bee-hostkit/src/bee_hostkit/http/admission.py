"""Which request the HTTP edge admits: a count, what the admitted work costs, and each client's share.

A count alone (``max_in_flight``) lets a host take on more than it can finish in time: 100 admitted calls of ~6 ms
CPU each on one GIL finish together, after 0.6 s or more, while the shed ones were answered at once. So the rule
asks how long the work already admitted will take, and sheds a request that would only wait behind it. The number
of requests it lets in flight, the *target*, is

    target = max_in_flight                                                  (by count alone)
    target = min(max_in_flight, max(min_in_flight, n))                      (by cost)

where ``n`` is the largest count with ``(n - 1) * cost <= max_queue_seconds``: the floor ``min_in_flight`` is
admitted whatever the estimate says, and beyond it only what fits ``max_queue_seconds`` of queued work.

``cost`` is the wall-clock time the host spends per finished request, measured at the edge: while at least one
admitted request is in flight, the time between one finishing and the next (the first interval counted from the
moment the host became busy). One GIL serves the admitted requests in turn, so that interval is what each one adds
to the wait of the next; requests that overlap (a handler waiting on PostgreSQL, a second core) shorten it, and
CPU taken by other processes lengthens it, as they change what the host finishes. Intervals are averaged with
weights that halve every ``HALF_LIFE_SECONDS``, over a prior of ``PRIOR_COST_SECONDS`` worth one finished request,
so a cold host admits a burst of ``max_queue_seconds / PRIOR_COST_SECONDS`` or the floor (not ``max_in_flight``),
and an idle host returns to the prior.

**Fair shares.** Requests come from clients (:mod:`.clients` says whose a request is: its bearer token, else
its address), and one client's thousand connections must not turn another's calls into ``busy``. So, for a request
of a client that holds ``held`` requests in flight, with ``clients`` clients holding some (this one counted):

    shed   when  in_flight >= max_in_flight                                 (the hard limit, always)
           or    held >= max_in_flight - reserve                            (one client never takes the last tenth)
    admit  when  in_flight < target                                         (room: whoever asks)
           or    held < share  and  sum over clients of min(held_c, share) < target
    shed   otherwise,      share = ceil(target / clients),  reserve = max_in_flight // 10

The rule is work-conserving: while the host is under its target any client is admitted, so one client alone (an
agent team sharing one token) gets everything the target allows. Once the target is reached, a client below its
equal share is still admitted as long as the requests in flight *within* their clients' shares leave room, which is
the case exactly when another client holds more than its share; that one is then shed until it is back within it.
The host may exceed its target by what the hog holds beyond its share, never its hard limit: the reserve (a tenth
of ``max_in_flight``, none below ten) keeps room under the hard limit for a newcomer even when the target is the
hard limit (admission by count, or very cheap calls). A client below its share arriving at a host full of clients
within theirs is shed like any other: that is the host's capacity, shared.

A caller that sends slow requests inflates ``cost``; the damage is bounded four ways. One interval counts at most
``2 * max_queue_seconds``, so one slow call can hold the estimate at that bound only until the next calls finish;
the floor keeps admitting ``min_in_flight`` requests whatever the estimate says, so the estimate always gets new
samples and the host never sheds everything; the weights halve every two seconds, so an estimate recovers within
seconds of the slow calls stopping; and a request is admitted only once its body has arrived (:mod:`.edge`),
so a slow sender holds no slot at all. A caller whose calls really are expensive does take capacity from others,
as it would under a count, but only its share of it once others are waiting.

The object is pure: the caller passes the clock (``time.monotonic()``), so tests drive it with plain numbers.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Hashable
from typing import Any

logger = logging.getLogger("bee.hostkit.edge")

#: The cost assumed before anything has been measured (and after an idle spell): a typical tracker call.
PRIOR_COST_SECONDS = 0.005
#: How fast old intervals lose weight: a host whose calls got cheaper (or dearer) is believed within seconds.
HALF_LIFE_SECONDS = 2.0
#: At most one "shedding" warning per this many seconds (the counts cover the whole interval).
SHED_LOG_INTERVAL = 10.0
#: The part of ``max_in_flight`` one client never takes (below ten requests in flight, none is kept).
RESERVE_FRACTION = 10


def busy_json(description: str, retry_after_seconds: int) -> bytes:
    """The body of a shed request's 503."""
    body: dict[str, Any] = {"error": "busy", "error_description": description}
    return json.dumps({**body, "retry_after_seconds": retry_after_seconds}).encode()


class Admission:
    """The in-flight counts (in all and per client), the cost estimate, shared by every connection of one server
    process (one event loop, so no lock), and the answers a shed request gets (built once: shedding must cost as
    little as possible).

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
        #: The most one client may hold: all but a tenth of the hard limit.
        self.client_limit = limit - limit // RESERVE_FRACTION if limit is not None else None
        self.in_flight = 0
        self._held: dict[Hashable, int] = {}
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
        self.share_body = busy_json(
            f"this client holds its share of the requests in flight (at most {self.client_limit} of the host's "
            f"{limit}, an equal part of what the host admits while other clients are served); retry after "
            f"{retry_after_seconds} s",
            retry_after_seconds,
        )
        self._max_sample = 2 * max_queue_seconds if max_queue_seconds is not None else 0.0
        # Decayed sums of the measured intervals and of their count, as of ``_decayed_at``.
        self._busy = 0.0
        self._finished = 0.0
        self._decayed_at = 0.0
        self._mark = 0.0  # the last finish, or when the host last became busy
        # Shed requests since the last warning: at the hard limit, by queued work, beyond a client's share.
        self._shed_at_limit = 0
        self._shed_by_cost = 0
        self._shed_by_share = 0
        self._last_report: float | None = None

    def cost(self, now: float) -> float:
        """The estimated seconds of host time per admitted request, as of ``now``."""
        weight = self._weight(now)
        return (self._busy * weight + PRIOR_COST_SECONDS) / (self._finished * weight + 1.0)

    def target(self, now: float) -> int | None:
        """How many requests the host lets in flight as of ``now`` before shares count (None: no cap)."""
        if self.max_queue_seconds is None:
            return self.limit
        fits = math.floor(self.max_queue_seconds / self.cost(now)) + 1
        wanted = max(self.floor, fits)
        return wanted if self.limit is None else min(self.limit, wanted)

    def try_enter(self, now: float, client: Hashable = None) -> bytes | None:
        """Admit a request of ``client`` arriving at ``now`` (None), or say why not: the body of its 503."""
        refusal = self._refusal(now, client)
        if refusal is not None:
            self._note_shed(now, refusal)
            return refusal
        if self.in_flight == 0:
            self._mark = now  # busy from here: the first finish is measured from now
        self.in_flight += 1
        self._held[client] = self._held.get(client, 0) + 1
        return None

    def leave(self, now: float, client: Hashable = None) -> None:
        """An admitted request of ``client`` finished at ``now``: release its slot and learn from the interval."""
        self.in_flight -= 1
        held = self._held.pop(client) - 1
        if held:
            self._held[client] = held
        if self.max_queue_seconds is None:
            return
        weight = self._weight(now)
        self._busy = self._busy * weight + min(max(now - self._mark, 0.0), self._max_sample)
        self._finished = self._finished * weight + 1.0
        self._decayed_at = self._mark = now

    def _refusal(self, now: float, client: Hashable) -> bytes | None:
        """The rule in the module's docstring: None to admit, else the body of the 503."""
        in_flight, held = self.in_flight, self._held.get(client, 0)
        if self.limit is not None and in_flight >= self.limit:
            return self.at_limit_body
        if self.client_limit is not None and held >= self.client_limit:
            return self.share_body
        target = self.target(now)
        if target is None or in_flight < target:
            return None
        clients = len(self._held) + (client not in self._held)
        share = -(-target // clients)
        if held >= share:
            return self.share_body if clients > 1 else self.queued_body
        within = sum(min(count, share) for count in self._held.values())
        return None if within < target else self.queued_body

    def _weight(self, now: float) -> float:
        """How much of the sums as of ``_decayed_at`` still counts at ``now``."""
        elapsed = now - self._decayed_at
        return 0.5 ** (elapsed / HALF_LIFE_SECONDS) if elapsed > 0 else 1.0

    def _note_shed(self, now: float, refusal: bytes) -> None:
        if refusal is self.at_limit_body:
            self._shed_at_limit += 1
        elif refusal is self.share_body:
            self._shed_by_share += 1
        else:
            self._shed_by_cost += 1
        # One line per interval: an overloaded server must not also flood its log.
        if self._last_report is not None and now - self._last_report < SHED_LOG_INTERVAL:
            return
        at_limit, by_cost, by_share = self._shed_at_limit, self._shed_by_cost, self._shed_by_share
        logger.warning(
            "shedding: answered %d with 503 (%d at the limit of %s requests in flight, %d over %s s of queued work "
            "at %.1f ms a request%s)",
            at_limit + by_cost + by_share,
            at_limit,
            self.limit,
            by_cost,
            f"{self.max_queue_seconds:g}" if self.max_queue_seconds is not None else "-",
            self.cost(now) * 1000,
            f", {by_share} beyond their client's share" if by_share else "",
        )
        self._shed_at_limit = self._shed_by_cost = self._shed_by_share = 0
        self._last_report = now


class Streams:
    """Open streams (``subscriptions/listen``) counted apart from calls: a cap, and the 503 beyond it.

    A listen stream lasts as long as its client listens, so counted among calls it would hold a call's slot for
    minutes, and a thousand listeners would leave no room for a ``claim``; its wall-clock time would also wreck the
    cost estimate above. Streams are admitted against their own cap instead (None: no cap), and cost nothing there.
    """

    def __init__(self, limit: int | None, retry_after_seconds: int) -> None:
        self.limit = limit
        self.open = 0
        self.body = busy_json(
            f"the host has {limit} listen streams open, the most it holds; retry after {retry_after_seconds} s",
            retry_after_seconds,
        )

    def try_enter(self) -> bool:
        if self.limit is not None and self.open >= self.limit:
            return False
        self.open += 1
        return True

    def leave(self) -> None:
        self.open -= 1
