"""lease_join: bind a checkout to a collaboration space with a lease the tracker expires (Bee's extension)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from bee_contracts import BeeError, ErrorCode
from bee_tracker.model import epoch
from bee_tracker.store import leases
from bee_tracker.store.ops import Write

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import LeaseJoinArgs, LeaseJoinData


def lease_join(op: Write, args: LeaseJoinArgs) -> LeaseJoinData:
    """A lease for the actor's ``checkout_id`` in ``space``, live ``ttl_seconds`` from now: the live one it already
    has, renewed (``created: false``), or a new one.

    Raises:
        BeeError: ``forbidden`` when the actor already holds :data:`~bee_tracker.leases.MAX_LIVE_PER_HOLDER` live
            leases.
    """
    at = epoch(op.now)
    assert at is not None, "the tracker's own clock is always a valid time"
    space, checkout_id, ttl = args["space"], args["checkout_id"], args["ttl_seconds"]
    # One actor's joins queue here, so two joins of one checkout cannot both insert, nor pass the cap together.
    op.tx.lock_name(json.dumps(["leases", op.actor]))
    leases.forget_ended(op.tx, at)
    found = leases.find_live(op.tx, op.actor, space, checkout_id, at)
    if found is not None and leases.extend(op.tx, found, ttl=ttl, now=op.now, at=at):
        lease_id, created = found.id, False
    else:
        held = leases.live_count(op.tx, op.actor, at)
        if held >= leases.MAX_LIVE_PER_HOLDER:
            raise BeeError(
                ErrorCode.FORBIDDEN,
                f"{op.actor} already holds {held} live leases, the most one actor may; leave some (lease_leave) or "
                "let them expire",
                details={"live": held, "limit": leases.MAX_LIVE_PER_HOLDER},
            )
        lease_id = leases.insert(
            op.tx, space=space, holder=op.actor, checkout_id=checkout_id, ttl=ttl, now=op.now, at=at
        )
        created = True
    return {**leases.load(op.tx, lease_id).view(at, op.now), "created": created}
