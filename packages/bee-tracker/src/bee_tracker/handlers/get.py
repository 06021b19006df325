"""get: one issue whole, with its neighbourhood, newest comments and history, always within the result limit.

Everything ``get`` reads is keyed by the requested id (an issue's id is stored verbatim), so it is read in one
:meth:`~bee_tracker.store.db.Tx.batch` built in one place (:func:`_statements`): on PostgreSQL one round trip, and a
second only for an issue that is blocked or held, to name why.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bee_tracker import claims
from bee_tracker.model import (
    COMMENTS_MAX_BYTES,
    DEPENDENTS_MAX_BYTES,
    DEPENDS_ON_MAX_BYTES,
    HISTORY_LIMIT,
    HISTORY_MAX_BYTES,
    TOMBSTONE,
    epoch,
)
from bee_tracker.store import kept, records
from bee_tracker.store.blockers import blocked_by_flags
from bee_tracker.store.bounds import fitting
from bee_tracker.store.db import Row, Statement
from bee_tracker.store.ops import Read
from bee_tracker.store.readiness import ready_now

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import (
        GetArgs,
        GetData,
        GetDataClaim,
        GetDataDependent,
        GetDataDependsOnItem,
        GetDataHistoryItem,
    )

#: Most neighbours read per list; their shares hold far fewer, and the counts say how many there are.
_NEIGHBOURS_READ = 1000

#: What the issue depends on, in its own order, with whether a missing target was deleted (a tombstone).
_DEPENDS_ON = (
    "SELECT d.depends_on_id, d.type, t.title, t.status, "
    "EXISTS (SELECT 1 FROM kept_records k WHERE k.issue_id = d.depends_on_id AND k.kind = ?) "
    "FROM dependencies d LEFT JOIN issues t ON t.id = d.depends_on_id "
    "WHERE d.issue_id = ? ORDER BY d.position LIMIT ?"
)
#: Live issues that depend on this one (children included), by id.
_DEPENDENTS = (
    "SELECT d.issue_id, d.type, s.title, s.status FROM dependencies d JOIN issues s ON s.id = d.issue_id "
    "WHERE d.depends_on_id = ? ORDER BY d.issue_id, d.type LIMIT ?"
)
#: The newest events of the issue, newest first.
_HISTORY = "SELECT at, actor, tool, changes FROM events WHERE issue_id = ? ORDER BY seq DESC LIMIT ?"
#: How long each list is in whole (five ``?``, the id): depends_on, dependents, comments, history, and Beads'
#: ``dependent_count`` for a line that carries it.
_COUNTS = (
    "SELECT (SELECT COUNT(*) FROM dependencies WHERE issue_id = ?), "
    "(SELECT COUNT(*) FROM dependencies d JOIN issues s ON s.id = d.issue_id WHERE d.depends_on_id = ?), "
    "(SELECT COUNT(*) FROM comments WHERE issue_id = ?), "
    "(SELECT COUNT(*) FROM events WHERE issue_id = ?), "
    f"({records.DEPENDENT_COUNT})"
)


def _state(clock: str) -> str:
    """The kept readiness flags, and whether ``ready`` lists the issue now (its own and its parents' defer times,
    and the database's ``clock`` against its claim's lease)."""
    return (
        f"SELECT r.is_blocked, r.is_held, CASE WHEN {ready_now('r', clock)} THEN 1 ELSE 0 END "
        "FROM readiness r WHERE r.issue_id = ?"
    )


def _statements(issue_id: str, comments_limit: int, at: float, clock: str) -> list[Statement]:
    """Every read of ``get`` but why the issue is not ready, in the order :func:`get` unpacks them."""
    return [
        records.leased_statement(issue_id, clock),
        kept.tombstone_statement(issue_id),
        records.labels_statement(issue_id),
        records.dependencies_statement(issue_id),
        records.comments_statement(issue_id, last=comments_limit),
        (_DEPENDS_ON, [TOMBSTONE, issue_id, _NEIGHBOURS_READ]),
        (_DEPENDENTS, [issue_id, _NEIGHBOURS_READ]),
        (_HISTORY, [issue_id, HISTORY_LIMIT]),
        (_COUNTS, [issue_id] * 5),
        (_state(clock), [at, at, issue_id]),
    ]


def get(op: Read, args: GetArgs) -> GetData:
    """The issue with every Beads field, its dependencies both ways, whether it is ready and what keeps it from
    being ready (read from the maintained state), and its newest comments and history events; each list as far as
    its share of the result goes, with its total count.

    Raises:
        BeeError: ``not_found``; for a deleted issue (a tombstone) the message says so, with when and by whom in
            details where the tombstone records them.
    """
    issue_id = args["id"]
    at = epoch(op.now)
    assert at is not None, "the tracker's own clock is always a valid time"
    found, tombstone, labels, dependency_rows, comment_rows, depends_on, dependents, history, counts, state = (
        op.tx.batch(_statements(issue_id, args["comments_limit"], at, op.tx.clock))
    )
    if not found:
        raise kept.not_found(issue_id, kept.tombstone_from(tombstone))
    issue, clock = records.leased(found[0])
    depends_on_count, dependents_count, comment_count, history_count, dependent_count = map(int, counts[0])
    dependencies = records.dependency_records(issue.id, dependency_rows)
    record = records.assemble(
        issue,
        [label for (label,) in labels],
        dependencies,
        [],
        records.counts_from(issue, dependencies, comment_count=comment_count, dependent_count=dependent_count),
    )
    newest_first = list(reversed(records.comment_records(issue.id, comment_rows)))
    comments = list(reversed(fitting(newest_first, COMMENTS_MAX_BYTES)))
    if comments:
        record = records.ordered({**record, "comments": comments}, issue.key_order)
    blocked, held, ready = state[0] if state else (0, 0, 0)
    _, blockers = blocked_by_flags(op.tx, issue.id, blocked=bool(blocked), held=bool(held))
    revisions = issue.revisions()
    answer: GetData = {
        "issue": record,
        "depends_on": fitting(_depends_on(depends_on), DEPENDS_ON_MAX_BYTES),
        "depends_on_count": depends_on_count,
        "dependents": fitting(_dependents(dependents), DEPENDENTS_MAX_BYTES),
        "dependents_count": dependents_count,
        "ready": bool(ready),
        "blocked_by": blockers,
        "comment_count": comment_count,
        "history": list(reversed(fitting(_history(history), HISTORY_MAX_BYTES))),
        "history_count": history_count,
        "state_revision": revisions["state_revision"],
        "activity_revision": revisions["activity_revision"],
        "last_activity_at": revisions["last_activity_at"],
    }
    claim = claim_of(issue, clock)
    if claim is not None:
        answer["claim"] = claim
    return answer


def claim_of(issue: records.IssueRow, clock: float) -> GetDataClaim | None:
    """Who holds the issue and until when (None when nobody does and no lease ran out on it)."""
    lease = issue.lease
    holder = claims.holder_of(issue.fields["assignee"], issue.fields["status"])
    if holder is None:
        return None
    return {
        "holder": holder,
        "since": issue.extra.get("started_at"),
        "lease_seconds": lease.ttl_seconds if lease else None,
        "lease_expires_at": lease.expires_at if lease else None,
        "expired": issue.lease_expired,
        "expires_in_seconds": round(lease.expires_epoch - clock, 3) if lease and lease.expires_epoch else None,
    }


def _depends_on(rows: Sequence[Row]) -> list[GetDataDependsOnItem]:
    """What the issue depends on (rows of :data:`_DEPENDS_ON`); a deleted target shows as status tombstone."""
    return [
        {
            "id": other,
            "type": kind,
            "title": title,
            "status": TOMBSTONE if status is None and deleted else status,
            "exists": status is not None,
        }
        for other, kind, title, status, deleted in rows
    ]


def _dependents(rows: Sequence[Row]) -> list[GetDataDependent]:
    """Live issues that depend on this one (rows of :data:`_DEPENDENTS`)."""
    return [
        {"id": other, "type": kind, "title": title, "status": status, "exists": True}
        for other, kind, title, status in rows
    ]


def _history(rows: Sequence[Row]) -> list[GetDataHistoryItem]:
    """The newest events of the issue, newest first (rows of :data:`_HISTORY`)."""
    return [
        {"at": at, "actor": actor, "tool": tool, "changes": json.loads(changes)} for at, actor, tool, changes in rows
    ]
