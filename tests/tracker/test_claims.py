"""Claims hold: while an issue is claimed only its holder moves it; its content, notes and links stay open."""

import json
from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_tracker import calls
from bee_tracker.store import SqlStore, open_store
from tests.tracker.calls import ALICE, BOB, bee, call, new, refused


def claimed_by_alice(store: SqlStore) -> str:
    issue_id = new(store, "contested")
    call(store, "claim", ALICE, id=issue_id)
    return issue_id


def test_another_actor_cannot_take_a_claim_through_update(store: SqlStore) -> None:
    issue_id = claimed_by_alice(store)
    for change in ({"assignee": BOB}, {"status": "open", "assignee": None}, {"status": "blocked"}, {"assignee": ""}):
        error = refused(store, "forbidden", "update", BOB, id=issue_id, **change)
        assert error.details is not None
        assert ALICE in error.message and error.details["holder"] == ALICE, change
    got = call(store, "get", id=issue_id)["issue"]
    assert (got["assignee"], got["status"]) == (ALICE, "in_progress")


def test_another_actor_cannot_complete_hand_off_or_release_a_claim(store: SqlStore) -> None:
    issue_id = claimed_by_alice(store)
    assert ALICE in refused(store, "forbidden", "complete", BOB, id=issue_id, summary="mine").message
    assert ALICE in refused(store, "forbidden", "handoff", BOB, id=issue_id, done="x").message
    assert ALICE in refused(store, "forbidden", "handoff", BOB, id=issue_id, done="x", release=True).message
    assert ALICE in refused(store, "forbidden", "release", BOB, id=issue_id).message
    assert call(store, "get", id=issue_id)["comment_count"] == 0
    released = call(store, "release", ALICE, id=issue_id, reason="stepping away")  # the holder still can
    assert (released["assignee"], released["status"]) == (None, "open")
    assert call(store, "update", BOB, id=issue_id, assignee=BOB)["assignee"] == BOB  # unclaimed: open to all


def test_content_notes_and_links_stay_open_to_everyone_with_compare_and_swap(store: SqlStore) -> None:
    issue_id = claimed_by_alice(store)
    other = new(store, "other")
    revision = call(store, "get", id=issue_id)["state_revision"]
    updated = call(
        store,
        "update",
        BOB,
        id=issue_id,
        title="sharper title",
        description="more detail",
        priority=0,
        add_labels=["triaged"],
        expected_revision=revision,
    )
    assert updated["assignee"] == ALICE and updated["state_revision"] == revision + 1
    refused(store, "conflict", "update", BOB, id=issue_id, notes="stale", expected_revision=revision)
    call(store, "add_note", BOB, id=issue_id, text="seen this before")
    assert call(store, "link", BOB, id=issue_id, target=other, type="related")["changed"] is True
    call(store, "update", BOB, id=issue_id, status="in_progress", assignee=ALICE)  # unchanged values change nothing


def test_the_holder_moves_the_claim_and_completing_ends_it(store: SqlStore) -> None:
    issue_id = claimed_by_alice(store)
    assert call(store, "update", ALICE, id=issue_id, assignee=BOB)["assignee"] == BOB  # the holder hands it over
    refused(store, "forbidden", "update", ALICE, id=issue_id, status="open")
    call(store, "complete", BOB, id=issue_id, summary="done")
    reopened = call(store, "update", ALICE, id=issue_id, status="open")  # closed: the claim is over
    assert reopened["status"] == "open"
    got = call(store, "get", id=issue_id)["issue"]
    assert "closed_at" not in got and "close_reason" not in got


def test_a_forced_release_records_who_and_why(store: SqlStore) -> None:
    issue_id = claimed_by_alice(store)
    released = calls.release_forced(store, issue_id, actor="operator:root", reason="alice left the team")
    assert (released["assignee"], released["status"]) == (None, "open")
    got = call(store, "get", BOB, id=issue_id)
    last = got["history"][-1]
    assert (last["tool"], last["actor"]) == ("release --force", "operator:root")
    assert last["changes"]["forced"] == {"holder": ALICE, "reason": "alice left the team"}
    assert last["changes"]["assignee"] == [ALICE, None]
    assert "operator:root" in got["issue"]["comments"][-1]["text"]
    with pytest.raises(BeeError) as info:
        calls.release_forced(store, issue_id, actor="operator:root", reason="nothing to release")
    assert info.value.code == "conflict" and "not claimed" in info.value.message


def test_the_cli_releases_by_force_with_the_operator_as_actor(tmp_path: Path) -> None:
    home = tmp_path / "home"
    source = tmp_path / "issues.jsonl"
    source.write_text(
        json.dumps({"id": "t-1", "title": "held", "status": "in_progress", "priority": 2, "assignee": ALICE}) + "\n"
    )
    assert bee("tracker", "import", "--home", str(home), str(source)).returncode == 0
    unforced = bee("tracker", "release", "--home", str(home), "t-1", "--reason", "gone")
    assert unforced.returncode == 2 and "--force" in unforced.stderr
    forced = bee(
        "tracker", "release", "--home", str(home), "--force", "t-1", "--reason", "alice is on leave",
        env={"USER": "carol", "LOGNAME": "carol"},
    )  # fmt: skip
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["assignee"] is None
    store = open_store(str(home / "tracker.db"))
    try:
        last = call(store, "get", BOB, id="t-1")["history"][-1]
    finally:
        store.close()
    assert last["actor"] == "operator:carol" and last["changes"]["forced"]["reason"] == "alice is on leave"
    again = bee("tracker", "release", "--home", str(home), "--force", "t-1", "--reason", "x", "--actor", "ops")
    assert again.returncode == 1 and "not claimed" in again.stderr and "Traceback" not in again.stderr
