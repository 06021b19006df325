"""``get`` as it read before its reads were batched: one statement at a time, each a round trip on PostgreSQL.

Kept for the tests, which check that the batched handler answers exactly as this one does, and for the benchmark
(tests/perf/bench_get_reads.py), which measures both side by side. The only changes from that handler: the two
one-issue helpers it called, now gone from the store, are spelled out here (``blocked_by_each`` of one issue, and
``ready_now`` as its own statement).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from bee_tracker.handlers.get import claim_of
from bee_tracker.model import (
    COMMENTS_MAX_BYTES,
    DEPENDENTS_MAX_BYTES,
    DEPENDS_ON_MAX_BYTES,
    HISTORY_LIMIT,
    HISTORY_MAX_BYTES,
    TOMBSTONE,
    epoch,
)
from bee_tracker.store import claimlease
from bee_tracker.store.blockers import blocked_by_each
from bee_tracker.store.bounds import fitting
from bee_tracker.store.db import Tx
from bee_tracker.store.ops import Read
from bee_tracker.store.readiness import ready_now
from bee_tracker.store.records import beads_record, comments_of, ordered

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import (
        GetArgs,
        GetData,
        GetDataDependent,
        GetDataDependsOnItem,
        GetDataHistoryItem,
    )

#: Most neighbours read per list; their shares hold far fewer, and the counts say how many there are.
_NEIGHBOURS_READ = 1000


def sequential_get(op: Read, args: GetArgs) -> GetData:
    """The issue with every Beads field, its dependencies both ways, whether it is ready and what keeps it from
    being ready (read from the maintained state), and its newest comments and history events; each list as far as
    its share of the result goes, with its total count.

    Raises:
        BeeError: ``not_found``; for a deleted issue (a tombstone) the message says so, with when and by whom in
            details where the tombstone records them.
    """
    issue = op.issue(args["id"])
    tx = op.tx
    record = beads_record(tx, issue, comments_last=0)
    newest_first = list(reversed(comments_of(tx, issue.id, last=args["comments_limit"])))
    comments = list(reversed(fitting(newest_first, COMMENTS_MAX_BYTES)))
    if comments:
        record = ordered({**record, "comments": comments}, issue.key_order)
    depends_on = _depends_on(tx, issue.id)
    dependents = _dependents(tx, issue.id)
    history = _history(tx, issue.id)
    _, blockers = blocked_by_each(tx, [issue.id])[issue.id]
    issue.lease = claimlease.load_for(tx, [issue.id]).get(issue.id)
    clock = claimlease.now_of(tx)
    issue.lease_expired = issue.lease is not None and issue.lease.expired(clock)
    answer: GetData = {
        "issue": record,
        "depends_on": fitting(depends_on, DEPENDS_ON_MAX_BYTES),
        "depends_on_count": _count(tx, "SELECT COUNT(*) FROM dependencies WHERE issue_id = ?", issue.id),
        "dependents": fitting(dependents, DEPENDENTS_MAX_BYTES),
        "dependents_count": _count(
            tx,
            "SELECT COUNT(*) FROM dependencies d JOIN issues s ON s.id = d.issue_id WHERE d.depends_on_id = ?",
            issue.id,
        ),
        "ready": _ready(op, issue.id),
        "blocked_by": blockers,
        "comment_count": _count(tx, "SELECT COUNT(*) FROM comments WHERE issue_id = ?", issue.id),
        "history": list(reversed(fitting(history, HISTORY_MAX_BYTES))),
        "history_count": _count(tx, "SELECT COUNT(*) FROM events WHERE issue_id = ?", issue.id),
        "state_revision": issue.state_revision,
        "activity_revision": issue.activity_revision,
        "last_activity_at": issue.last_activity_at,
    }
    claim = claim_of(issue, clock)
    if claim is not None:
        answer["claim"] = claim
    return answer


def _ready(op: Read, issue_id: str) -> bool:
    """Whether ``ready`` lists the issue now: the maintained state, and its own and its parents' defer times."""
    at = epoch(op.now)
    assert at is not None, "the tracker's own clock is always a valid time"
    ready = ready_now("r", op.tx.clock)
    return op.tx.row(f"SELECT 1 FROM readiness r WHERE r.issue_id = ? AND {ready}", [issue_id, at, at]) is not None


def _count(tx: Tx, sql: str, issue_id: str) -> int:
    found = tx.row(sql, [issue_id])
    return int(found[0]) if found else 0


def _depends_on(tx: Tx, issue_id: str) -> list[GetDataDependsOnItem]:
    """What the issue depends on, in its own order; a deleted target shows as status tombstone."""
    rows = tx.rows(
        "SELECT d.depends_on_id, d.type, t.title, t.status, "
        "EXISTS (SELECT 1 FROM kept_records k WHERE k.issue_id = d.depends_on_id AND k.kind = ?) "
        "FROM dependencies d LEFT JOIN issues t ON t.id = d.depends_on_id "
        "WHERE d.issue_id = ? ORDER BY d.position LIMIT ?",
        [TOMBSTONE, issue_id, _NEIGHBOURS_READ],
    )
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


def _dependents(tx: Tx, issue_id: str) -> list[GetDataDependent]:
    """Live issues that depend on this one (children included), by id."""
    rows = tx.rows(
        "SELECT d.issue_id, d.type, s.title, s.status FROM dependencies d JOIN issues s ON s.id = d.issue_id "
        "WHERE d.depends_on_id = ? ORDER BY d.issue_id, d.type LIMIT ?",
        [issue_id, _NEIGHBOURS_READ],
    )
    return [
        {"id": other, "type": kind, "title": title, "status": status, "exists": True}
        for other, kind, title, status in rows
    ]


def _history(tx: Tx, issue_id: str) -> list[GetDataHistoryItem]:
    """The newest events of the issue, newest first."""
    rows = tx.rows(
        "SELECT at, actor, tool, changes FROM events WHERE issue_id = ? ORDER BY seq DESC LIMIT ?",
        [issue_id, HISTORY_LIMIT],
    )
    return [
        {"at": at, "actor": actor, "tool": tool, "changes": json.loads(changes)} for at, actor, tool, changes in rows
    ]
