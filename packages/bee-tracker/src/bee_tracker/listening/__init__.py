"""Agents woken instead of polling: the tracker's resources, ``subscriptions/listen`` and the bus between replicas.

:class:`Listening` is what the host builds once: the bus (in process on SQLite, PostgreSQL ``LISTEN``/``NOTIFY`` on
PostgreSQL, :mod:`.bus`) fed by the store's change feed, the lease expiry watcher (:mod:`.expiry`), on SQLite the
watcher of other processes' writes (:mod:`.foreign`), and the MCP
handlers it adds to the server (``resources/templates/list``, the tracker's ``resources/read``, the bounded
``subscriptions/listen`` of :mod:`.listen`). The board's live page watches the same bus.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from bee_tracker.listening.bus import LocalBus, PostgresBus
from bee_tracker.listening.expiry import ExpiryWatcher
from bee_tracker.listening.foreign import ForeignWrites
from bee_tracker.listening.limits import ListenLimits

if TYPE_CHECKING:
    from mcp.server import Server

    from bee_tracker.listening.listen import BoundedListen
    from bee_tracker.store import SqlStore

__all__ = ["ListenLimits", "Listening", "LocalBus", "PostgresBus"]


class Listening:
    """The bus, the expiry watcher and the listen handler of one tracker process (see the module docstring)."""

    def __init__(
        self,
        store: SqlStore,
        store_url: str,
        limits: ListenLimits,
        actor_of: Callable[[Mapping[str, Any]], str | None],
    ) -> None:
        self.store = store
        self.limits = limits
        self.actor_of = actor_of
        postgres = store.db.dialect == "postgres"
        self.bus: LocalBus = PostgresBus(store_url, on_lost=self.end_streams) if postgres else LocalBus()
        self.watcher = ExpiryWatcher(store, self.bus.post)
        # Other processes' writes on a SQLite store (on PostgreSQL the replicas tell each other through the bus).
        self.foreign = None if postgres else ForeignWrites(store, self.bus.post)
        self.handler: BoundedListen | None = None
        self._stops: list[Callable[[], None]] = []

    def attach(self, server: Server[Any]) -> None:
        """Serve ``subscriptions/listen`` and ``resources/templates/list`` on ``server`` (built with the SDK)."""
        import mcp_types as types
        from mcp.server.subscriptions import ResourceUpdated

        from bee_tracker.listening.listen import BoundedListen
        from bee_tracker.listening.resources import templates

        self.bus.serve_events(ResourceUpdated)
        self.handler = BoundedListen(self.bus, self.limits, self.actor_of)

        async def list_templates(
            ctx: Any, params: types.PaginatedRequestParams | None
        ) -> types.ListResourceTemplatesResult:
            return templates()

        server.add_request_handler("subscriptions/listen", types.SubscriptionsListenRequestParams, self.handler)
        server.add_request_handler("resources/templates/list", types.PaginatedRequestParams, list_templates)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Deliver on ``loop``, hear the store's writes (and the other replicas'), watch the leases."""
        self.bus.bind(loop)
        self.bus.start()
        self._stops = [self.store.feed.subscribe(self.bus.committed), self.bus.watch(self.watcher.heard)]
        self.watcher.start()
        if self.foreign is not None:
            self.foreign.start()

    def end_streams(self) -> None:
        """End every open listen stream gracefully: its client listens again and refetches."""
        if self.handler is not None:
            self.handler.close()

    def stop(self) -> None:
        self.end_streams()
        for stop in self._stops:
            stop()
        self.watcher.stop()
        if self.foreign is not None:
            self.foreign.stop()
        self.bus.stop()
