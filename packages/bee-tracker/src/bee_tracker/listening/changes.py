"""What a committed write means to listeners: the resource URIs it touched, from the store's change feed.

A write names issues (:class:`~bee_tracker.store.feed.Committed`); a listener subscribed to resources. This maps the
one to the other, once, where the write committed:

- every issue the write changed, or whose readiness it turned, touches ``bee://tracker/issues/{id}``;
- an issue entering or leaving ``ready``, or a ready issue edited (its place in the order may move), touches the
  ready queue: :data:`ANY_READY` stands for every filter, because the writer cannot know the filters other
  replicas' listeners use; each replica hands it to the ready URIs its own listeners subscribed
  (:class:`~.bus.LocalBus`), whose clients refetch (events are level triggers: "this may have changed");
- a claim taken, released, completed or re-leased touches the writer's ``bee://tracker/claims/{actor}``, and
  :data:`ANY_CLAIMS` when the write may have moved someone else's claim (reclaimed from an expired holder, a forced
  release, a hand-off);
- a lease granted, renewed or dropped touches :data:`LEASES`, which no client can subscribe to: it wakes each
  replica's expiry watcher (:mod:`.expiry`), which tells listeners when a claim runs out without anyone writing.
"""

from __future__ import annotations

from typing import Final

from bee_tracker.listening import uris
from bee_tracker.store.feed import Change, Committed

#: Stands for every ready URI a replica's listeners subscribed to.
ANY_READY: Final = uris.READY
#: Stands for every claims URI a replica's listeners subscribed to.
ANY_CLAIMS: Final = uris.CLAIMS
#: A lease moved: expiry watchers ask the store for the next expiry again.
LEASES: Final = uris.PREFIX + "leases"

_READINESS: Final = frozenset({Change.BECAME_READY, Change.LEFT_READY})
_CLAIM: Final = frozenset(
    {Change.CLAIMED, Change.RELEASED, Change.RECLAIMED, Change.CLAIM_EXPIRED, Change.LEASE, Change.COMPLETED}
)
#: Changes and tools that may move a claim the writer does not hold.
_OTHERS: Final = frozenset({Change.RECLAIMED, Change.CLAIM_EXPIRED})
_OTHERS_TOOLS: Final = frozenset({"release --force", "handoff", "update"})


def touched(committed: Committed) -> list[str]:
    """The URIs ``committed`` touched, each once, issues first."""
    found = [uris.issue_uri(change.issue_id) for change in committed.issues]
    readiness = claims = others = False
    for change in committed.issues:
        readiness |= bool(change.changes & _READINESS) or (change.ready and Change.EDITED in change.changes)
        if change.changes & _CLAIM:
            claims = True
            others |= bool(change.changes & _OTHERS) or committed.tool in _OTHERS_TOOLS
    if readiness:
        found.append(ANY_READY)
    if claims:
        found.append(uris.claims_uri(committed.actor))
    if others:
        found.append(ANY_CLAIMS)
    if committed.leases_changed:
        found.append(LEASES)
    return found


def expired(issue_ids: list[str]) -> list[str]:
    """The URIs a claim running out touches: the issues (ready again), the ready queue and whoever held them."""
    return [*(uris.issue_uri(issue_id) for issue_id in issue_ids), ANY_READY, ANY_CLAIMS] if issue_ids else []
