"""Reading the tracker's maintained readiness as a test sees it, and checking it against Beads' rule."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from bee_tracker import calls
from bee_tracker.store import SqlStore, open_database, readiness
from tests.tracker.beads_rule import Beads, go_lower
from tests.tracker.calls import ALICE

#: The fixed "now" of the stores these tests open, and the same instant as Beads' oracle reads it.
NOW = "2026-03-01T12:00:00.000000Z"
NOW_TIME = datetime(2026, 3, 1, 12, tzinfo=UTC)
PAST, FUTURE = "2026-02-01T00:00:00Z", "2026-04-01T00:00:00Z"

_STATE = (
    "issue_id, status, priority, created_epoch, defer_epoch, parent_defer_epoch, is_wisp, is_pinned, is_eligible, "
    "is_active, is_blocked, is_held, is_ready, key_id, key_title, key_ref"
)


def clocked_store(url: str) -> SqlStore:
    """A migrated store at ``url`` whose clock always says :data:`NOW`."""
    store = SqlStore(open_database(url), prefix="t", clock=lambda: NOW)
    store.migrate()
    return store


def state(store: SqlStore) -> dict[str, tuple[Any, ...]]:
    """Every issue's kept readiness row."""
    with store.db.read() as tx:
        return {row[0]: tuple(row[1:]) for row in tx.rows(f"SELECT {_STATE} FROM readiness")}


def assert_consistent(store: SqlStore) -> None:
    """Every issue has its readiness row, the kept state equals a from-scratch computation (a rebuild changes
    nothing), and the copies and search keys follow the issue (the keys lower-cased as Go lowers them, the created
    time in the whole seconds Beads orders by)."""
    before = state(store)
    with store.db.write() as tx:
        readiness.rebuild(tx)
    assert state(store) == before
    with store.db.read() as tx:
        rows = tx.rows(
            "SELECT i.id, i.title, i.external_ref, i.status, i.priority, i.created_epoch, i.defer_epoch, "
            "r.key_id, r.key_title, r.key_ref, r.status, r.priority, r.created_epoch, r.defer_epoch "
            "FROM issues i LEFT JOIN readiness r ON r.issue_id = i.id"
        )
    assert len(rows) == len(before)
    for issue_id, title, ref, status, priority, created, deferred, *kept in rows:
        assert kept == [
            go_lower(issue_id),
            go_lower(title),
            go_lower(ref) if ref else None,
            status,
            priority,
            readiness.whole_second(created),
            deferred,
        ], issue_id


def every_ready(store: SqlStore, actor: str = ALICE, **filters: Any) -> list[str]:
    """Every ready issue, page after page (limit 100, offset), checking the totals on the way."""
    found: list[str] = []
    total = None
    while True:
        page = calls.call(store, "ready", actor, {**filters, "offset": len(found)})["data"]
        assert total in (None, page["total"])
        total = page["total"]
        found += [issue["id"] for issue in page["issues"]]
        if not page["has_more"]:
            break
        assert page["issues"], "has_more with an empty page would never end"
    assert len(found) == total
    return found


def oracle(store: SqlStore) -> Beads:
    """Beads' database as it would be after importing what the store exports."""
    return Beads.imported(store.export_lines())


def assert_matches_beads(store: SqlStore) -> None:
    """ready (order included) and the blocked issues are exactly what Beads' rule says for the same data."""
    beads = oracle(store)
    assert every_ready(store) == beads.ready(NOW_TIME)
    blocked, _ = beads.computed_blocked()
    with store.db.read() as tx:
        assert {r[0] for r in tx.rows("SELECT issue_id FROM readiness WHERE is_blocked = 1")} == blocked
        held = {r[0] for r in tx.rows("SELECT issue_id FROM readiness WHERE is_held = 1 AND is_wisp = 0")}
    children = {child for child, _ in beads._children_of(blocked) if child in beads.issues}
    assert held == children


def line(issue_id: str, **fields: Any) -> str:
    """One Beads JSONL line for an open task, with ``fields`` over the defaults (a None leaves the key out)."""
    record = {"id": issue_id, "title": issue_id, "status": "open", "priority": 2, "issue_type": "task"}
    record.update({"created_at": "2026-01-01T00:00:00Z", **fields})
    return json.dumps({key: value for key, value in record.items() if value is not None})


def dep(issue_id: str, target: str, kind: str = "blocks", **extra: Any) -> dict[str, Any]:
    return {"issue_id": issue_id, "depends_on_id": target, "type": kind, **extra}
