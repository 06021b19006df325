"""One set of rules for both forms: a bd backup dump is refused where a legacy file with the same data is (text the
store cannot keep, a comment or an issue over its cap, more labels than an issue may carry), naming the table and
row, never with a traceback, with nothing imported; what either form imports stays readable by get and ready."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import BeeError
from bee_hostkit.results import render
from bee_tracker.model import LABELS_MAX
from bee_tracker.store import SqlStore, sources
from tests.tracker.calls import bee, call, refused

GASTOWN = Path(__file__).resolve().parents[1] / "fixtures" / "beads" / "backup" / "steveyegge__gastown"
#: An open task of the dump, with two labels of its own.
ISSUE = "gt-8neb"
#: A character that costs 13 bytes in a result: \u0001 in structuredContent, \\u0001 in the text copy.
HEAVY = "\x01"


def dump(tmp_path: Path, table: str, *rows: str) -> Path:
    """The real dump with ``rows`` (JSON text) appended to ``table``, its counts file left out."""
    backup = tmp_path / "backup"
    shutil.copytree(GASTOWN, backup)
    (backup / "backup_state.json").unlink()
    with (backup / f"{table}.jsonl").open("a", encoding="utf-8") as out:
        out.writelines(row + "\n" for row in rows)
    return backup


def rows_in(table: str) -> int:
    return len((GASTOWN / f"{table}.jsonl").read_text(encoding="utf-8").splitlines())


def refused_import(store: SqlStore, source: sources.Choice) -> BeeError:
    with pytest.raises(BeeError) as info:
        store.import_from(source)
    assert info.value.code == "invalid_argument" and "nothing was imported" in info.value.message
    assert store.export_lines() == []
    return info.value


def fits(store: SqlStore, tool: str, **args: Any) -> None:
    """``tool`` answers, and its result fits the result limit (render refuses one over it, as the host does)."""
    render({"data": call(store, tool, **args)})


COMMENT = {"author": "a", "created_at": "2026-03-01T00:00:00Z", "id": 99999, "issue_id": ISSUE}
BAD_ROWS = [
    ("labels", json.dumps({"issue_id": ISSUE, "label": "\ud800"}), "unpaired surrogate"),
    ("comments", json.dumps({**COMMENT, "text": "\ud800"}), "unpaired surrogate"),
    ("comments", json.dumps({**COMMENT, "text": "a\x00b"}), "NUL"),
    ("comments", json.dumps({**COMMENT, "text": "x" * 4_000_000}), "has a comment"),
    (
        "dependencies",
        json.dumps({"depends_on_id": "\ud800", "issue_id": ISSUE, "type": "blocks", "created_by": ""}),
        "unpaired surrogate",
    ),
    (
        "events",
        json.dumps({"actor": "\ud800", "created_at": "", "event_type": "created", "id": 1, "issue_id": ISSUE}),
        "unpaired surrogate",
    ),
    (
        "events",
        json.dumps({"actor": "a\x00", "created_at": "", "event_type": "created", "id": 1, "issue_id": ISSUE}),
        "NUL",
    ),
    # a surrogate escaped inside the JSON text of an event's new value, decoded only when the event is read
    (
        "events",
        json.dumps({"actor": "a", "event_type": "updated", "id": 1, "issue_id": ISSUE, "new_value": '{"t":"\\ud800"}'}),
        "unpaired surrogate",
    ),
    ("config", json.dumps({"key": "kv.memory.x", "value": "\ud800"}), "unpaired surrogate"),
]


@pytest.mark.parametrize(("table", "row", "says"), BAD_ROWS, ids=[f"{t}-{s}" for t, _, s in BAD_ROWS])
def test_a_bad_row_of_any_table_is_named_with_its_table_and_row(
    store: SqlStore, tmp_path: Path, table: str, row: str, says: str
) -> None:
    error = refused_import(store, sources.choose(dump(tmp_path, table, row)))
    number = rows_in(table) + 1
    assert error.message.startswith(f"{table}.jsonl line {number} ") and says in error.message
    assert error.details == {"line": number}


def test_the_same_data_in_a_legacy_line_is_refused_alike(store: SqlStore) -> None:
    base = {"id": "t-a", "title": "a"}
    for record, says in (
        ({**base, "labels": ["\ud800"]}, "unpaired surrogate"),
        ({**base, "comments": [{"id": 1, "text": "a\x00b"}]}, "NUL"),
        ({**base, "comments": [{"id": 1, "text": "x" * 4_000_000}]}, "has a comment"),
        ({**base, "dependencies": [{"depends_on_id": "\ud800", "type": "blocks"}]}, "unpaired surrogate"),
    ):
        error = refused_import(store, sources.from_lines([json.dumps(record)]))
        assert error.message.startswith("line 1 ") and says in error.message


def test_more_labels_than_an_issue_may_carry_are_refused_from_either_form(store: SqlStore, tmp_path: Path) -> None:
    labels = [f"label-{n}" for n in range(LABELS_MAX + 1)]
    error = refused_import(store, sources.from_lines([json.dumps({"id": "t-a", "title": "a", "labels": labels})]))
    assert f"line 1 has {LABELS_MAX + 1} labels, more than the {LABELS_MAX} an issue may carry" in error.message
    rows_of_all = map(json.loads, (GASTOWN / "labels.jsonl").read_text().splitlines())
    own = [row for row in rows_of_all if row["issue_id"] == ISSUE]
    rows = [json.dumps({"issue_id": ISSUE, "label": f"extra-{n}"}) for n in range(30_000)]
    error = refused_import(store, sources.choose(dump(tmp_path, "labels", *rows)))
    number = rows_in("labels") + LABELS_MAX - len(own) + 1  # the row that would be its 101st label
    assert error.message.startswith(f"labels.jsonl line {number} gives {ISSUE} more than the {LABELS_MAX} labels")


def test_an_issue_its_labels_and_dependencies_take_over_the_cap_is_refused(store: SqlStore, tmp_path: Path) -> None:
    # 60 labels of 200 heavy characters: each within every cap, together about 160 KB as get returns the issue
    rows = [json.dumps({"issue_id": ISSUE, "label": f"{n:02d}" + HEAVY * 200}) for n in range(60)]
    error = refused_import(store, sources.choose(dump(tmp_path, "labels", *rows)))
    issues = (GASTOWN / "issues.jsonl").read_text().splitlines()
    issue_row = next(n for n, text in enumerate(issues, 1) if json.loads(text)["id"] == ISSUE)
    assert error.message.startswith(f"issues.jsonl line {issue_row} is issue {ISSUE}, which with its ")
    assert "labels (labels.jsonl)" in error.message and "bytes over the cap that keeps every issue readable by get" in (
        error.message
    )
    # the same issue as one legacy line is refused at that line
    record = {"id": "t-a", "title": "a", "labels": [f"{n:02d}" + HEAVY * 200 for n in range(60)]}
    assert "bytes over the cap" in refused_import(store, sources.from_lines([json.dumps(record)])).message


def test_what_either_form_takes_at_the_caps_stays_readable_by_get_and_ready(store: SqlStore, tmp_path: Path) -> None:
    # as many labels as an issue may carry, each as long as the tools allow, and a comment just within its cap
    labels = [f"{n:03d}-" + "l" * 95 for n in range(LABELS_MAX)]
    comment = {**COMMENT, "text": "c" * 45_000}
    backup = dump(tmp_path, "labels", *(json.dumps({"issue_id": ISSUE, "label": label}) for label in labels[:90]))
    with (backup / "comments.jsonl").open("a") as out:
        out.write(json.dumps(comment) + "\n")
    store.import_from(sources.choose(backup))
    fits(store, "get", id=ISSUE)
    fits(store, "ready", limit=100)
    assert len(call(store, "get", id=ISSUE)["issue"]["labels"]) <= LABELS_MAX


def test_the_tools_keep_to_the_same_labels_cap(store: SqlStore) -> None:
    issue_id = call(store, "create", title="many labels", labels=[f"a{n}" for n in range(50)])["id"]
    call(store, "update", id=issue_id, add_labels=[f"b{n}" for n in range(50)])
    error = refused(store, "invalid_argument", "update", id=issue_id, add_labels=["one-too-many"])
    assert f"{LABELS_MAX + 1} labels; an issue may carry at most {LABELS_MAX}" in error.message
    assert len(call(store, "get", id=issue_id)["issue"]["labels"]) == LABELS_MAX


def test_cli_names_the_row_of_a_bad_dump_without_a_traceback(tmp_path: Path) -> None:
    backup = dump(tmp_path, "labels", json.dumps({"issue_id": ISSUE, "label": "\ud800"}))
    home = tmp_path / "home"
    failed = bee("tracker", "import", "--home", str(home), str(backup))
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert f"labels.jsonl line {rows_in('labels') + 1} holds an unpaired surrogate" in failed.stderr
    assert bee("tracker", "export", "--home", str(home)).stdout == ""
