"""Import keeps the team's work, or refuses: a re-import over issues worked on since their import names them and
imports nothing, unless told to discard that work (then the report lists what went); untouched issues are replaced
as before. On SQLite and PostgreSQL, from a legacy file and from a bd backup."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import BeeError
from bee_tracker.store import SqlStore, sources
from tests.tracker.calls import ALICE, BOB, bee, call, new

GASTOWN = Path(__file__).resolve().parents[1] / "fixtures" / "beads" / "backup" / "steveyegge__gastown"


def line(issue_id: str, title: str = "as imported", **record: Any) -> str:
    return json.dumps({"id": issue_id, "title": title, "status": "open", "priority": 2, "issue_type": "task", **record})


def refusal(store: SqlStore, lines: list[str]) -> BeeError:
    with pytest.raises(BeeError) as info:
        store.import_lines(lines)
    assert info.value.code == "conflict" and "Nothing was imported" in info.value.message
    return info.value


def work_on(store: SqlStore, issue_id: str) -> None:
    """What a team does to an issue: Alice claims it and notes a finding, Bob raises its priority, labels and links."""
    call(store, "claim", ALICE, id=issue_id)
    call(store, "add_note", ALICE, id=issue_id, text="the bug is in the parser")
    call(store, "update", BOB, id=issue_id, priority=0, add_labels=["urgent"])
    call(store, "link", BOB, id=issue_id, target="t-other", type="related")


def test_a_reimport_over_worked_issues_is_refused_naming_them_and_imports_nothing(store: SqlStore) -> None:
    store.import_lines([line("t-a"), line("t-b"), line("t-other")])
    work_on(store, "t-a")
    call(store, "add_note", BOB, id="t-b", text="seen")
    before = store.export_lines()
    error = refusal(store, [line("t-new"), line("t-b", "from bd"), line("t-a", "from bd")])
    message = error.message
    assert "would replace or delete 2 issues the team changed since their import" in message
    assert (
        "t-a (claimed by alice@example.com; 1 comment; edited assignee, status, started_at, priority; 1 link change; "
        "labels changed; 4 writes by alice@example.com, bob@example.com)"
    ) in message
    assert "t-b (1 comment; 1 write by bob@example.com)" in message and "--discard-changes" in message
    assert error.details is not None
    changed = {entry["id"]: entry for entry in error.details["changed"]}
    assert changed["t-a"]["line"] == 3 and changed["t-b"]["line"] == 2
    assert changed["t-a"]["claim"] == {"holder": ALICE, "status": "in_progress"}
    assert changed["t-a"]["edits"]["priority"] == [2, 0]
    assert [c["text"] for c in changed["t-a"]["comments"]] == ["the bug is in the parser"]
    assert changed["t-a"]["labels"] == {"added": ["urgent"], "removed": []}
    assert changed["t-a"]["links"] == [{"action": "link", "type": "related", "target": "t-other"}]
    assert [w["tool"] for w in changed["t-a"]["writes"]] == ["claim", "add_note", "update", "link"]
    # nothing was imported: the work is all there, the new line is not
    assert store.export_lines() == before
    issue = call(store, "get", id="t-a")["issue"]
    assert (issue["assignee"], issue["priority"]) == (ALICE, 0)
    assert issue["comments"][0]["text"] == "the bug is in the parser"
    assert call(store, "search", query="t-new")["total"] == 0


def test_discard_changes_replaces_them_and_reports_exactly_what_was_discarded(store: SqlStore) -> None:
    store.import_lines([line("t-a"), line("t-other")])
    work_on(store, "t-a")
    report = store.import_from(sources.from_lines([line("t-a", "from bd")]), discard_changes=True)
    assert report["replaced"] == 1
    [discarded] = report["discarded"]
    assert discarded["id"] == "t-a" and discarded["claim"]["holder"] == ALICE
    assert [(c["author"], c["text"]) for c in discarded["comments"]] == [(ALICE, "the bug is in the parser")]
    assert discarded["edits"] == {
        "assignee": [None, ALICE],
        "status": ["open", "in_progress"],
        "started_at": [None, discarded["edits"]["started_at"][1]],
        "priority": [2, 0],
    }
    issue = call(store, "get", id="t-a")
    assert issue["issue"]["title"] == "from bd" and "assignee" not in issue["issue"] and issue["comment_count"] == 0
    assert issue["activity_revision"] == 1
    # replaced and untouched since: the next import replaces it without a word, as any untouched issue
    again = store.import_lines([line("t-a", "from bd, again")])
    assert again["replaced"] == 1 and "discarded" not in again


def test_an_untouched_issue_is_replaced_and_work_undone_since_still_counts(store: SqlStore) -> None:
    store.import_lines([line("t-a"), line("t-b")])
    assert store.import_lines([line("t-a", "new title")])["replaced"] == 1
    # claimed and released again: holder and status are back as imported (no claim, no edit of either), but the
    # two writes (and the start they recorded) would be lost
    call(store, "claim", ALICE, id="t-b")
    call(store, "release", ALICE, id="t-b")
    error = refusal(store, [line("t-b")])
    assert "t-b (edited started_at; 2 writes by alice@example.com)" in error.message


def test_an_issue_created_in_the_tracker_is_the_teams_work_too(store: SqlStore) -> None:
    store.import_lines([line("t-seed")])
    created = new(store, "written here", BOB)
    error = refusal(store, [line(created)])
    assert f"{created} (created in this tracker; 1 write by bob@example.com)" in error.message
    assert call(store, "get", id=created)["issue"]["title"] == "written here"


def test_refused_from_a_backup_too_and_discarded_with_its_history(store: SqlStore, tmp_path: Path) -> None:
    backup = tmp_path / "backup"
    shutil.copytree(GASTOWN, backup)
    store.import_from(sources.choose(backup))
    history = call(store, "get", id="gt-3ntl")["history_count"]
    call(store, "add_note", BOB, id="gt-3ntl", text="still seeing it")
    with pytest.raises(BeeError) as info:
        store.import_from(sources.choose(backup))
    assert info.value.code == "conflict" and "gt-3ntl (1 comment; 1 write by bob@example.com)" in info.value.message
    assert info.value.details is not None and info.value.details["changed"][0]["line"] > 0
    assert call(store, "get", id="gt-3ntl")["comment_count"] >= 1
    report = store.import_from(sources.choose(backup), discard_changes=True)
    assert [d["id"] for d in report["discarded"]] == ["gt-3ntl"] and report["replaced"] == 162
    # the backup's history comes again; the note's event stays in the audit log, the note itself is gone
    data = call(store, "get", id="gt-3ntl")
    assert data["history_count"] == history + 1
    assert "still seeing it" not in json.dumps(data["issue"].get("comments", []))


def test_cli_refuses_naming_every_issue_and_discards_with_the_flag(store_url: str, tmp_path: Path) -> None:
    source = tmp_path / "issues.jsonl"
    source.write_text(line("t-a") + "\n" + line("t-b") + "\n")
    target = ["--home", str(tmp_path / "home"), "--store", store_url]
    assert bee("tracker", "import", *target, str(source)).returncode == 0
    from bee_tracker.store import open_store

    opened = open_store(store_url)
    try:
        call(opened, "claim", ALICE, id="t-b")
    finally:
        opened.close()
    refused = bee("tracker", "import", *target, str(source))
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "t-b (claimed by alice@example.com; edited assignee, status, started_at; 1 write" in refused.stderr
    listed = json.loads(refused.stdout)
    assert [entry["id"] for entry in listed["changed"]] == ["t-b"] and listed["refused"].startswith("this import")
    done = bee("tracker", "import", *target, "--discard-changes", str(source))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["replaced"] == 2 and report["discarded"][0]["claim"]["holder"] == ALICE


def test_the_trackers_own_export_imported_back_discards_nothing(store: SqlStore) -> None:
    store.import_lines([line("t-a"), line("t-other")])
    work_on(store, "t-a")
    exported = store.export_lines()
    report = store.import_lines(exported)  # every issue reads exactly as it did: nothing to refuse
    assert report["replaced"] == 2 and "discarded" not in report
    assert store.export_lines() == exported
    issue = call(store, "get", id="t-a")["issue"]
    assert (issue["assignee"], issue["comments"][0]["text"]) == (ALICE, "the bug is in the parser")
    # worked on again, exported again: the export alone would discard nothing, but a later line for t-a (the last
    # line for an id counts) would
    call(store, "add_note", BOB, id="t-a", text="one more")
    again = store.export_lines()
    error = refusal(store, [*again, line("t-a", "changed in bd")])
    assert "t-a (1 comment; 1 write by bob@example.com)" in error.message and "t-other" not in error.message
    assert store.import_lines(again)["replaced"] == 2
