"""Every write leaves one event in the issue's history; get returns the newest, with the total."""

from typing import Any

from bee_tracker.model import HISTORY_LIMIT
from bee_tracker.store import open_database
from bee_tracker.store.schema import LATEST, POSTGRES, SQLITE
from bee_tracker.store.sql import SqlStore
from tests.tracker.calls import ALICE, BOB, call, new, refused


def history(store: SqlStore, issue_id: str) -> tuple[list[dict[str, Any]], int]:
    got = call(store, "get", id=issue_id)
    return got["history"], got["history_count"]


def test_each_write_records_tool_actor_time_and_what_changed(store: SqlStore) -> None:
    blocker = new(store, "blocker")
    issue_id = new(store, "feature", labels=["a"], prerequisites=[blocker])
    call(store, "claim", BOB, id=issue_id)
    call(store, "update", ALICE, id=issue_id, priority=0, description="x" * 500, add_labels=["b"])
    call(store, "add_note", ALICE, id=issue_id, text="note")
    call(store, "release", BOB, id=issue_id, reason="later")
    events, count = history(store, issue_id)
    assert count == 5 and [(e["tool"], e["actor"]) for e in events] == [
        ("create", ALICE),
        ("claim", BOB),
        ("update", ALICE),
        ("add_note", ALICE),
        ("release", BOB),
    ]
    created, claimed, updated, noted, released = (e["changes"] for e in events)
    assert created["created"] == "feature" and created["labels"]["added"] == ["a"]
    assert created["linked"] == [{"type": "blocks", "target": blocker}]
    started = events[1]["at"]  # a first claim also records started_at, as bd does
    assert claimed == {"assignee": [None, BOB], "status": ["open", "in_progress"], "started_at": [None, started]}
    assert updated["priority"] == [2, 0] and updated["labels"] == {"added": ["b"], "removed": []}
    assert len(updated["description"][1]) == 80  # long text is summarised; the issue holds all of it
    assert set(noted) == {"comment"} and set(released) == {"comment", "assignee", "status"}
    assert all(e["at"].endswith("Z") for e in events)


def test_refused_replayed_and_empty_writes_record_nothing(store: SqlStore) -> None:
    issue_id = new(store, "quiet", priority=1)
    call(store, "claim", ALICE, id=issue_id, idempotency_key="claim-0001")
    call(store, "claim", ALICE, id=issue_id, idempotency_key="claim-0001")  # replayed
    call(store, "claim", ALICE, id=issue_id)  # already held
    call(store, "update", ALICE, id=issue_id, priority=1)  # nothing changes
    refused(store, "forbidden", "update", BOB, id=issue_id, assignee=BOB)
    assert history(store, issue_id)[1] == 2  # create and the first claim


def test_get_returns_the_newest_events_oldest_first(store: SqlStore) -> None:
    issue_id = new(store, "busy")
    for n in range(HISTORY_LIMIT + 5):
        call(store, "add_note", BOB, id=issue_id, text=f"note {n}")
    events, count = history(store, issue_id)
    assert count == HISTORY_LIMIT + 6 and len(events) == HISTORY_LIMIT
    comments = call(store, "get", id=issue_id, comments_limit=1)["issue"]["comments"]
    assert events[-1]["changes"]["comment"] == [comments[-1]["id"]]


def test_a_version_1_store_migrates_to_history(store_url: str) -> None:
    db = open_database(store_url)
    with db.write() as tx:  # the schema as version 1 left it
        for statement in (SQLITE if db.dialect == "sqlite" else POSTGRES)[0]:
            tx.run(statement)
        tx.run("INSERT INTO meta (key, value) VALUES ('schema_version', '1')")
        tx.run(
            "INSERT INTO issues (id, title, status, last_activity_at) VALUES ('t-old', 'old', 'open', "
            "'2026-01-01T00:00:00Z')"
        )
    store = SqlStore(db, prefix="t")
    try:
        assert store.migrate() == LATEST
        call(store, "claim", ALICE, id="t-old")
        events, count = history(store, "t-old")
        assert count == 1 and events[0]["tool"] == "claim"
    finally:
        store.close()
