"""Read operations: ready work, search, one issue with its neighbourhood, and known vocabularies."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bee_tracker.model import (
    BLOCKING_TYPES,
    BUILTIN_STATUSES,
    BUILTIN_TYPES,
    DONE_STATUSES,
    HOLDING_STATUSES,
    NOT_WORK_TYPES,
    PARENT_CHILD,
)
from bee_tracker.store.db import Tx
from bee_tracker.store.errors import NotFound
from bee_tracker.store.records import ISSUE_SELECT, IssueRow, beads_record, load_issue, summary

_BLOCKING = ", ".join(f"'{t}'" for t in BLOCKING_TYPES)
_DONE = ", ".join(f"'{s}'" for s in DONE_STATUSES)
_HOLDING = ", ".join(f"'{s}'" for s in HOLDING_STATUSES)
_NOT_WORK = ", ".join(f"'{t}'" for t in NOT_WORK_TYPES)

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


def _page(
    tx: Tx, condition: str, params: list[Any], *, limit: int, offset: int = 0, prefix: str = "", count: bool = True
) -> tuple[list[dict[str, Any]], int | None, bool]:
    """One page of issue summaries matching ``condition``, most urgent first: (page, total or None, has_more).

    Without ``count`` the total is not computed (it costs a pass over every match) and ``has_more`` comes from
    reading one row past the page.
    """
    rows = tx.rows(
        f"{prefix} SELECT {ISSUE_SELECT} FROM issues i WHERE {condition} "
        "ORDER BY i.priority, i.created_epoch, i.id LIMIT ? OFFSET ?",
        [*params, limit + 1, offset],
    )
    has_more = len(rows) > limit
    issues = [IssueRow(r) for r in rows[:limit]]
    labels_by_id = labels_for(tx, [i.id for i in issues])
    total: int | None = None
    if count:
        total_row = tx.row(f"{prefix} SELECT COUNT(*) FROM issues i WHERE {condition}", params)
        total = int(total_row[0]) if total_row else 0
    return [summary(i, labels_by_id[i.id]) for i in issues], total, has_more


def _label_filter(labels: Sequence[str], params: list[Any]) -> str:
    clauses = []
    for label in labels:
        clauses.append("EXISTS (SELECT 1 FROM labels l WHERE l.issue_id = i.id AND l.label = ?)")
        params.append(label)
    return " AND ".join(clauses)


def ready(tx: Tx, *, now_epoch: float, priority: int | None, labels: Sequence[str], limit: int) -> dict[str, Any]:
    """Open, not deferred, not blocked, not under a blocked parent; most urgent first."""
    params: list[Any] = [now_epoch]
    where = [
        "i.status = 'open'",
        f"i.issue_type NOT IN ({_NOT_WORK})",
        "(i.defer_epoch IS NULL OR i.defer_epoch <= ?)",
        "i.id NOT IN (SELECT id FROM blocked)",
    ]
    if priority is not None:
        where.append("i.priority = ?")
        params.append(priority)
    if labels:
        where.append(_label_filter(labels, params))
    # No total: counting every ready issue would cost a pass over the backlog on each call.
    page, _, has_more = _page(tx, " AND ".join(where), params, limit=limit, prefix=BLOCKED_CTE, count=False)
    return {"issues": page, "has_more": has_more}


def search(
    tx: Tx,
    *,
    text: str | None,
    statuses: Sequence[str],
    assignee: str | None,
    labels: Sequence[str],
    issue_type: str | None,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """Full-text and filtered search over every issue, closed ones included."""
    params: list[Any] = []
    where = ["1 = 1"]
    if text:
        clause, clause_params = tx.search_clause(text)
        # An exact id also finds its issue, whatever the text index says.
        where.append(f"({clause} OR i.id = ?)")
        params.extend([*clause_params, text.strip()])
    if statuses:
        where.append("i.status IN (" + ", ".join("?" for _ in statuses) + ")")
        params.extend(statuses)
    if assignee is not None:
        where.append("i.assignee = ?")
        params.append(assignee)
    if issue_type is not None:
        where.append("i.issue_type = ?")
        params.append(issue_type)
    if labels:
        where.append(_label_filter(labels, params))
    page, total, has_more = _page(tx, " AND ".join(where), params, limit=limit, offset=offset)
    return {"issues": page, "total": total, "offset": offset, "has_more": has_more}


def _neighbours(tx: Tx, sql: str, issue_id: str) -> list[dict[str, Any]]:
    return [
        {"id": other, "type": kind, "title": title, "status": status, "exists": title is not None}
        for other, kind, title, status in tx.rows(sql, [issue_id])
    ]


def get(tx: Tx, issue_id: str, *, comments_last: int) -> dict[str, Any]:
    """One issue in full, its dependencies both ways, its latest comments and its revisions.

    Raises:
        NotFound: no issue has this id.
    """
    issue = load_issue(tx, issue_id)
    if issue is None:
        raise NotFound(f"no issue {issue_id!r}; search for it by text or list ready work", details={"id": issue_id})
    record = beads_record(tx, issue, comments_last=comments_last)
    count_row = tx.row("SELECT COUNT(*) FROM comments WHERE issue_id = ?", [issue_id])
    depends_on = _neighbours(
        tx,
        "SELECT d.depends_on_id, d.type, t.title, t.status FROM dependencies d "
        "LEFT JOIN issues t ON t.id = d.depends_on_id WHERE d.issue_id = ? ORDER BY d.position",
        issue_id,
    )
    dependents = _neighbours(
        tx,
        "SELECT d.issue_id, d.type, s.title, s.status FROM dependencies d "
        "JOIN issues s ON s.id = d.issue_id WHERE d.depends_on_id = ? ORDER BY d.issue_id, d.type",
        issue_id,
    )
    blockers = open_blockers(tx, issue_id)
    return {
        "issue": record,
        "depends_on": depends_on,
        "dependents": dependents,
        "blocked_by": blockers,
        "comment_count": int(count_row[0]) if count_row else 0,
        **issue.revisions(),
    }


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
