"""bd backup's table dump: every table arrives, whole or not at all, on both stores."""

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import BeeError
from bee_tracker.store import SqlStore, open_store, sources
from bee_tracker.store.backup import event_changes, issue_record
from tests.tracker.calls import bee, call

#: A real dump (steveyegge/gastown, March 2026; trimmed, see fixtures/beads/SOURCES.tsv).
GASTOWN = Path(__file__).resolve().parents[1] / "fixtures" / "beads" / "backup" / "steveyegge__gastown"


def rows(table: str, directory: Path = GASTOWN) -> list[Any]:
    return [json.loads(line) for line in (directory / f"{table}.jsonl").read_text(encoding="utf-8").splitlines()]


def load(store: SqlStore, directory: Path = GASTOWN) -> dict[str, Any]:
    return store.import_from(sources.choose(directory))


def copy(tmp_path: Path, name: str = "backup") -> Path:
    target = tmp_path / name
    shutil.copytree(GASTOWN, target)
    return target


def test_every_table_of_the_real_backup_is_imported(store: SqlStore) -> None:
    report = load(store)
    state = json.loads((GASTOWN / "backup_state.json").read_text())
    assert report["source"] == {"form": "backup", "path": str(GASTOWN)}
    assert report["tables"] == state["counts"] and report["skippedRows"] == {}
    assert report["imported"] == state["counts"]["issues"] == 162
    issues = {row["id"]: row for row in rows("issues")}
    exported = {json.loads(line).get("id"): json.loads(line) for line in store.export_lines()}
    assert set(issues) <= set(exported)
    for label in rows("labels"):
        assert label["label"] in exported[label["issue_id"]]["labels"]
    for dep in rows("dependencies"):
        wanted = {key: dep[key] for key in ("issue_id", "depends_on_id", "type", "created_at", "created_by")}
        assert wanted in exported[dep["issue_id"]]["dependencies"]
    for comment in rows("comments"):
        got = call(store, "get", id=comment["issue_id"])["issue"]["comments"]
        assert {"id": comment["id"], "text": comment["text"], "author": comment["author"]}.items() <= next(
            c for c in got if c["id"] == comment["id"]
        ).items()
    sheriff = call(store, "get", id="gt-pr-sheriff")["issue"]
    assert (sheriff["status"], sheriff["assignee"], sheriff["pinned"], sheriff["priority"]) == (
        "hooked",
        "gastown/crew/max",
        True,
        1,
    )


def test_events_become_the_issues_history_in_order(store: SqlStore) -> None:
    load(store)
    events = [row for row in rows("events") if row["issue_id"] == "gt-3ntl"]
    data = call(store, "get", id="gt-3ntl")
    assert data["history_count"] == len(events) == 5
    history = data["history"]
    assert [(h["tool"], h["actor"], h["at"]) for h in history] == [
        (f"bd {e['event_type']}", e["actor"], e["created_at"]) for e in events
    ]
    status = next(h for h in history if h["tool"] == "bd status_changed")
    assert status["changes"]["status"] == ["open", "hooked"]
    assert status["changes"]["assignee"] == [None, "gastown/polecats/furiosa"]


def test_config_is_kept_and_memories_are_written_after_the_issues(store_url: str) -> None:
    store = open_store(store_url)  # no prefix configured: the backup's own is taken
    load(store)
    config = {row["key"]: row["value"] for row in rows("config")}
    with store.db.read() as tx:
        row = tx.row("SELECT value FROM meta WHERE key = 'beads_config'")
        assert row is not None
        kept = json.loads(row[0])
    assert kept == {k: v for k, v in config.items() if not k.startswith("kv.memory.")}
    lines = store.export_lines()
    memories = [json.loads(line) for line in lines if line.startswith('{"_type":"memory"')]
    assert memories == [
        {"_type": "memory", "key": k.removeprefix("kv.memory."), "value": v}
        for k, v in sorted(config.items())
        if k.startswith("kv.memory.")
    ]
    assert all(line.startswith('{"_type":"memory"') for line in lines[-len(memories) :])
    assert call(store, "create", title="new")["id"].startswith("gt-")
    store.close()


def test_a_row_becomes_the_issue_bd_exports() -> None:
    [row] = [r for r in rows("issues") if r["id"] == "gt-pr-sheriff"]
    record = issue_record(row)
    assert record["pinned"] is True and "ephemeral" not in record and "content_hash" not in record
    assert "metadata" not in record and "timeout_ns" not in record and "await_id" not in record
    assert list(record)[:4] == ["id", "title", "description", "notes"]
    made = issue_record({**row, "ephemeral": 1, "timeout_ns": 5000, "metadata": '{"a":1}', "waiters": '["x"]'})
    assert (made["ephemeral"], made["timeout"], made["metadata"], made["waiters"]) == (True, 5000, {"a": 1}, ["x"])
    assert issue_record({**row, "estimated_minutes": 0, "priority": 0})["estimated_minutes"] == 0


def test_an_event_says_what_changed_and_cuts_long_text() -> None:
    changes = event_changes(
        {
            "event_type": "updated",
            "old_value": json.dumps({"id": "x", "title": "t", "description": "d" * 500}),
            "new_value": json.dumps({"description": "new"}),
            "comment": None,
        }
    )
    assert changes == {"description": ["d" * 79 + "…", "new"]}
    assert event_changes({"event_type": "closed", "old_value": "", "new_value": "Closed", "comment": "c"}) == {
        "new": "Closed",
        "comment": "c",
    }


def test_importing_the_backup_again_changes_nothing(store: SqlStore) -> None:
    load(store)
    before = store.export_lines()
    history = call(store, "get", id="gt-3ntl")["history_count"]
    report = load(store)
    assert report["replaced"] == 162 and store.export_lines() == before
    assert call(store, "get", id="gt-3ntl")["history_count"] == history


def test_blocking_rows_of_the_dump_decide_ready(store: SqlStore, tmp_path: Path) -> None:
    backup = copy(tmp_path)
    row = {
        "created_at": "2026-03-01T00:00:00Z",
        "created_by": "mayor",
        "depends_on_id": "gt-5659",
        "issue_id": "gt-08hf1",
        "type": "blocks",
    }
    with (backup / "dependencies.jsonl").open("a") as deps:
        deps.write(json.dumps(row, separators=(",", ":")) + "\n")
    (backup / "backup_state.json").unlink()
    load(store, backup)
    ready = {issue["id"] for issue in call(store, "ready", limit=100)["issues"]}
    assert "gt-5659" in ready and "gt-08hf1" not in ready


def test_counts_that_disagree_with_the_state_file_refuse_the_import(store: SqlStore, tmp_path: Path) -> None:
    backup = copy(tmp_path)
    events = backup / "events.jsonl"
    events.write_text("".join(events.read_text().splitlines(keepends=True)[:-1]))
    with pytest.raises(BeeError) as info:
        load(store, backup)
    assert info.value.code == "invalid_argument"
    assert "events.jsonl holds 554 rows, not 555" in info.value.message and "nothing was imported" in info.value.message
    assert store.export_lines() == []
    (backup / "backup_state.json").unlink()
    assert load(store, backup)["tables"]["events"] == 554


def test_rows_of_issues_not_imported_are_left_out_and_counted(store: SqlStore, tmp_path: Path) -> None:
    backup = copy(tmp_path)
    (backup / "backup_state.json").unlink()
    with (backup / "labels.jsonl").open("a") as labels:
        labels.write('{"issue_id":"gt-nowhere","label":"lost"}\n')
    with (backup / "events.jsonl").open("a") as events:
        events.write('{"actor":"a","comment":null,"created_at":"2026-03-01T00:00:00Z","event_type":"created",')
        events.write('"id":99999,"issue_id":"gt-nowhere","new_value":"","old_value":""}\n')
    report = load(store, backup)
    assert report["skippedRows"] == {"labels": 1, "events": 1}


def test_a_bad_row_is_named_with_its_table_and_nothing_is_imported(store: SqlStore, tmp_path: Path) -> None:
    backup = copy(tmp_path)
    (backup / "backup_state.json").unlink()
    with (backup / "comments.jsonl").open("a") as comments:
        comments.write("{not json\n")
    with pytest.raises(BeeError) as info:
        load(store, backup)
    assert info.value.message.startswith("comments.jsonl line 15 is not valid JSON")
    assert info.value.details == {"line": 15} and store.export_lines() == []


def test_the_issues_table_alone_is_refused_naming_the_directory_to_import(store: SqlStore) -> None:
    with pytest.raises(BeeError) as info:
        store.import_from(sources.choose(GASTOWN / "issues.jsonl"))
    assert info.value.code == "invalid_argument" and info.value.details == {"line": 1}
    assert "a row of bd backup's issues table" in info.value.message
    assert "import the backup directory instead" in info.value.message
    assert store.export_lines() == []


def test_the_tables_concatenated_are_refused_at_the_first_row_that_is_no_issue(store: SqlStore, tmp_path: Path) -> None:
    joined = tmp_path / "all.jsonl"
    joined.write_text("".join((GASTOWN / f"{t}.jsonl").read_text() for t in ("labels", "dependencies", "comments")))
    with pytest.raises(BeeError) as info:
        store.import_from(sources.choose(joined))
    assert info.value.details == {"line": 1} and "a row of bd backup's labels table" in info.value.message
    assert store.export_lines() == []


def test_cli_imports_the_backup_and_refuses_its_issues_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = bee("tracker", "import", "--home", str(home), str(GASTOWN))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tables"]["events"] == 555
    refused = bee("tracker", "import", "--home", str(tmp_path / "other"), str(GASTOWN / "issues.jsonl"))
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "line 1 is a row of bd backup's issues table" in refused.stderr
    out = tmp_path / "out.jsonl"
    assert bee("tracker", "export", "--home", str(home), str(out)).returncode == 0
    assert len(out.read_text().splitlines()) == 162 + 4  # the issues, then the memories
