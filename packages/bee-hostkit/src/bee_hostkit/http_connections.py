"""Which connections the HTTP edge keeps open: a cap per client address and in all, and which one makes room.

A connection costs a file descriptor and memory whether it sends anything or not, so the edge (:mod:`.http_edge`)
registers each one here when it is accepted. Over a cap the edge does what nginx does when it runs out of
connections: it closes one that is not in use rather than refuse the newcomer. Not in use means waiting for a
request (just accepted, or idle between requests), part-way through sending one that has not reached the app yet
(its headers, or its body before admission), or lingering after a refusal. Which one:

- over the per-address cap, the longest-waiting such connection *of that address*: a client holding many silent or
  slow connections makes room for its own new ones, never at another address's expense;
- over the total cap, the longest-waiting such connection of the address that holds the most of them.

Only when every connection in the way is in use (its request is being served, or its answer written) is the
newcomer refused, which the edge does by closing it at once. So a flood of connections that send nothing, or send
slowly, cannot keep anyone from being served, not even a health check from the flood's own address; in-use
connections are bounded by admission and by the edge's timeouts.

Pure, like :mod:`.http_admission`: connections are opaque objects with a ``close_idle()`` method, the clock is passed
in, and tests drive it with plain numbers.
"""

from __future__ import annotations

import logging
from typing import Protocol

logger = logging.getLogger("bee.hostkit.edge")

#: At most one warning about closed or refused connections per this many seconds (the counts cover the interval).
CONNECTION_LOG_INTERVAL = 10.0


class Connection(Protocol):
    """What the registry needs of a connection: a way to close it to make room (hashed by identity)."""

    def close_idle(self) -> None: ...


class Connections:
    """The connections one server process holds, per client address, and which of them are not in use.

    ``limit`` caps them all, ``per_peer`` those of one address (both at least 1).
    """

    def __init__(self, limit: int, per_peer: int) -> None:
        self.limit = limit
        self.per_peer = min(per_peer, limit)
        self.count = 0
        self._peer_of: dict[Connection, str] = {}
        self._open: dict[str, int] = {}
        # Per address, its connections that are not in use, longest-waiting first (dicts keep insertion order).
        self._idle: dict[str, dict[Connection, None]] = {}
        # Closed to make room, and refused, since the last warning.
        self._made_room = 0
        self._refused = 0
        self._last_report: float | None = None

    def open(self, connection: Connection, peer: str, now: float) -> bool:
        """Register ``connection``, accepted from ``peer`` at ``now``, as waiting for a request: True, after closing
        a connection that is not in use where a cap would be passed; False (nothing registered) when the newcomer
        must be refused because every connection in the way is in use."""
        if self._open.get(peer, 0) >= self.per_peer and not self._make_room(self._idle.get(peer), now):
            return self._refuse(now)
        if self.count >= self.limit and not self._make_room(self._busiest_idle(), now):
            return self._refuse(now)
        self._peer_of[connection] = peer
        self._open[peer] = self._open.get(peer, 0) + 1
        self.count += 1
        self._idle.setdefault(peer, {})[connection] = None
        return True

    def idle(self, connection: Connection, *, first: bool = False) -> None:
        """``connection`` is not in use from now on: the last to make room among its address's, or the first."""
        peer = self._peer_of.get(connection)
        if peer is None:
            return
        waiting = self._idle.setdefault(peer, {})
        waiting.pop(connection, None)
        if first:
            self._idle[peer] = {connection: None, **waiting}
        else:
            waiting[connection] = None

    def busy(self, connection: Connection) -> None:
        """``connection`` is in use (its request is being served): it is never closed to make room."""
        peer = self._peer_of.get(connection)
        if peer is not None:
            self._forget_idle(peer, connection)

    def closed(self, connection: Connection) -> None:
        """``connection`` is gone (closed by either side). Closing one twice, or one never registered, is allowed."""
        peer = self._peer_of.pop(connection, None)
        if peer is None:
            return
        self._forget_idle(peer, connection)
        self.count -= 1
        left = self._open[peer] - 1
        if left:
            self._open[peer] = left
        else:
            del self._open[peer]

    def _forget_idle(self, peer: str, connection: Connection) -> None:
        waiting = self._idle.get(peer)
        if waiting is not None:
            waiting.pop(connection, None)
            if not waiting:
                del self._idle[peer]

    def _busiest_idle(self) -> dict[Connection, None] | None:
        """The waiting connections of the address that holds the most of them (the scan runs only at the cap)."""
        return max(self._idle.values(), key=len, default=None)

    def _make_room(self, waiting: dict[Connection, None] | None, now: float) -> bool:
        if not waiting:
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
