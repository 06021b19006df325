"""The subscription bus: the SDK's ``SubscriptionBus`` carrying the tracker's changes to open listen streams.

:class:`LocalBus` is the bus of one process (SQLite's only case): a write's touched URIs (:mod:`.changes`), handed
over from the writing thread (:meth:`LocalBus.post`, which never blocks), are delivered on the event loop to every
listen stream as ``ResourceUpdated`` events, :data:`~.changes.ANY_READY` and :data:`~.changes.ANY_CLAIMS` turned
into the ready and claims URIs this process's streams subscribed to (:meth:`LocalBus.track`). Other consumers (the
expiry watcher, the board's live page) :meth:`~LocalBus.watch` the same URIs.

:class:`PostgresBus` adds PostgreSQL ``LISTEN``/``NOTIFY`` so a write on one replica reaches the listeners of every
replica sharing the database: each write's URIs are sent (by a thread with its own connection, so the writer does
not wait) as one notification on :data:`CHANNEL`, and a listening thread hands what other replicas sent to its own
local delivery. A notification is at most 8,000 bytes (PostgreSQL's limit): longer batches go as several. When the
listening connection is lost, events may have been missed, and there is no replay: the bus ends every open listen
stream (``on_lost``), whose clients listen again and refetch, as the protocol expects of a dropped stream.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Final

from bee_tracker.listening import changes, uris

if TYPE_CHECKING:
    from mcp.server.subscriptions import ServerEvent

    from bee_tracker.store.feed import Committed

logger = logging.getLogger("bee.tracker.listening")

#: The PostgreSQL channel replicas tell each other their writes on.
CHANNEL: Final = "bee_tracker_changes"
#: PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more.
_MAX_PAYLOAD: Final = 7900
#: How long the threads wait before connecting again after losing their connection.
_RECONNECT_SECONDS: Final = 1.0

Watcher = Callable[[list[str]], None]


class LocalBus:
    """One process's bus (see the module docstring). ``subscribe``/``publish`` are the SDK's ``SubscriptionBus``."""

    def __init__(self) -> None:
        self._listeners: dict[object, Callable[[ServerEvent], None]] = {}
        self._watchers: dict[object, Watcher] = {}
        self._ready: Counter[str] = Counter()
        self._claims: Counter[str] = Counter()
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Makes the SDK's ResourceUpdated event: given once the SDK is imported (:meth:`serve_events`). Nothing is
        #: imported on delivery: the server's build imports the SDK in a thread of its own meanwhile, and two
        #: threads importing one module at once can deadlock on its import lock.
        self._event: Callable[[str], ServerEvent] | None = None

    # -- the SDK's SubscriptionBus ---------------------------------------------------------------------------

    async def publish(self, event: ServerEvent) -> None:
        """Deliver ``event`` to this process's listeners (a resource update as :meth:`deliver` does)."""
        from mcp.server.subscriptions import ResourceUpdated

        if isinstance(event, ResourceUpdated):
            self.deliver([event.uri])
            return
        for listener in list(self._listeners.values()):
            listener(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        token = object()
        self._listeners[token] = listener

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe

    # -- the tracker's side ----------------------------------------------------------------------------------

    def serve_events(self, event: Callable[[str], ServerEvent]) -> None:
        """Deliver to listen streams from now on, making each event with ``event`` (the SDK's ``ResourceUpdated``)."""
        self._event = event

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Deliver on ``loop`` (the server's), from now on."""
        self._loop = loop

    def watch(self, watcher: Watcher) -> Callable[[], None]:
        """Call ``watcher`` on the loop with every batch of URIs delivered; return what stops it."""
        token = object()
        self._watchers[token] = watcher

        def unwatch() -> None:
            self._watchers.pop(token, None)

        return unwatch

    def track(self, subscribed: Iterable[str]) -> Callable[[], None]:
        """Count a listen stream's ready and claims URIs (what the stand-ins expand to) until the returned call."""
        parsed = [(uri, uris.parse(uri)) for uri in subscribed if uri.startswith(uris.PREFIX)]
        ready = Counter(uri for uri, resource in parsed if isinstance(resource, uris.Ready))
        claims = Counter(uri for uri, resource in parsed if isinstance(resource, uris.Claims))
        self._ready.update(ready)
        self._claims.update(claims)

        def untrack() -> None:
            self._ready.subtract(ready)
            self._claims.subtract(claims)
            self._ready += Counter()  # drop counts at zero
            self._claims += Counter()

        return untrack

    def committed(self, committed: Committed) -> None:
        """The store's feed listener: called in the writing thread, returns at once."""
        self.post(changes.touched(committed))

    def post(self, touched: list[str]) -> None:
        """Deliver ``touched`` on the loop; callable from any thread, never blocks (dropped before :meth:`bind`)."""
        self.post_here(touched)

    def post_here(self, touched: list[str]) -> None:
        """Deliver ``touched`` to this process's streams and watchers, on the loop (from any thread)."""
        loop = self._loop
        if touched and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.deliver, touched)

    def expanded(self, touched: Iterable[str]) -> list[str]:
        """``touched`` with the stand-ins replaced by the subscribed URIs they stand for, each once."""
        found: dict[str, None] = {}
        for uri in touched:
            if uri == changes.ANY_READY:
                found.update(dict.fromkeys(self._ready))
            elif uri == changes.ANY_CLAIMS:
                found.update(dict.fromkeys(self._claims))
            elif uri != changes.LEASES:
                found[uri] = None
        return list(found)

    def deliver(self, touched: list[str]) -> None:
        """Hand ``touched`` to every watcher and, expanded, to every listen stream (on the loop)."""
        for watcher in list(self._watchers.values()):
            try:
                watcher(touched)
            except Exception:  # one consumer's fault must not keep the others from hearing
                logger.exception("a change watcher failed")
        make = self._event
        if not self._listeners or make is None:
            return
        events = [make(uri) for uri in self.expanded(touched)]
        for listener in list(self._listeners.values()):
            for event in events:
                listener(event)

    @property
    def listeners(self) -> int:
        return len(self._listeners)

    def start(self) -> None:
        """Nothing to start in one process."""

    def stop(self) -> None:
        """Nothing to stop in one process."""


class PostgresBus(LocalBus):
    """:class:`LocalBus` across the replicas sharing one PostgreSQL database (see the module docstring)."""

    def __init__(self, url: str, on_lost: Callable[[], None] = lambda: None) -> None:
        super().__init__()
        self._url = url
        self._on_lost = on_lost
        #: Tells this process's notifications from other replicas'.
        self._origin = uuid.uuid4().hex
        self._outbox: queue.SimpleQueue[list[str] | None] = queue.SimpleQueue()
        self._stopping = threading.Event()
        self._threads = [
            threading.Thread(target=self._send_loop, name="bee-bus-notify", daemon=True),
            threading.Thread(target=self._listen_loop, name="bee-bus-listen", daemon=True),
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._outbox.put(None)
        for thread in self._threads:
            if thread.is_alive():
                thread.join(timeout=5)

    def post(self, touched: list[str]) -> None:
        """Deliver here at once, and tell the other replicas (from the sending thread)."""
        self.post_here(touched)
        if touched:
            self._outbox.put(touched)

    def payloads(self, touched: list[str]) -> list[str]:
        """``touched`` as NOTIFY payloads: this bus's origin, then one URI a line, each under PostgreSQL's limit."""
        found, lines, size = [], [self._origin], len(self._origin)
        for uri in touched:
            if size + 1 + len(uri) > _MAX_PAYLOAD and len(lines) > 1:
                found.append("\n".join(lines))
                lines, size = [self._origin], len(self._origin)
            lines.append(uri)
            size += 1 + len(uri)
        found.append("\n".join(lines))
        return found

    def heard(self, payload: str) -> None:
        """One notification: another replica's URIs, delivered here (this bus's own were delivered when posted)."""
        origin, _, rest = payload.partition("\n")
        if origin != self._origin and rest:
            self.post_here(rest.split("\n"))

    def _batch(self, first: list[str]) -> list[str] | None:
        """``first`` and whatever else is waiting, as one batch (None: stop)."""
        batch = dict.fromkeys(first)
        while True:
            try:
                more = self._outbox.get_nowait()
            except queue.Empty:
                return list(batch)
            if more is None:
                return None
            batch.update(dict.fromkeys(more))

    def _send_loop(self) -> None:
        import psycopg

        connection = None
        while not self._stopping.is_set():
            first = self._outbox.get()
            batch = None if first is None else self._batch(first)
            if batch is None:
                break
            try:
                if connection is None or connection.closed:
                    connection = psycopg.connect(self._url, autocommit=True)
                for payload in self.payloads(batch):
                    connection.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))
            except psycopg.Error as error:
                # The other replicas miss this batch; their listeners refetch on the next one. Never the URL: it may
                # carry a password.
                logger.warning("could not tell the other replicas of a write (%s)", type(error).__name__)
                connection = None
                self._stopping.wait(_RECONNECT_SECONDS)
        if connection is not None:
            connection.close()

    def _listen_loop(self) -> None:
        import psycopg

        while not self._stopping.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True) as connection:
                    connection.execute(f"LISTEN {CHANNEL}")
                    while not self._stopping.is_set():
                        for notice in connection.notifies(timeout=1.0):
                            self.heard(notice.payload)
            except psycopg.Error as error:
                logger.warning("lost the connection replicas tell their writes on (%s)", type(error).__name__)
                loop = self._loop
                if loop is not None and not loop.is_closed():
                    loop.call_soon_threadsafe(self._on_lost)
                self._stopping.wait(_RECONNECT_SECONDS)
