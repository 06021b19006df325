"""lease_leave: end one's lease now (Bee's extension)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_tracker.model import epoch
from bee_tracker.store import leases
from bee_tracker.store.ops import Write

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import LeaseLeaveArgs, LeaseLeaveData


def lease_leave(op: Write, args: LeaseLeaveArgs) -> LeaseLeaveData:
    """End the actor's lease now; a lease that already ended stays as it is (``left: false``).

    Raises:
        BeeError: ``not_found``; ``forbidden`` unless the actor holds the lease.
    """
    at = epoch(op.now)
    assert at is not None, "the tracker's own clock is always a valid time"
    lease = leases.load(op.tx, args["id"])
    leases.require_holder(lease, op.actor, "leave")
    left = leases.end(op.tx, lease, now=op.now, at=at)
    return {**leases.load(op.tx, lease.id).view(at, op.now), "left": left}
