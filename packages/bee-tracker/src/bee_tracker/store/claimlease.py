"""A claim's lease: how long a claim stands without a word from its holder, judged by the database's clock.

A claim carries a lease when the claim asks for one (``lease_seconds``) or the tracker has a default
(``--claim-ttl``); by default it has none and never expires (the design's first rule). A leased claim lives in one row
of ``claim_leases`` (schema migration 8) beside its issue's ``assignee`` and ``status``, which stay the claim's
visible state as Beads writes it. The holder keeps it alive by claiming again and by any write of its own on the
issue (:meth:`~.ops.Write.issue`); each renewal lasts ``ttl_seconds`` from the database's clock (``Tx.clock``), so
every replica sharing the database judges it alike, whatever its own clock says.

An expired lease is applied lazily, never by a sweeper: from the moment the database's clock passes it, the claim is
over. ``ready`` offers the issue again (its readiness row copies the expiry, see :mod:`.readiness`), the next claim
takes it (recording who lost it, when it expired and who took it), and the old holder's next write on it is refused
with ``conflict`` naming whoever holds it now: the taker's row remembers the displaced holder (``lost_by``) for as
long as the taker's claim lasts. This is Beads' reclaim (``internal/storage/issueops/lease.go``: the issue goes back
to ready and the event names the previous owner) without its sweep: Bee's clock is the database's, so no replica's
view is stale and no grace period is needed.

Invariant, as in Beads: a row exists only while its issue is claimed by the row's holder; every write that ends or
moves a claim drops it (:func:`reconcile`, run by :meth:`~.ops.Write.finish`). A row whose lease never expires
(``ttl_seconds`` null) exists only to fence out the holder it displaced.

Beads writes a lease into its interchange forms as three keys of the issue's line (``lease_expires_at``,
``heartbeat_at``, ``lease_granted_node``): an import makes them this row when the issue is claimed (in progress,
with an assignee), as Beads' own import restores them, and an export writes them back (:data:`LINE_KEYS`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from bee_contracts import BeeError, ErrorCode
from bee_tracker.model import MAX_LEASE_SECONDS, MIN_LEASE_SECONDS, epoch, timestamp
from bee_tracker.store.batched import in_batches, marks
from bee_tracker.store.db import Row, Tx

#: The lease Beads grants (its ``DefaultLeaseTTL``): what an imported lease renews by when its line does not say.
BEADS_LEASE_SECONDS: Final = 300

#: The keys of an issue's line that carry its lease, in Beads' order (its ``IssueLease`` group).
LINE_KEYS: Final = ("lease_expires_at", "heartbeat_at", "lease_granted_node")

#: The columns of a lease row, as :func:`from_row` reads them (alias ``l``).
COLUMNS: Final = (
    "l.holder, l.ttl_seconds, l.granted_at, l.heartbeat_at, l.expires_at, l.expires_epoch, l.granted_node, "
    "l.lost_by, l.lost_at"
)
#: How many columns :data:`COLUMNS` are.
WIDTH: Final = 9


@dataclass(frozen=True)
class Lease:
    """One row of ``claim_leases``."""

    holder: str
    #: How long each renewal lasts, or None: the claim never expires (the row only fences out ``lost_by``).
    ttl_seconds: int | None
    granted_at: str
    heartbeat_at: str | None
    expires_at: str | None
    expires_epoch: float | None
    granted_node: str | None
    #: The holder whose expired claim this one took, and when that claim expired.
    lost_by: str | None = None
    lost_at: str | None = None

    def expired(self, now: float) -> bool:
        """Whether the lease has run out at ``now`` (the database's clock)."""
        return self.expires_epoch is not None and self.expires_epoch <= now

    def line_keys(self) -> dict[str, Any]:
        """What the issue's line says of the lease, as Beads writes it (no key for what is unknown)."""
        values = {"lease_expires_at": self.expires_at, "heartbeat_at": self.heartbeat_at}
        values["lease_granted_node"] = self.granted_node
        return {key: value for key, value in values.items() if value is not None and self.expires_at is not None}


def expired_claim(issue_id: str, actor: str, lease: Lease) -> BeeError:
    """The refusal of a write by ``actor`` on ``issue_id`` after ``actor``'s claim on it expired: ``lease`` is the
    expired one (nobody has taken the issue since) or the one of the claim that took it."""
    if lease.holder == actor:
        return BeeError(
            ErrorCode.CONFLICT,
            f"your claim on issue {issue_id} expired at {lease.expires_at}: its lease of {lease.ttl_seconds} s was "
            "not renewed in time by a claim or a write of yours, so this write was not made. Nobody holds the issue "
            "now; claim it again to go on (get it first: someone may have changed it)",
            details={"id": issue_id, "holder": None, "expired_at": lease.expires_at, "lost_by": actor},
        )
    return BeeError(
        ErrorCode.CONFLICT,
        f"your claim on issue {issue_id} expired at {lease.lost_at}, and {lease.holder} holds it now (claimed at "
        f"{lease.granted_at}), so this write was not made. Leave the issue to them, or ask them to hand it back",
        details={"id": issue_id, "holder": lease.holder, "assignee": lease.holder, "expired_at": lease.lost_at},
    )


def from_row(row: Sequence[Any]) -> Lease | None:
    """The lease in the :data:`COLUMNS` of ``row`` (None for a left join that found none)."""
    holder, ttl, granted_at, heartbeat_at, expires_at, expires_epoch, node, lost_by, lost_at = row[:WIDTH]
    if holder is None:
        return None
    return Lease(
        holder=holder,
        ttl_seconds=int(ttl) if ttl is not None else None,
        granted_at=granted_at,
        heartbeat_at=heartbeat_at,
        expires_at=expires_at,
        expires_epoch=float(expires_epoch) if expires_epoch is not None else None,
        granted_node=node,
        lost_by=lost_by,
        lost_at=lost_at,
    )


def now_of(tx: Tx) -> float:
    """The database's clock, in seconds since the epoch."""
    found = tx.row(f"SELECT {tx.clock}")
    assert found is not None, "a SELECT without FROM answers one row"
    return float(found[0])


def grant(
    tx: Tx,
    issue_id: str,
    holder: str,
    ttl: int | None,
    *,
    now: float,
    node: str | None,
    lost: tuple[str, str | None] | None = None,
) -> Lease:
    """Give ``holder``'s claim on ``issue_id`` a lease of ``ttl`` seconds from ``now`` (None: none that expires,
    kept only when ``lost`` names the holder it displaced, and when that holder's lease expired); return it."""
    lease = Lease(
        holder=holder,
        ttl_seconds=ttl,
        granted_at=timestamp(now),
        heartbeat_at=timestamp(now),
        expires_at=timestamp(now + ttl) if ttl is not None else None,
        expires_epoch=now + ttl if ttl is not None else None,
        granted_node=node,
        lost_by=lost[0] if lost else None,
        lost_at=lost[1] if lost else None,
    )
    tx.run("DELETE FROM claim_leases WHERE issue_id = ?", [issue_id])
    if ttl is None and lost is None:
        return lease
    tx.run(
        "INSERT INTO claim_leases (issue_id, holder, ttl_seconds, granted_at, heartbeat_at, expires_at, "
        "expires_epoch, granted_node, lost_by, lost_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            issue_id,
            holder,
            ttl,
            lease.granted_at,
            lease.heartbeat_at,
            lease.expires_at,
            lease.expires_epoch,
            node,
            lease.lost_by,
            lease.lost_at,
        ],
    )
    return lease


def renew(tx: Tx, issue_id: str, lease: Lease, *, now: float, node: str | None, ttl: int | None = None) -> Lease:
    """Renew ``lease`` (live, on ``issue_id``) for ``ttl`` seconds (default: its own) from ``now``; return it.

    The granting replica is kept when it is known (Beads' heartbeat keeps it too), else this one fills it in.
    """
    seconds = ttl if ttl is not None else lease.ttl_seconds
    if seconds is None:
        return lease
    renewed = Lease(
        holder=lease.holder,
        ttl_seconds=seconds,
        granted_at=lease.granted_at,
        heartbeat_at=timestamp(now),
        expires_at=timestamp(now + seconds),
        expires_epoch=now + seconds,
        granted_node=lease.granted_node or node,
        lost_by=lease.lost_by,
        lost_at=lease.lost_at,
    )
    tx.run(
        "UPDATE claim_leases SET ttl_seconds = ?, heartbeat_at = ?, expires_at = ?, expires_epoch = ?, "
        "granted_node = ? WHERE issue_id = ?",
        [seconds, renewed.heartbeat_at, renewed.expires_at, renewed.expires_epoch, renewed.granted_node, issue_id],
    )
    return renewed


def reconcile(tx: Tx, issue_ids: Iterable[str]) -> list[tuple[str, Lease]]:
    """Drop the leases among ``issue_ids`` whose holder no longer holds the issue (released, completed, handed over,
    reassigned); return them with their issues."""
    dropped: list[tuple[str, Lease]] = []
    for batch in in_batches(sorted(set(issue_ids))):
        rows = tx.rows(
            f"SELECT l.issue_id, {COLUMNS} FROM claim_leases l JOIN issues i ON i.id = l.issue_id "
            f"WHERE l.issue_id IN ({marks(batch)}) AND (i.status = 'closed' OR i.assignee IS NULL "
            "OR i.assignee <> l.holder)",
            batch,
        )
        gone = [row[0] for row in rows]
        if gone:
            tx.run(f"DELETE FROM claim_leases WHERE issue_id IN ({marks(gone)})", gone)
        for row in rows:
            lease = from_row(row[1:])
            assert lease is not None, "an inner join found the row"
            dropped.append((row[0], lease))
    return dropped


def load_for(tx: Tx, issue_ids: Sequence[str]) -> dict[str, Lease]:
    """The leases of those of ``issue_ids`` that have one."""
    found: dict[str, Lease] = {}
    for batch in in_batches(issue_ids):
        sql = f"SELECT l.issue_id, {COLUMNS} FROM claim_leases l WHERE l.issue_id IN ({marks(batch)})"
        for row in tx.rows(sql, batch):
            lease = from_row(row[1:])
            if lease is not None:
                found[row[0]] = lease
    return found


# -- the interchange forms -------------------------------------------------------------------------------------


def from_line(extra: Mapping[str, Any], status: Any, assignee: Any) -> Lease | None:
    """The lease an imported line carries (its :data:`LINE_KEYS`), when Beads would restore it: the issue is in
    progress with an assignee, and the keys say a time it expires (and the last heartbeat and the granting replica,
    if they say them, as Beads writes them: times, and a name that is not empty). Otherwise None: the keys stay in
    the line as they came."""
    expires_at, heartbeat_at, node = (extra.get(key) for key in LINE_KEYS)
    expires = epoch(expires_at) if isinstance(expires_at, str) else None
    heartbeat = epoch(heartbeat_at) if isinstance(heartbeat_at, str) else None
    if status != "in_progress" or not isinstance(assignee, str) or not assignee or expires is None:
        return None
    if (heartbeat_at is not None and heartbeat is None) or (node is not None and not (isinstance(node, str) and node)):
        return None
    ttl = round(expires - heartbeat) if heartbeat is not None else None
    return Lease(
        holder=assignee,
        ttl_seconds=ttl if ttl is not None and MIN_LEASE_SECONDS <= ttl <= MAX_LEASE_SECONDS else BEADS_LEASE_SECONDS,
        granted_at=heartbeat_at if isinstance(heartbeat_at, str) else str(expires_at),
        heartbeat_at=heartbeat_at,
        expires_at=expires_at,
        expires_epoch=expires,
        granted_node=node,
    )


#: The columns an import writes of a lease (:func:`import_row`).
IMPORTED: Final = (
    "issue_id",
    "holder",
    "ttl_seconds",
    "granted_at",
    "heartbeat_at",
    "expires_at",
    "expires_epoch",
    "granted_node",
)


def import_row(issue_id: str, lease: Lease) -> tuple[Any, ...]:
    """The :data:`IMPORTED` values of ``lease`` on ``issue_id``."""
    return (
        issue_id,
        lease.holder,
        lease.ttl_seconds,
        lease.granted_at,
        lease.heartbeat_at,
        lease.expires_at,
        lease.expires_epoch,
        lease.granted_node,
    )


# -- listing ----------------------------------------------------------------------------------------------------

#: Every claimed issue with its lease (if any) and whether it has expired (one ``?``-free clock column last).
_LISTING = (
    "SELECT i.id, i.title, i.status, i.assignee, i.extra, {columns}, {clock} FROM issues i "
    "LEFT JOIN claim_leases l ON l.issue_id = i.id "
    "WHERE i.assignee IS NOT NULL AND i.assignee <> '' AND i.status <> 'closed'"
)


def listing(tx: Tx, *, stale_only: bool) -> list[dict[str, Any]]:
    """Every claim, held or expired (only the expired with ``stale_only``), oldest lease first (claims without one
    last), with its holder, since when and until when."""
    sql = _LISTING.format(columns=COLUMNS, clock=tx.clock)
    if stale_only:
        sql += f" AND l.expires_epoch IS NOT NULL AND l.expires_epoch <= {tx.clock}"
    return [_listed(row) for row in tx.rows(sql + " ORDER BY l.expires_epoch IS NULL, l.expires_epoch, i.id")]


def _listed(row: Row) -> dict[str, Any]:
    """One claim of :func:`listing` from a row of its query."""
    issue_id, title, status, assignee, extra_text = row[:5]
    lease = from_row(row[5 : 5 + WIDTH])
    now = float(row[-1])
    extra = json.loads(extra_text) if extra_text else {}
    return {
        "id": issue_id,
        "title": title,
        "status": status,
        "holder": assignee,
        "since": extra.get("started_at"),
        "lease_seconds": lease.ttl_seconds if lease else None,
        "lease_expires_at": lease.expires_at if lease else None,
        "expired": bool(lease and lease.expired(now)),
        "expires_in_seconds": round(lease.expires_epoch - now, 3) if lease and lease.expires_epoch else None,
    }


def next_expiry(tx: Tx) -> tuple[str, float, float] | None:
    """The live lease that expires first: ``(issue id, expiry, database clock now)`` in seconds since the epoch, or
    None when no lease is live."""
    found = tx.row(
        f"SELECT l.issue_id, l.expires_epoch, {tx.clock} FROM claim_leases l "
        f"WHERE l.expires_epoch IS NOT NULL AND l.expires_epoch > {tx.clock} ORDER BY l.expires_epoch LIMIT 1"
    )
    return (str(found[0]), float(found[1]), float(found[2])) if found else None


def expiries(tx: Tx, since: float | None) -> tuple[list[str], float | None, float]:
    """What an expiry watcher needs: the issues whose lease ran out after ``since`` (none when ``since`` is None),
    the next expiry still to come (None: no live lease) and the database's clock now, in seconds since the epoch."""
    found = tx.row(f"SELECT {tx.clock}")
    assert found is not None
    now = float(found[0])
    ran_out: list[str] = []
    if since is not None:
        ran_out = [
            str(row[0])
            for row in tx.rows(
                "SELECT issue_id FROM claim_leases WHERE expires_epoch > ? AND expires_epoch <= ? ORDER BY issue_id",
                [since, now],
            )
        ]
    upcoming = tx.row("SELECT MIN(expires_epoch) FROM claim_leases WHERE expires_epoch > ?", [now])
    return ran_out, float(upcoming[0]) if upcoming and upcoming[0] is not None else None, now
