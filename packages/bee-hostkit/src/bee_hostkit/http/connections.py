"""Which connections the HTTP edge keeps open: a cap per client address and in all, and which one makes room.

A connection costs a file descriptor and memory whether it sends anything or not, so the edge (:mod:`.edge`)
registers each one here when it is accepted. Over a cap the edge does what nginx does when it runs out of
connections: it closes one that is not in use rather than refuse the newcomer. Not in use means anything but being
served (its request running in the app) or answered (its response being written). Which one, first by what it is
waiting for, in this order (:class:`Waiting`), and the longest-waiting first within that:

1. lingering after a refusal (its answer is written; only what the client still sends is being drained);
2. shed: its last request was answered 503 (the client was told to come back later);
3. silent: accepted, and not a byte of a request sent yet;
4. partway through sending a request that has not reached the app yet (its headers, or its body before admission);
5. served: its last request was answered, and it is kept for the next one (a client's pooled connection).

So a flood of silent, slow or shed connections makes room from among its own before any client that is being served
loses a pooled connection (which a client may find closed just as it sends on it, and must then send again). Shed
comes before silent because every new connection is silent for a moment (from its accept to its first bytes): at
overload, when the cap is full of clients being shed, a newcomer (a health check, say) must not be the one to go.
Which address gives up one:

- over the per-address cap, that address: a client holding many connections makes room for its own new ones, never
  at another address's expense;
- over the total cap, the address with a connection in the earliest of those classes, and of those the one with the
  most connections waiting.

Only when every connection in the way is in use is the newcomer refused, which the edge does by closing it at once;
connections in use are bounded by admission and by the edge's timeouts. So nothing that merely holds connections
keeps anyone from being served, not even a health check from the flood's own address.

The registry also says how many more connections fit (:meth:`Connections.room`), counting those accepted whose
protocol exists but has not been told of its connection yet (asyncio does that a turn of the event loop later): the
edge's event loop accepts no more than that in one turn (:mod:`.descriptors`), so the process never holds more
descriptors for connections than the cap, plus a small batch at the cap.

Pure, like :mod:`.admission`: connections are opaque objects with a ``close_idle()`` method, the clock is passed
in, and tests drive it with plain numbers.
"""

from __future__ import annotations

import logging
from enum import IntEnum
from typing import Protocol

logger = logging.getLogger("bee.hostkit.edge")

#: At most one warning about closed or refused connections per this many seconds (the counts cover the interval).
CONNECTION_LOG_INTERVAL = 10.0


class Waiting(IntEnum):
    """What a connection that is not in use waits for, in the order such connections are closed to make room."""

    REFUSED = 0
    SHED = 1
    SILENT = 2
    PARTIAL = 3
    SERVED = 4


class Connection(Protocol):
    """What the registry needs of a connection: a way to close it to make room (hashed by identity)."""

    def close_idle(self) -> None: ...


#: Per address, its connections not in use, one ordered set per :class:`Waiting` class (longest-waiting first).
_Classes = list[dict[Connection, None]]


class Connections:
    """The connections one server process holds, per client address, and which of them are not in use.

    ``limit`` caps them all, ``per_peer`` those of one address (both at least 1).
    """

    def __init__(self, limit: int, per_peer: int) -> None:
        self.limit = limit
        self.per_peer = min(per_peer, limit)
        self.count = 0
        #: Accepted, their protocol made, not yet opened here (asyncio calls connection_made a turn later).
        self.expected = 0
        self._peer_of: dict[Connection, str] = {}
        self._open: dict[str, int] = {}
        self._waiting: dict[str, _Classes] = {}
        self._class_of: dict[Connection, Waiting] = {}
        # Closed to make room, and refused, since the last warning.
        self._made_room = 0
        self._refused = 0
        self._last_report: float | None = None

    def expect(self) -> None:
        """A connection was accepted and its protocol made: :meth:`open` follows (it takes room meanwhile)."""
        self.expected += 1

    def room(self) -> int:
        """How many more connections fit under the total cap, counting the expected ones (0 at the cap)."""
        return max(0, self.limit - self.count - self.expected)

    def open(self, connection: Connection, peer: str, now: float) -> bool:
        """Register ``connection``, accepted from ``peer`` at ``now``, as silent: True, after closing a connection
        that is not in use where a cap would be passed; False (nothing registered) when the newcomer must be refused
        because every connection in the way is in use."""
        self.expected = max(0, self.expected - 1)
        if self._open.get(peer, 0) >= self.per_peer and not self._make_room(self._waiting.get(peer), now):
            return self._refuse(now)
        if self.count >= self.limit and not self._make_room(self._first_to_give(), now):
            return self._refuse(now)
        self._peer_of[connection] = peer
        self._open[peer] = self._open.get(peer, 0) + 1
        self.count += 1
        self.waits(connection, Waiting.SILENT)
        return True

    def waits(self, connection: Connection, why: Waiting) -> None:
        """``connection`` is not in use from now on, waiting as ``why`` says: the last of its class to make room."""
        peer = self._peer_of.get(connection)
        if peer is None:
            return
        self._forget_waiting(peer, connection)
        self._waiting.setdefault(peer, [{} for _ in Waiting])[why][connection] = None
        self._class_of[connection] = why

    def busy(self, connection: Connection) -> None:
        """``connection`` is in use (its request is being served): it is never closed to make room."""
        peer = self._peer_of.get(connection)
        if peer is not None:
            self._forget_waiting(peer, connection)

    def closed(self, connection: Connection) -> None:
        """``connection`` is gone (closed by either side). Closing one twice, or one never registered, is allowed."""
        peer = self._peer_of.pop(connection, None)
        if peer is None:
            return
        self._forget_waiting(peer, connection)
        self.count -= 1
        left = self._open[peer] - 1
        if left:
            self._open[peer] = left
        else:
            del self._open[peer]

    def _forget_waiting(self, peer: str, connection: Connection) -> None:
        why = self._class_of.pop(connection, None)
        if why is None:
            return
        classes = self._waiting[peer]
        del classes[why][connection]
        if not any(classes):
            del self._waiting[peer]

    def _first_to_give(self) -> _Classes | None:
        """The waiting connections of the address that gives one up at the total cap (the scan runs only there)."""

        def order(classes: _Classes) -> tuple[int, int]:
            earliest = next(why for why, waiting in enumerate(classes) if waiting)
            return earliest, -sum(map(len, classes))

        return min(self._waiting.values(), key=order, default=None)

    def _make_room(self, classes: _Classes | None, now: float) -> bool:
        waiting = next((waiting for waiting in classes or () if waiting), None)
        if waiting is None:
            return False
        oldest = next(iter(waiting))
        self.closed(oldest)
        oldest.close_idle()
        self._made_room += 1
        self._report(now)
        return True

    def _refuse(self, now: float) -> bool:
        self._refused += 1
        self._report(now)
        return False

    def _report(self, now: float) -> None:
        # One line per interval: a flood of connections must not also flood the log.
        if self._last_report is not None and now - self._last_report < CONNECTION_LOG_INTERVAL:
            return
        logger.warning(
            "connections: closed %d that were not in use to make room, refused %d (the limits: %d per client "
            "address, %d in all)",
            self._made_room,
            self._refused,
            self.per_peer,
            self.limit,
        )
        self._made_room = self._refused = 0
        self._last_report = now
