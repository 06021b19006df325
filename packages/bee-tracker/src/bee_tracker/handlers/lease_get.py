"""lease_get: whether a lease is live now, by the tracker's clock (Bee's extension)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_tracker.model import epoch
from bee_tracker.store import leases
from bee_tracker.store.ops import Read

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import LeaseGetArgs, LeaseGetData


def lease_get(op: Read, args: LeaseGetArgs) -> LeaseGetData:
    """The lease as of this call; reading it never renews it.

    Raises:
        BeeError: ``not_found`` for a lease the tracker does not hold.
    """
    at = epoch(op.now)
    assert at is not None, "the tracker's own clock is always a valid time"
    return leases.load(op.tx, args["id"]).view(at, op.now)
