"""The store-wide audit log: every write, read back by actor, issue, tool and time, and carried through bd backup's
events form without losing a thing."""

import json
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import BeeError
from bee_tracker import calls
from bee_tracker.store import SqlStore, open_store
from bee_tracker.store.audit import Filters
from tests.conftest import FIXTURES
from tests.harness.collab import bee_here
from tests.tracker.calls import ALICE, BOB, call, new, refused
from tests.tracker.test_claim_leases import expired_claim

BD_COLUMNS = ["actor", "comment", "created_at", "event_type", "id", "issue_id", "new_value", "old_value"]


def everything(store: SqlStore) -> list[dict[str, Any]]:
    return store.log(Filters(), limit=10_000)


def a_history(store: SqlStore) -> dict[str, str]:
    """Issues with one write of every kind on them (two actors, both kinds of history event, a lease lost)."""
    first = new(store, "first", labels=["api"])
    second = new(store, "second", BOB, prerequisites=[first])
    call(store, "claim", ALICE, id=first, lease_seconds=600)
    call(store, "add_note", BOB, id=first, text="a note with <html> & ünïcödé")
    call(store, "update", ALICE, id=first, priority=0, add_labels=["urgent"], description="x" * 200)
    call(store, "link", BOB, id=second, target=first, type="related")
    call(store, "complete", ALICE, id=first, summary="done", evidence="tests pass")
    call(store, "claim", BOB, id=second)
    calls.release_forced(store, second, actor="operator:root", reason="gone")
    stranded, _ = expired_claim(store, "stranded")
    call(store, "claim", BOB, id=stranded)
    return {"first": first, "second": second, "stranded": stranded}


def test_every_write_is_logged_with_who_what_where_when_and_which_replica(store: SqlStore) -> None:
    issue_id = new(store, "logged")
    call(store, "claim", BOB, id=issue_id)
    refused(store, "conflict", "claim", ALICE, id=issue_id)  # refused: nothing written, nothing logged
    call(store, "get", ALICE, id=issue_id)  # a read is not a write
    entries = everything(store)
    assert [(e["actor"], e["tool"], e["issue"]) for e in entries] == [
        (ALICE, "create", issue_id),
        (BOB, "claim", issue_id),
    ]
    claimed = entries[-1]
    assert claimed["changes"]["assignee"] == [None, BOB] and claimed["changes"]["status"] == ["open", "in_progress"]
    assert claimed["replica"] == store.replica
    assert claimed["at"] == call(store, "get", BOB, id=issue_id)["last_activity_at"]
    assert entries[0]["seq"] < claimed["seq"]


def test_the_log_is_read_by_actor_issue_tool_and_time_newest_last(store: SqlStore) -> None:
    ids = a_history(store)
    entries = everything(store)
    assert all(e["actor"] == BOB for e in store.log(Filters(actor=BOB), limit=100))
    assert {e["issue"] for e in store.log(Filters(issue=ids["first"]), limit=100)} == {ids["first"]}
    assert [e["issue"] for e in store.log(Filters(tool="complete"), limit=100)] == [ids["first"]]
    assert store.log(Filters(tool="release --force"), limit=100)[0]["actor"] == "operator:root"
    later = store.log(Filters(since=entries[5]["at"]), limit=100)
    assert later == [e for e in entries if e["at"] >= entries[5]["at"]]
    assert store.log(Filters(), limit=3) == entries[-3:]
    assert store.log(Filters(actor="nobody"), limit=100) == []


def test_each_replica_names_itself(store_url: str) -> None:
    one, two = (open_store(store_url, prefix="t", replica=name) for name in ("replica-a", "replica-b"))
    try:
        issue_id = new(one)
        call(two, "claim", BOB, id=issue_id)
        assert [e["replica"] for e in everything(one)] == ["replica-a", "replica-b"]
    finally:
        one.close()
        two.close()


@pytest.fixture
def other(store_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    """A second, empty store of the same kind."""
    url = (
        request.getfixturevalue("postgres_server").create_database()
        if store_url.startswith("postgresql")
        else str(tmp_path / "other.db")
    )
    opened = open_store(url, prefix="t")
    yield opened
    opened.close()


def _without_seq(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "seq"} for e in entries]


def test_the_log_goes_out_in_bd_backups_events_form_and_comes_back_whole(store: SqlStore, other: SqlStore) -> None:
    ids = a_history(store)
    lines, events = store.export_lines(), list(store.iter_events())
    rows = [json.loads(line) for line in events]
    assert len(rows) == len(everything(store))
    assert all([k for k in row if not k.startswith("bee_")] == BD_COLUMNS for row in rows)
    assert all(list(row) == sorted(row) for row in rows)  # bd's column order
    kinds = {(row["bee_tool"], row["event_type"]) for row in rows}
    wanted = {("create", "created"), ("add_note", "commented"), ("complete", "closed"), ("link", "dependency_added")}
    assert wanted <= kinds
    status = next(row for row in rows if row["bee_tool"] == "complete")
    assert json.loads(status["old_value"])["status"] == "in_progress"
    assert json.loads(status["new_value"])["status"] == "closed"

    report = other.import_lines(lines, events=events)
    assert report["tables"]["events"] == len(rows)
    assert _without_seq(everything(other)) == _without_seq(everything(store))
    for issue_id in ids.values():
        mine, theirs = (call(s, "get", BOB, id=issue_id) for s in (store, other))
        assert (theirs["history"], theirs["history_count"]) == (mine["history"], mine["history_count"])
    assert list(other.iter_events()) != [] and other.export_lines() == lines
    # The same file again adds nothing.
    again = other.import_lines(lines, events=events)
    assert again["eventsAlreadyHeld"] == len(rows)
    assert len(everything(other)) == len(rows)


def test_bd_events_and_bad_bee_columns_are_read_as_bds_own_history(store: SqlStore) -> None:
    line = json.dumps({"id": "bd-1", "title": "from bd", "status": "open", "priority": 2, "issue_type": "task"})
    rows = [
        {
            "actor": "mayor",
            "comment": None,
            "created_at": "2026-02-26T15:13:46Z",
            "event_type": "status_changed",
            "id": 3,
            "issue_id": "bd-1",
            "new_value": '{"status":"hooked"}',
            "old_value": '{"status":"open"}',
        },
        {
            "actor": "mayor",
            "bee_changes": "not json",
            "bee_tool": "claim",
            "created_at": "2026-02-26T15:14:00Z",
            "event_type": "updated",
            "id": 4,
            "issue_id": "bd-1",
            "new_value": None,
            "old_value": None,
        },
        {"actor": "x", "created_at": "2026-02-26T15:15:00Z", "event_type": "created", "issue_id": "bd-gone"},
    ]
    report = store.import_lines([line], events=[json.dumps(row) for row in rows])
    assert report["skippedRows"]["events"] == 1
    history = [(e["tool"], e["changes"]) for e in everything(store)]
    assert history == [("bd status_changed", {"status": ["open", "hooked"]}), ("bd updated", {})]


def test_an_events_file_that_is_not_jsonl_is_refused_naming_the_line(store: SqlStore) -> None:
    line = json.dumps({"id": "bd-1", "title": "t", "status": "open"})
    with pytest.raises(BeeError) as caught:
        store.import_lines([line], events=['{"issue_id": "bd-1"}', "not json"])
    assert caught.value.code == "invalid_argument" and "events.jsonl line 2" in caught.value.message
    assert call(store, "search", ALICE, query="t")["total"] == 0  # nothing was imported


# -- the command line --------------------------------------------------------------------------------------------


def test_bee_tracker_log_and_claims_read_the_store(tmp_path: Path) -> None:
    url = str(tmp_path / "tracker.db")
    store = open_store(url, prefix="t")
    ids = a_history(store)
    store.close()
    done = bee_here("tracker", "log", "--store", url, "--actor", BOB, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    entries = json.loads(done.stdout)
    assert entries and all(e["actor"] == BOB for e in entries)
    text = bee_here("tracker", "log", "--store", url, "--issue", ids["second"], "--since", "1h", cwd=tmp_path).stdout
    assert text.splitlines()[0].split("  ")[1:4] == [BOB, "create", ids["second"]]
    assert "release --force" in text and "operator:root" in text
    assert bee_here("tracker", "log", "--store", url, "--since", "2999-01-01T00:00:00Z", cwd=tmp_path).stdout == ""
    bad = bee_here("tracker", "log", "--store", url, "--since", "yesterday", cwd=tmp_path)
    assert bad.returncode == 2 and "how long ago: 30s, 15m, 2h or 7d" in bad.stderr
    held = json.loads(bee_here("tracker", "claims", "--store", url, "--json", cwd=tmp_path).stdout)
    assert [claim["id"] for claim in held] == [ids["stranded"]]  # BOB took it; the others are closed or released
    assert bee_here("tracker", "claims", "--store", url, "--stale", cwd=tmp_path).stdout == ""
    listed = bee_here("tracker", "claims", "--store", url, cwd=tmp_path).stdout
    assert f"{ids['stranded']}  {BOB}  no lease (never expires)" in listed


def test_bee_tracker_claims_says_which_have_expired(tmp_path: Path) -> None:
    url = str(tmp_path / "tracker.db")
    store = open_store(url, prefix="t")
    stranded, expired_at = expired_claim(store)
    store.close()
    stale = bee_here("tracker", "claims", "--store", url, "--stale", cwd=tmp_path).stdout
    assert stale.startswith(f"{stranded}  {ALICE}  EXPIRED at {expired_at}")
    [claim] = json.loads(bee_here("tracker", "claims", "--store", url, "--stale", "--json", cwd=tmp_path).stdout)
    assert (claim["expired"], claim["lease_seconds"], claim["lease_expires_at"]) == (True, 1, expired_at)


def test_export_and_import_carry_the_log_on_the_command_line(tmp_path: Path) -> None:
    url, copy = str(tmp_path / "tracker.db"), str(tmp_path / "copy.db")
    store = open_store(url, prefix="t")
    a_history(store)
    before = _without_seq(everything(store))
    store.close()
    issues, events = tmp_path / "issues.jsonl", tmp_path / "events.jsonl"
    exported = bee_here("tracker", "export", "--store", url, "--events", str(events), str(issues), cwd=tmp_path)
    assert exported.returncode == 0 and f"exported {len(before)} events" in exported.stderr
    imported = bee_here("tracker", "import", "--store", copy, "--events", str(events), str(issues), cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    restored = open_store(copy)
    try:
        assert _without_seq(everything(restored)) == before
    finally:
        restored.close()
    backup = FIXTURES / "beads" / "backup" / "steveyegge__gastown"
    refusal = bee_here("tracker", "import", "--store", copy, "--events", str(events), str(backup), cwd=tmp_path)
    assert refusal.returncode == 2 and "whose own events.jsonl brings its history" in refusal.stderr
