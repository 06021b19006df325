"""``subscriptions/listen`` with the tracker's bounds: the SDK's ``ListenHandler`` behind the caps it lacks.

The SDK's handler caps the streams open in a process and each stream's backlog (a listener that stops reading is
ended at :attr:`ListenLimits.buffer` undelivered events, never buffered without limit; it listens again and
refetches). Before a stream reaches it, this handler refuses:

- a stream that subscribes to more than :attr:`ListenLimits.uris` resources (the cap per connection);
- a resource URI the tracker does not serve (``skill://`` files are served, and never change while it runs);
- a stream beyond :attr:`ListenLimits.per_actor` open streams of the same actor in this process (the cap per actor).

Each refusal is a JSON-RPC error before the stream's acknowledgement, whose message says what to change. The HTTP
edge counts listen streams apart from calls (:mod:`bee_hostkit.http.edge`), so open streams never take a call's
place.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from bee_contracts import BeeError
from bee_tracker import skills
from bee_tracker.listening import uris
from bee_tracker.listening.bus import LocalBus
from bee_tracker.listening.limits import ListenLimits

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server.context import ServerRequestContext


def _refused(code: int, message: str, bee_code: str, **details: Any) -> Exception:
    from mcp.shared.exceptions import MCPError

    retryable = bee_code == "busy"
    return MCPError(code, message, {"code": bee_code, "retryable": retryable, **details})


def check_uris(subscribed: list[str], limits: ListenLimits) -> None:
    """Refuse a listen's resource subscriptions past the cap, or naming a resource the tracker does not serve."""
    import mcp_types as types

    if len(subscribed) > limits.uris:
        raise _refused(
            types.INVALID_PARAMS,
            f"a listen stream subscribes to at most {limits.uris} resources, not {len(subscribed)}; subscribe to a "
            "ready URI with a filter rather than to each issue, or open another stream",
            "invalid_argument",
            limit=limits.uris,
        )
    for uri in subscribed:
        if skills.find_file(uri) is not None:
            continue
        try:
            resource = uris.parse(uri)
        except BeeError as error:
            raise _refused(types.INVALID_PARAMS, error.message, "invalid_argument", uri=uri) from None
        if isinstance(resource, uris.Log):
            raise _refused(
                types.INVALID_PARAMS,
                f"the audit log ({uri}) is read with resources/read, not listened to: every write changes it; listen "
                "on bee://tracker/ready, an issue or your claims instead",
                "invalid_argument",
                uri=uri,
            )


class BoundedListen:
    """The ``on_subscriptions_listen`` handler (see the module docstring); ``actor_of`` reads a request's actor."""

    def __init__(self, bus: LocalBus, limits: ListenLimits, actor_of: Callable[[Mapping[str, Any]], str | None]):
        from mcp.server.subscriptions import ListenHandler

        self._bus = bus
        self._limits = limits
        self._actor_of = actor_of
        self._open: Counter[str] = Counter()
        self.handler = ListenHandler(bus, max_subscriptions=limits.streams, max_buffered_events=limits.buffer)

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        import mcp_types as types

        subscribed = list(params.notifications.resource_subscriptions or ())
        check_uris(subscribed, self._limits)
        actor = self._actor_of(getattr(ctx.request, "scope", {})) or ""
        if self._open[actor] >= self._limits.per_actor:
            raise _refused(
                types.INTERNAL_ERROR,
                f"{actor or 'this caller'} already has {self._limits.per_actor} listen streams open here, the most one "
                "actor may; close one (one stream can subscribe to many resources) and listen again",
                "busy",
                limit=self._limits.per_actor,
            )
        self._open[actor] += 1
        untrack = self._bus.track(subscribed)
        try:
            return await self.handler(ctx, params)
        finally:
            untrack()
            self._open[actor] -= 1
            if not self._open[actor]:
                del self._open[actor]

    def close(self) -> None:
        """End every open stream gracefully (their clients listen again and refetch)."""
        self.handler.close()
