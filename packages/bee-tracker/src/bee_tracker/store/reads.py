"""Queries several tools share: pages of issue summaries, children, gates, vocabularies."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from bee_contracts.limits import MAX_RESULT_BYTES
from bee_tracker.model import BUILTIN_STATUSES, BUILTIN_TYPES, DONE_STATUSES, PARENT_CHILD
from bee_tracker.store.bounds import fitting
from bee_tracker.store.db import Tx
from bee_tracker.store.records import SUMMARY_SELECT, listed

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import ReadyDataIssue as IssueSummary

_DONE = ", ".join(f"'{s}'" for s in DONE_STATUSES)

#: Room a page of summaries leaves for the rest of its result (total, offset, has_more and the envelope).
_PAGE_OVERHEAD_BYTES = 1024

#: The order of every list, Beads' own: most urgent first, then newest by the whole second Beads keeps (issues
#: without created_at last), then id; read from each issue's readiness row (alias ``r``), whose indexes hold it.
ORDER = "r.priority, r.created_epoch DESC NULLS LAST, r.issue_id"
#: What every list reads from: the issues (alias ``i``) with their readiness rows (alias ``r``).
LISTED = "issues i JOIN readiness r ON r.issue_id = i.id"
#: A reference to a column of the issue itself (alias ``i``) in a list's condition.
_ISSUE_COLUMN = re.compile(r"\bi\.")


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
    tx: Tx,
    condition: str,
    params: list[Any],
    *,
    limit: int,
    offset: int = 0,
    count: bool = True,
    order: str = ORDER,
    order_params: Sequence[Any] = (),
    enrich: Callable[[Tx, list[IssueSummary]], None] | None = None,
) -> tuple[list[IssueSummary], int | None, bool]:
    """One page of issue summaries matching ``condition`` (over aliases ``i`` and ``r``, see :data:`LISTED`) in
    ``order`` (default :data:`ORDER`): (page, total or None, has_more).

    Without ``count`` the total is not computed and ``has_more`` comes from reading one row past the page. A page
    also ends early where the next summary would not fit the result limit (``has_more`` then says so), so a list
    always answers; the next offset is the given one plus the page's length. ``enrich`` adds to the summaries before
    the page is fitted (a list with ``whole``: :func:`bee_tracker.store.listing.add_wholes`), so fewer may fit.
    """
    rows = tx.rows(
        f"SELECT {SUMMARY_SELECT} FROM {LISTED} WHERE {condition} ORDER BY {order} LIMIT ? OFFSET ?",
        [*params, *order_params, limit + 1, offset],
    )
    labels_by_id = labels_for(tx, [r[0] for r in rows[:limit]])
    summaries = [listed(r, labels_by_id[r[0]]) for r in rows[:limit]]
    if enrich is not None:
        enrich(tx, summaries)
    shown = fitting(summaries, MAX_RESULT_BYTES - _PAGE_OVERHEAD_BYTES)
    has_more = len(rows) > len(shown)
    return shown, counted(tx, condition, params) if count else None, has_more


def counted(tx: Tx, condition: str, params: list[Any]) -> int:
    """How many issues match ``condition`` (over the aliases of :data:`LISTED`).

    A condition over the readiness rows alone is counted from them, without the join: their indexes cover the
    lists' conditions, so a total reads index entries only.
    """
    source = LISTED if _ISSUE_COLUMN.search(condition) else "readiness r"
    found = tx.row(f"SELECT COUNT(*) FROM {source} WHERE {condition}", params)
    return int(found[0]) if found else 0


def label_filter(labels: Sequence[str], params: list[Any]) -> str:
    clauses = []
    for label in labels:
        clauses.append("EXISTS (SELECT 1 FROM labels l WHERE l.issue_id = r.issue_id AND l.label = ?)")
        params.append(label)
    return " AND ".join(clauses)


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
