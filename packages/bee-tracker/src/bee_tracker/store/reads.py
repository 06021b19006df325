"""Queries several tools share: pages of issue summaries, the blocked set, blockers, children, gates, vocabularies."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bee_contracts.limits import MAX_RESULT_BYTES
from bee_tracker.model import (
    BLOCKING_TYPES,
    BUILTIN_STATUSES,
    BUILTIN_TYPES,
    DONE_STATUSES,
    HOLDING_STATUSES,
    NOT_WORK_TYPES,
    PARENT_CHILD,
)
from bee_tracker.store.bounds import fitting
from bee_tracker.store.db import Tx
from bee_tracker.store.records import ISSUE_SELECT, IssueRow, summary

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import ReadyDataIssue as IssueSummary

_BLOCKING = ", ".join(f"'{t}'" for t in BLOCKING_TYPES)
_DONE = ", ".join(f"'{s}'" for s in DONE_STATUSES)
_HOLDING = ", ".join(f"'{s}'" for s in HOLDING_STATUSES)
NOT_WORK = ", ".join(f"'{t}'" for t in NOT_WORK_TYPES)

#: Room a page of summaries leaves for the rest of its result (total, offset, has_more and the envelope).
_PAGE_OVERHEAD_BYTES = 1024

#: Issues that are blocked: those with an unfinished target of a blocking dependency (a missing target does not
#: block), those explicitly blocked or deferred, and, transitively, the children of any of them. Written so that
#: any planner starts from the (usually few) dependencies rather than from every issue.
BLOCKED_CTE = f"""
WITH RECURSIVE blocked (id) AS (
  SELECT d.issue_id FROM dependencies d
   WHERE d.type IN ({_BLOCKING})
     AND EXISTS (SELECT 1 FROM issues b WHERE b.id = d.depends_on_id AND b.status NOT IN ({_DONE}))
  UNION
  SELECT id FROM issues WHERE status IN ({_HOLDING})
  UNION
  SELECT d.issue_id FROM dependencies d JOIN blocked p ON d.depends_on_id = p.id
   WHERE d.type = '{PARENT_CHILD}'
)
"""


def labels_for(tx: Tx, ids: Sequence[str]) -> dict[str, list[str]]:
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    found: dict[str, list[str]] = {i: [] for i in ids}
    for issue_id, label in tx.rows(
        f"SELECT issue_id, label FROM labels WHERE issue_id IN ({marks}) ORDER BY issue_id, position, label", list(ids)
    ):
        found[issue_id].append(label)
    return found


def page(
    tx: Tx, condition: str, params: list[Any], *, limit: int, offset: int = 0, prefix: str = "", count: bool = True
) -> tuple[list[IssueSummary], int | None, bool]:
    """One page of issue summaries matching ``condition``, most urgent first: (page, total or None, has_more).

    Without ``count`` the total is not computed (it costs a pass over every match) and ``has_more`` comes from
    reading one row past the page. A page also ends early where the next summary would not fit the result limit
    (``has_more`` then says so), so a list always answers.
    """
    rows = tx.rows(
        f"{prefix} SELECT {ISSUE_SELECT} FROM issues i WHERE {condition} "
        "ORDER BY i.priority, i.created_epoch, i.id LIMIT ? OFFSET ?",
        [*params, limit + 1, offset],
    )
    issues = [IssueRow(r) for r in rows[:limit]]
    labels_by_id = labels_for(tx, [i.id for i in issues])
    summaries = [summary(i, labels_by_id[i.id]) for i in issues]
    shown = fitting(summaries, MAX_RESULT_BYTES - _PAGE_OVERHEAD_BYTES)
    has_more = len(rows) > len(shown)
    total: int | None = None
    if count:
        total_row = tx.row(f"{prefix} SELECT COUNT(*) FROM issues i WHERE {condition}", params)
        total = int(total_row[0]) if total_row else 0
    return shown, total, has_more


def label_filter(labels: Sequence[str], params: list[Any]) -> str:
    clauses = []
    for label in labels:
        clauses.append("EXISTS (SELECT 1 FROM labels l WHERE l.issue_id = i.id AND l.label = ?)")
        params.append(label)
    return " AND ".join(clauses)


def open_blockers(tx: Tx, issue_id: str) -> list[str]:
    """Ids of existing, unfinished targets of this issue's blocking dependencies."""
    return [
        r[0]
        for r in tx.rows(
            f"SELECT d.depends_on_id FROM dependencies d JOIN issues b ON b.id = d.depends_on_id "
            f"WHERE d.issue_id = ? AND d.type IN ({_BLOCKING}) AND b.status NOT IN ({_DONE}) ORDER BY d.position",
            [issue_id],
        )
    ]


def open_children(tx: Tx, issue_id: str) -> list[str]:
    return [
        r[0]
        for r in tx.rows(
            f"SELECT d.issue_id FROM dependencies d JOIN issues c ON c.id = d.issue_id "
            f"WHERE d.depends_on_id = ? AND d.type = '{PARENT_CHILD}' AND c.status NOT IN ({_DONE}) "
            "ORDER BY d.issue_id",
            [issue_id],
        )
    ]


def open_gates(tx: Tx, issue_id: str) -> list[str]:
    """Unclosed issues of type ``gate`` this issue depends on in any way (a gate holds until it is closed)."""
    return [
        r[0]
        for r in tx.rows(
            f"SELECT d.depends_on_id FROM dependencies d JOIN issues g ON g.id = d.depends_on_id "
            f"WHERE d.issue_id = ? AND g.issue_type = 'gate' AND g.status NOT IN ({_DONE}) ORDER BY d.position",
            [issue_id],
        )
    ]


def vocabulary(tx: Tx, key: str, builtin: Sequence[str]) -> list[str]:
    """Built-in values plus the custom ones registered in ``meta`` (by import or configuration)."""
    found = tx.row("SELECT value FROM meta WHERE key = ?", [key])
    custom: list[str] = json.loads(found[0]) if found else []
    return [*builtin, *[c for c in custom if c not in builtin]]


def statuses(tx: Tx) -> list[str]:
    return vocabulary(tx, "custom_statuses", BUILTIN_STATUSES)


def types(tx: Tx) -> list[str]:
    return vocabulary(tx, "custom_types", BUILTIN_TYPES)
