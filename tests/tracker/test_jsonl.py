"""Beads JSONL: every real fixture round-trips byte for byte; bad lines stop the import whole."""

import json
from pathlib import Path

import pytest

from bee_tracker.store import Invalid

#: Real exports from public repositories (see fixtures/beads/SOURCES.tsv).
FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "beads").glob("*.jsonl"))


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_real_exports_round_trip_exactly(store, fixture):
    lines = fixture.read_text(encoding="utf-8").splitlines()
    report = store.import_lines(lines)
    assert report["imported"] == len(lines)
    assert store.export_lines() == lines


def test_touched_issues_keep_every_key_and_their_order(store):
    line = (
        '{"id":"t-1","title":"A \\u003cb\\u003e","status":"open","priority":1,"issue_type":"task",'
        '"work_type":"mutex","estimated_minutes":30,"labels":["x"],'
        '"dependencies":[{"issue_id":"t-1","depends_on_id":"t-zz","type":"follows","metadata":"{}"}],'
        '"comments":[{"id":"c-uuid","issue_id":"t-1","author":"a","text":"hi","created_at":"2026-01-01T00:00:00Z"}]}'
    )
    store.import_lines([line])
    store.add_note("bob@example.com", "t-1", "later")
    [exported] = store.export_lines()
    original, now = json.loads(line), json.loads(exported)
    assert list(now)[: len(original)] == list(original)
    assert now["work_type"] == "mutex" and now["estimated_minutes"] == 30
    assert now["dependencies"] == original["dependencies"]
    assert now["comments"][0] == original["comments"][0] and now["comments"][1]["text"] == "later"
    assert "\\u003cb\\u003e" in exported  # escaped the way Beads (Go) escapes


def test_tombstones_are_skipped_missing_ids_generated_other_records_counted(store):
    report = store.import_lines(
        [
            '{"id":"t-a","title":"kept","status":"open","priority":2,"issue_type":"task"}',
            '{"id":"t-b","title":"gone","status":"tombstone","priority":2,"issue_type":"task"}',
            '{"title":"no id","status":"open","priority":2,"issue_type":"task"}',
            '{"_type":"memory","key":"x"}',
            "",
        ]
    )
    assert report["imported"] == 2 and report["tombstonesSkipped"] == 1
    assert report["otherRecordsSkipped"] == {"memory": 1}
    [generated] = report["generatedIds"]
    assert generated["line"] == 3 and store.get(generated["id"])["issue"]["title"] == "no id"


def test_custom_statuses_and_types_are_registered_by_import(store):
    store.import_lines(
        [
            '{"id":"t-h","title":"h","status":"hooked","priority":2,"issue_type":"convoy"}',
            '{"id":"t-q","title":"q","status":"review","priority":2,"issue_type":"saga"}',
        ]
    )
    vocabulary = store.vocabulary()
    assert "review" in vocabulary["statuses"] and "saga" in vocabulary["types"]


def test_a_malformed_line_is_named_and_nothing_is_imported(store):
    with pytest.raises(Invalid) as info:
        store.import_lines(
            ['{"id":"t-a","title":"a","status":"open","priority":2,"issue_type":"task"}', '{"id":"t-b", oops}']
        )
    assert info.value.details == {"line": 2} and "nothing was imported" in info.value.message
    assert store.search()["total"] == 0
    with pytest.raises(Invalid, match="line 1 is not a JSON object"):
        store.import_lines(["[1, 2]"])


def test_reimport_replaces_and_new_comment_ids_continue_above_imported_ones(store):
    line = (
        '{"id":"t-c","title":"c","status":"open","priority":2,"issue_type":"task",'
        '"comments":[{"id":41,"issue_id":"t-c","author":"a","text":"old","created_at":"2026-01-01T00:00:00Z"}]}'
    )
    store.import_lines([line])
    report = store.import_lines([line])
    assert report["replaced"] == 1
    note = store.add_note("a@example.com", "t-c", "new")
    assert note["comment"]["id"] > 41
