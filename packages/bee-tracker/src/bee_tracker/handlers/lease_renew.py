"""lease_renew: keep one's live lease alive for another ttl (Bee's extension)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_tracker.model import epoch
from bee_tracker.store import leases
from bee_tracker.store.ops import Write

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import LeaseRenewArgs, LeaseRenewData


def lease_renew(op: Write, args: LeaseRenewArgs) -> LeaseRenewData:
    """Make the actor's live lease live ``ttl_seconds`` (default: its own ttl) from now.

    Raises:
        BeeError: ``not_found``; ``forbidden`` unless the actor holds the lease; ``binding_not_live`` when it has
            expired or been left (it stays ended).
    """
    at = epoch(op.now)
    assert at is not None, "the tracker's own clock is always a valid time"
    lease = leases.load(op.tx, args["id"])
    leases.require_holder(lease, op.actor, "renew")
    if not leases.extend(op.tx, lease, ttl=args.get("ttl_seconds", lease.ttl_seconds), now=op.now, at=at):
        raise leases.not_live(leases.load(op.tx, lease.id))
    return leases.load(op.tx, lease.id).view(at, op.now)
