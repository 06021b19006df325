"""claim: atomically become the assignee of an issue (a given one, or the next ready) and set it in progress."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, cast

from bee_contracts import BeeError, ErrorCode
from bee_tracker import claims
from bee_tracker.store import claimlease, reads
from bee_tracker.store.ops import Write
from bee_tracker.store.records import SUMMARY_SELECT, IssueRow, listed

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import ClaimArgs, ClaimData

#: Issues a claim of the next one passes over (taken meanwhile by a racing claimer) before it answers busy.
_NEXT_TRIES: Final = 64


def claim(op: Write, args: ClaimArgs) -> ClaimData:
    """Claim the issue ``id`` for the actor, or without ``id`` the next ready one (:func:`claim_next`); claiming
    one's own claim again succeeds (``already_held``) and renews its lease. The first claim records ``started_at`` in
    the issue's line, where bd writes it (after ``updated_at``); a later one keeps it.

    The issue's row is locked before the check, so of several claimers exactly one wins. A claim whose lease has
    expired (by the database's clock) is over: the claim takes the issue, recording whom it took it from.

    Raises:
        BeeError: ``conflict`` when someone else holds the claim (naming them, and until when their lease holds) or
            the issue is closed; ``not_found``; ``invalid_argument`` for ``priority`` or ``labels`` with an id.
    """
    if "id" not in args:
        return claim_next(op, args, args.get("lease_seconds"))
    for name in ("priority", "labels"):
        if name in args:
            raise BeeError(
                ErrorCode.INVALID_ARGUMENT,
                f"{name} chooses the next ready issue and goes without id; give either an id or the filters",
                details={"argument": name},
            )
    return take(op, op.issue(args["id"], fence=False), args.get("lease_seconds"))


def take(op: Write, issue: IssueRow, lease_seconds: int | None) -> ClaimData:
    """Claim the loaded (and locked) ``issue`` for the actor with a lease of ``lease_seconds`` (default: the
    tracker's).

    Raises:
        BeeError: ``conflict`` when another holds it or it is closed.
    """
    lease = issue.lease
    holder = claims.holder_of(issue.fields["assignee"], issue.fields["status"])
    if not issue.lease_expired:
        if holder == op.actor and issue.fields["status"] == "in_progress":
            return _renewed(op, issue, lease_seconds)
        if holder is not None and holder != op.actor:
            raise _held(issue, holder)
    if issue.fields["status"] == "closed":
        raise BeeError(
            ErrorCode.CONFLICT,
            f"issue {issue.id} is closed; reopen it with update before claiming",
            details={"id": issue.id},
        )
    lost = holder if issue.lease_expired else None
    # As bd (1.0.1 on) does, the first start records started_at; a later one keeps it, but a claim taken from an
    # expired one starts afresh (Beads' reclaim clears it).
    started = {"started_at": op.now} if lost or not issue.extra.get("started_at") else {}
    op.set(issue, kept=started, assignee=op.actor, status="in_progress")
    ttl = lease_seconds if lease_seconds is not None else op.claim_ttl
    granted = claimlease.grant(
        op.tx,
        issue.id,
        op.actor,
        ttl,
        now=op.clock(),
        node=op.replica,
        lost=(lost, lease.expires_at if lease else None) if lost is not None and lost != op.actor else None,
    )
    if lease is not None or granted.ttl_seconds is not None:
        op.leased(issue.id)
    if lost is not None:
        expired_at = lease.expires_at if lease else None
        op.record(issue.id, state=True, reclaimed={"from": lost, "expired_at": expired_at, "by": op.actor})
    answer = _answer(op, issue.id, granted, already_held=False)
    if lost is not None:
        answer["reclaimed_from"] = lost
    return answer


def _renewed(op: Write, issue: IssueRow, lease_seconds: int | None) -> ClaimData:
    """The actor claims its own live claim again: its lease is renewed (or granted, when the claim had none and one
    is asked for or set by default)."""
    lease = issue.lease
    ttl = lease_seconds if lease_seconds is not None else (lease.ttl_seconds if lease else None) or op.claim_ttl
    if lease is None:
        granted = claimlease.grant(op.tx, issue.id, op.actor, ttl, now=op.clock(), node=op.replica)
    else:
        granted = claimlease.renew(op.tx, issue.id, lease, now=op.clock(), node=op.replica, ttl=ttl)
    if granted.ttl_seconds is not None:
        op.leased(issue.id)
    return _answer(op, issue.id, granted, already_held=True)


def _answer(op: Write, issue_id: str, lease: claimlease.Lease, *, already_held: bool) -> ClaimData:
    """What a claim answers: the issue's state after it, and the claim's lease."""
    answer = cast("ClaimData", dict(op.state(issue_id)))  # IssueState's keys, then the tool's own
    answer["claimed"] = True
    answer["already_held"] = already_held
    answer["lease_seconds"] = lease.ttl_seconds
    answer["lease_expires_at"] = lease.expires_at
    return answer


def _held(issue: IssueRow, holder: str) -> BeeError:
    lease = issue.lease
    if lease is not None and lease.expires_at is not None:
        until = (
            f" until {lease.expires_at} (a lease of {lease.ttl_seconds} s that their claims and writes renew); ask "
            "them to release or hand it off, or claim it again once the lease has expired"
        )
    else:
        until = "; the claim has no lease and never expires, so ask them to release or hand it off"
    return BeeError(
        ErrorCode.CONFLICT,
        f"issue {issue.id} is claimed by {holder}{until}",
        details={
            "id": issue.id,
            "assignee": holder,
            "holder": holder,
            "lease_expires_at": lease.expires_at if lease else None,
        },
    )


def claim_next(op: Write, filters: Any, lease_seconds: int | None) -> ClaimData:
    """Claim the first issue of ready's order under ready's ``filters`` (``priority``, ``labels``) that nobody holds
    (or whose claim's lease has expired), atomically; ``{"claimed": False}`` when there is none.

    On PostgreSQL each candidate is locked with SKIP LOCKED, so racing claimers (on any replica) pass over the
    issues others are taking instead of waiting for them, and each gets a different issue; the one taken is checked
    again once held (another claimer may have committed it since the query began). On SQLite the single writer
    already excludes the others.

    Raises:
        BeeError: ``busy`` (retryable) when every candidate tried was taken meanwhile.
    """
    from bee_tracker.handlers.ready import conditions

    where, params = conditions(op, filters)
    # Nobody holds it: no assignee, or an expired lease (the only way an issue in progress is ready).
    where.append(f"(i.assignee IS NULL OR i.assignee = '' OR r.lease_epoch <= {op.tx.clock})")
    tried: list[str] = []
    for _ in range(_NEXT_TRIES):
        skip = f" AND i.id NOT IN ({', '.join('?' for _ in tried)})" if tried else ""
        found = op.tx.lock_first_free(
            f"SELECT i.id FROM {reads.LISTED} WHERE {' AND '.join(where)}{skip} ORDER BY {reads.ORDER} LIMIT 1",
            [*params, *tried],
            "i",
        )
        if found is None:
            return {"claimed": False}
        issue = op.issue(str(found[0]), fence=False)
        if _free(issue):
            answer = take(op, issue, lease_seconds)
            row = op.tx.row(f"SELECT {SUMMARY_SELECT} FROM issues i WHERE i.id = ?", [issue.id])
            assert row is not None, "the issue was claimed in this very transaction"
            answer["issue"] = listed(row, reads.labels_for(op.tx, [issue.id])[issue.id])
            return answer
        tried.append(issue.id)
    raise BeeError(
        ErrorCode.BUSY,
        f"the next {_NEXT_TRIES} ready issues were all taken by other claimers meanwhile; claim again",
        details={"retryAfterSeconds": 1},
    )


def _free(issue: IssueRow) -> bool:
    """Whether a claim of the next issue may take ``issue``, as it reads now that it is held."""
    ready_status = issue.fields["status"] == "open" or issue.lease_expired
    return ready_status and claims.holder(issue) is None
