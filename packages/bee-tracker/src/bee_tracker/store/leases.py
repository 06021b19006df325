"""Leases: a checkout's binding to a collaboration space, held by the tracker and expiring by the tracker's clock.

Bee's own extension, not part of Beads (docs/hosts/tracker.md, "Leases"); its tools are ``lease_join``,
``lease_renew``, ``lease_get`` and ``lease_leave`` in :mod:`bee_tracker.handlers`. A lease is live from its join until
``ttl_seconds`` after its latest join or renewal, or until its holder leaves it. Liveness is always decided here,
against the time of the call on the tracker; no client clock is ever trusted. A lease that is no longer live never
becomes live again: joining again makes a new lease with a new id, so whoever still holds the old id sees it dead.
Only the holder renews or leaves a lease; any authenticated actor may read one.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bee_contracts import BeeError, ErrorCode
from bee_tracker.model import timestamp
from bee_tracker.store.db import Tx

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import LeaseGetData as LeaseData

#: Live leases one actor may hold at once, across spaces (each join costs a row; this bounds them).
MAX_LIVE_PER_HOLDER = 100

#: Ended leases are deleted this long after they ended (a later read of one is ``not_found``).
FORGET_AFTER_SECONDS = 7 * 86400

_COLUMNS = "id, space, holder, checkout_id, ttl_seconds, joined_at, renewed_at, expires_at, expires_epoch, left_at"


@dataclass(frozen=True)
class Lease:
    """One row of ``leases``."""

    id: str
    space: str
    holder: str
    checkout_id: str
    ttl_seconds: int
    joined_at: str
    renewed_at: str
    expires_at: str
    expires_epoch: float
    left_at: str | None

    def live(self, at: float) -> bool:
        """Whether the lease is live at ``at`` (seconds since the epoch, the tracker's clock)."""
        return self.left_at is None and self.expires_epoch > at

    def view(self, at: float, now: str) -> LeaseData:
        """What every lease tool answers about the lease, as of ``at`` (which ``now`` spells)."""
        live = self.live(at)
        return {
            "id": self.id,
            "space": self.space,
            "holder": self.holder,
            "checkout_id": self.checkout_id,
            "ttl_seconds": self.ttl_seconds,
            "joined_at": self.joined_at,
            "renewed_at": self.renewed_at,
            "expires_at": self.expires_at,
            "left_at": self.left_at,
            "live": live,
            "expires_in_seconds": round(self.expires_epoch - at, 3) if live else 0,
            "now": now,
        }


def new_id() -> str:
    """A fresh lease id: 128 random bits, so an id cannot be guessed from another."""
    return f"lease-{secrets.token_hex(16)}"


def load(tx: Tx, lease_id: str) -> Lease:
    """The lease ``lease_id``, live or not.

    Raises:
        BeeError: ``not_found`` when the tracker holds no such lease (never made, or forgotten a week after it
            ended).
    """
    found = tx.row(f"SELECT {_COLUMNS} FROM leases WHERE id = ?", [lease_id])
    if found is None:
        raise BeeError(
            ErrorCode.NOT_FOUND,
            f"no lease {lease_id} on this tracker (leases are forgotten {FORGET_AFTER_SECONDS // 86400} days after "
            "they end); join the space again",
            details={"id": lease_id},
        )
    return _lease(found)


def find_live(tx: Tx, holder: str, space: str, checkout_id: str, at: float) -> Lease | None:
    """The live lease ``holder`` holds for ``checkout_id`` in ``space``, if any."""
    found = tx.row(
        f"SELECT {_COLUMNS} FROM leases WHERE holder = ? AND space = ? AND checkout_id = ? AND left_at IS NULL "
        "AND expires_epoch > ? ORDER BY expires_epoch DESC",
        [holder, space, checkout_id, at],
    )
    return _lease(found) if found else None


def live_count(tx: Tx, holder: str, at: float) -> int:
    found = tx.row(
        "SELECT COUNT(*) FROM leases WHERE holder = ? AND left_at IS NULL AND expires_epoch > ?", [holder, at]
    )
    return int(found[0]) if found else 0


def insert(tx: Tx, *, space: str, holder: str, checkout_id: str, ttl: int, now: str, at: float) -> str:
    """Record a new lease live until ``ttl`` seconds after ``at``; return its id."""
    lease_id = new_id()
    tx.run(
        f"INSERT INTO leases ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
        [lease_id, space, holder, checkout_id, ttl, now, now, timestamp(at + ttl), at + ttl],
    )
    return lease_id


def extend(tx: Tx, lease: Lease, *, ttl: int, now: str, at: float) -> bool:
    """Make ``lease`` live until ``ttl`` seconds after ``at``, if it is still live; return whether it was.

    The condition is part of the UPDATE, so a lease that a concurrent call left or that expired a moment ago is never
    brought back.
    """
    changed = tx.run(
        "UPDATE leases SET ttl_seconds = ?, renewed_at = ?, expires_at = ?, expires_epoch = ? "
        "WHERE id = ? AND left_at IS NULL AND expires_epoch > ?",
        [ttl, now, timestamp(at + ttl), at + ttl, lease.id, at],
    )
    return changed == 1


def end(tx: Tx, lease: Lease, *, now: str, at: float) -> bool:
    """End ``lease`` now if it is live; return whether it was."""
    changed = tx.run(
        "UPDATE leases SET left_at = ?, expires_at = ?, expires_epoch = ? "
        "WHERE id = ? AND left_at IS NULL AND expires_epoch > ?",
        [now, now, at, lease.id, at],
    )
    return changed == 1


def forget_ended(tx: Tx, at: float) -> None:
    """Delete leases that ended more than :data:`FORGET_AFTER_SECONDS` before ``at``."""
    tx.run("DELETE FROM leases WHERE expires_epoch < ?", [at - FORGET_AFTER_SECONDS])


def require_holder(lease: Lease, actor: str, doing: str) -> None:
    """Raises: BeeError: ``forbidden`` unless ``actor`` holds ``lease``."""
    if lease.holder != actor:
        raise BeeError(
            ErrorCode.FORBIDDEN,
            f"cannot {doing} lease {lease.id}: it is held by {lease.holder}, and only its holder may {doing} it",
            details={"id": lease.id, "holder": lease.holder},
        )


def not_live(lease: Lease) -> BeeError:
    """The error for a lease that has ended: it stays ended, so the way on is a new join."""
    how = f"was left at {lease.left_at}" if lease.left_at else f"expired at {lease.expires_at}"
    return BeeError(
        ErrorCode.BINDING_NOT_LIVE,
        f"lease {lease.id} {how} and cannot be renewed; join space {lease.space!r} again",
        details={"id": lease.id, "space": lease.space, "expires_at": lease.expires_at, "left_at": lease.left_at},
    )


def _lease(row: tuple[Any, ...]) -> Lease:
    lease_id, space, holder, checkout_id, ttl, joined_at, renewed_at, expires_at, expires_epoch, left_at = row
    return Lease(
        id=lease_id,
        space=space,
        holder=holder,
        checkout_id=checkout_id,
        ttl_seconds=int(ttl),
        joined_at=joined_at,
        renewed_at=renewed_at,
        expires_at=expires_at,
        expires_epoch=float(expires_epoch),
        left_at=left_at,
    )
