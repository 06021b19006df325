"""Tombstones kept: Beads' deletions survive import and export, and a deleted issue acts deleted everywhere."""

import json
from typing import Any

import pytest

from bee_contracts import BeeError
from bee_tracker.store import SqlStore, sources
from tests.tracker.calls import ALICE, BOB, call, new, refused


def line(**record: Any) -> str:
    return json.dumps({"status": "open", "priority": 2, "issue_type": "task", **record}, separators=(",", ":"))


def tombstone(issue_id: str, **record: Any) -> str:
    return line(
        id=issue_id,
        title=f"deleted {issue_id}",
        status="tombstone",
        deleted_at="2025-12-27T17:53:39.950742-08:00",
        deleted_by="stevey",
        delete_reason="manual delete",
        **record,
    )


def blocks(issue_id: str, target: str, kind: str = "blocks") -> list[dict[str, str]]:
    return [{"issue_id": issue_id, "depends_on_id": target, "type": kind}]


def test_a_tombstone_is_not_found_saying_when_and_by_whom_it_was_deleted(store: SqlStore) -> None:
    store.import_lines([tombstone("t-gone"), line(id="t-live", title="live")])
    error = refused(store, "not_found", "get", id="t-gone")
    assert "was deleted" in error.message and "stevey" in error.message
    assert error.details == {
        "id": "t-gone",
        "deleted": True,
        "deleted_at": "2025-12-27T17:53:39.950742-08:00",
        "deleted_by": "stevey",
        "delete_reason": "manual delete",
    }
    for tool, args in (
        ("update", {"id": "t-gone", "title": "back"}),
        ("claim", {"id": "t-gone"}),
        ("add_note", {"id": "t-gone", "text": "hello"}),
        ("complete", {"id": "t-gone"}),
        ("link", {"id": "t-gone", "target": "t-live"}),
        ("link", {"id": "t-live", "target": "t-gone"}),
        ("create", {"title": "child", "parent": "t-gone"}),
        ("create", {"title": "after", "prerequisites": ["t-gone"]}),
    ):
        assert "was deleted" in refused(store, "not_found", tool, **args).message, tool


def test_tombstones_never_appear_in_ready_or_search(store: SqlStore) -> None:
    store.import_lines([tombstone("t-gone", description="needle"), line(id="t-live", title="live needle")])
    assert [i["id"] for i in call(store, "ready")["issues"]] == ["t-live"]
    assert [i["id"] for i in call(store, "search", query="needle")["issues"]] == ["t-live"]
    assert call(store, "search", query="t-gone")["total"] == 0
    assert call(store, "search", status=["tombstone"])["total"] == 0


def test_tombstones_never_block_and_count_as_done(store: SqlStore) -> None:
    store.import_lines(
        [
            tombstone("t-blocker"),
            tombstone("t-parent"),
            tombstone("t-child", dependencies=blocks("t-child", "t-epic", "parent-child")),
            line(id="t-epic", title="epic", issue_type="epic"),
            line(id="t-blocked", title="blocked", dependencies=blocks("t-blocked", "t-blocker")),
            line(id="t-orphan", title="orphan", dependencies=blocks("t-orphan", "t-parent", "parent-child")),
        ]
    )
    assert {i["id"] for i in call(store, "ready")["issues"]} >= {"t-blocked", "t-orphan"}
    got = call(store, "get", id="t-blocked")
    assert got["blocked_by"] == [] and got["depends_on"][0]["status"] == "tombstone"
    assert got["depends_on"][0]["exists"] is False
    assert call(store, "get", id="t-epic")["dependents"] == []  # the deleted child is not listed
    assert call(store, "complete", id="t-epic")["status"] == "closed"  # nor does it hold the epic open
    assert call(store, "complete", id="t-blocked")["status"] == "closed"


def test_update_may_not_set_status_tombstone(store: SqlStore) -> None:
    issue_id = new(store)
    error = refused(store, "invalid_argument", "update", id=issue_id, status="tombstone")
    assert "tombstone" in error.message
    store.register(statuses=["tombstone"])  # never a status of a live issue, even when asked
    assert "tombstone" not in store.vocabulary()["statuses"]


def test_new_issues_never_take_a_deleted_id(store: SqlStore) -> None:
    store.import_lines([line(id="t-p", title="parent"), tombstone("t-p.1"), tombstone("t-p.2")])
    assert new(store, "third", ALICE, parent="t-p") == "t-p.3"


def test_the_last_line_for_an_id_counts_and_earlier_ones_are_kept_verbatim(store: SqlStore) -> None:
    lines = [
        line(id="t-a", title="first"),
        line(id="t-b", title="other"),
        line(id="t-a", title="second"),
        line(id="t-a", title="third"),
    ]
    report = store.import_lines(lines)
    assert report["imported"] == 2 and report["shadowed"] == [{"line": 1, "id": "t-a"}, {"line": 3, "id": "t-a"}]
    assert call(store, "get", id="t-a")["issue"]["title"] == "third"  # as Beads, whose import is an upsert
    assert call(store, "search", query="first")["total"] == 0
    assert store.export_lines() == lines
    again = store.import_lines(lines)  # importing the same file again changes nothing
    assert (again["imported"], again["replaced"]) == (2, 2) and store.export_lines() == lines


def test_a_tombstone_in_the_file_deletes_its_id_wherever_the_live_line_is(store: SqlStore) -> None:
    lines = [line(id="t-a", title="live first"), tombstone("t-a")]
    report = store.import_lines(lines)
    assert (report["imported"], report["tombstones"], report["shadowed"]) == (0, 1, [{"line": 1, "id": "t-a"}])
    refused(store, "not_found", "get", id="t-a")
    assert store.export_lines() == lines


def test_reimport_a_tombstone_deletes_the_live_issue_and_a_live_line_never_undeletes(store: SqlStore) -> None:
    store.import_lines([line(id="t-a", title="live")])
    call(store, "add_note", BOB, id="t-a", text="was here")
    with pytest.raises(BeeError) as info:  # the note is the team's work: deleting it takes --discard-changes
        store.import_lines([tombstone("t-a")])
    assert info.value.code == "conflict" and "t-a (1 comment; 1 write by bob@example.com)" in info.value.message
    report = store.import_from(sources.from_lines([tombstone("t-a")]), discard_changes=True)
    assert report["deleted"] == ["t-a"] and report["tombstones"] == 1
    assert [c["text"] for c in report["discarded"][0]["comments"]] == ["was here"]
    refused(store, "not_found", "get", id="t-a")
    again = store.import_lines([line(id="t-a", title="resurrected?")])
    assert again["imported"] == 0 and again["skippedDeleted"] == [{"line": 1, "id": "t-a"}]
    assert "was deleted" in refused(store, "not_found", "get", id="t-a").message
    assert store.export_lines() == [tombstone("t-a")]


def test_reimporting_the_same_file_changes_nothing(store: SqlStore) -> None:
    lines = [
        '{"_schema":"beads-jsonl/1"}',
        line(id="t-a", title="a"),
        tombstone("t-b"),
        '{"_type":"memory","key":"k","value":"v"}',
        line(id="t-a", title="dup"),
        '{"_type":"memory","key":"k","value":"a second memory with the same key"}',
        '{"_schema":"beads-jsonl/1"}',
    ]
    store.import_lines(lines)
    report = store.import_lines(lines)
    assert report["replaced"] == 1 and report["deleted"] == [] and report["skippedDeleted"] == []
    assert store.export_lines() == lines
