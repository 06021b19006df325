"""Lines that read like bd's: a touched line keeps its keys, takes new ones where bd puts them, and its spelling."""

import json
from pathlib import Path

from bee_tracker.store import SqlStore
from bee_tracker.store.bdjson import GO, KEY_ORDER, LineStyle, dumps, place, style_of
from tests.tracker.calls import BOB, call

BEADS = Path(__file__).resolve().parents[1] / "fixtures" / "beads"


def fixture_line(name: str, issue_id: str) -> str:
    return next(
        line for line in (BEADS / name).read_text(encoding="utf-8").splitlines() if json.loads(line)["id"] == issue_id
    )


def test_new_keys_go_where_bds_struct_puts_them(store: SqlStore) -> None:
    original = fixture_line("steveyegge__vc.jsonl", "vc-06bb")  # ids, text, status…, created/updated_at, labels
    store.import_lines([original])
    call(store, "claim", id="vc-06bb")
    call(store, "complete", id="vc-06bb", summary="done")
    call(store, "add_note", BOB, id="vc-06bb", text="later")
    [exported] = store.export_lines()
    keys = list(json.loads(exported))
    assert [k for k in keys if k in json.loads(original)] == list(json.loads(original))  # its own keys, in order
    assert keys.index("assignee") == keys.index("issue_type") + 1
    assert keys.index("updated_at") < keys.index("closed_at") < keys.index("labels")
    assert keys.index("close_reason") == keys.index("closed_at") + 1
    assert keys[-1] == "comments"
    assert exported.startswith('{"id":"vc-06bb","title":')  # bd's spelling, as the file has it


def test_an_export_records_type_comes_first_and_its_counts_last(store: SqlStore) -> None:
    original = fixture_line("NousResearch__hermes-agent.jsonl", "hermes-agent-cbc")
    store.import_lines([original])
    call(store, "add_note", id="hermes-agent-cbc", text="a note")
    keys = list(json.loads(store.export_lines()[0]))
    assert keys[0] == "_type" and keys[-3:] == ["dependency_count", "dependent_count", "comment_count"]
    assert keys.index("comments") == keys.index("started_at") + 1  # comments are the issue's, counts follow it


def test_a_touched_line_keeps_its_separators_and_escapes(store: SqlStore) -> None:
    record = json.loads(fixture_line("NVIDIA__skyhook.jsonl", "skyhook-gld"))
    record["title"] += " <é> & more"
    spaced = json.dumps(record)  # how Python writes a line: ", " and ": ", \\u escapes, <>& as they are
    untouched = json.dumps({"id": "skyhook-zzz", "title": "untouched", "status": "open", "priority": 2})
    store.import_lines([spaced, untouched])
    call(store, "add_note", id="skyhook-gld", text="café")
    touched, kept = store.export_lines()
    assert kept == untouched
    assert touched.startswith('{"id": "skyhook-gld", "title": ') and '", "' in touched
    assert " <\\u00e9> & more" in touched and '"text": "caf\\u00e9"' in touched
    assert touched == json.dumps(json.loads(touched))  # exactly as Python would have written it


def test_a_raw_ampersand_stays_raw_as_beads_rust_writes_it(store: SqlStore) -> None:
    line = '{"id":"br-amp","title":"Tom & Jerry <3","status":"open","priority":2,"issue_type":"task"}'
    store.import_lines([line])
    call(store, "update", id="br-amp", priority=1)
    [exported] = store.export_lines()
    assert '"title":"Tom & Jerry <3"' in exported and '"priority":1' in exported


def test_issues_created_here_take_the_spelling_of_the_imported_file(store: SqlStore) -> None:
    store.import_lines([json.dumps({"id": "t-a", "title": "spaced", "status": "open", "priority": 2})])
    created = call(store, "create", title="fresh")["id"]
    line = next(line for line in store.export_lines() if created in line)
    assert line.startswith(f'{{"id": "{created}", "title": "fresh", ')


def test_place_puts_each_new_key_after_its_nearest_predecessor() -> None:
    assert list(place({"b": 1, "title": 2, "id": 3}, ["b", "title"])) == ["id", "b", "title"]
    line_order = ["id", "title", "created_at", "updated_at", "close_reason", "assignee"]  # an older era's order
    values = dict.fromkeys([*line_order, "started_at", "owner", "zz_unknown", "comment_count", "_type"])
    assert list(place(values, line_order)) == [
        "_type",
        "id",
        "title",
        "created_at",
        "updated_at",
        "started_at",
        "close_reason",
        "assignee",
        "owner",
        "comment_count",  # after the whole issue, though this line's order puts assignee after close_reason
        "zz_unknown",
    ]
    assert list(place(dict.fromkeys(reversed(KEY_ORDER)), None)) == list(KEY_ORDER)


def test_style_is_read_from_separators_outside_strings() -> None:
    assert style_of('{"a":"x, y: z","b":1}') == GO
    assert style_of('{"a": "x,y", "b": 1}') == LineStyle(", ", ": ", html_escaped=True)
    assert style_of('{"a":"<"}').html_escaped is False
    assert style_of('{"a":"\\u00e9"}').ascii_only and not style_of('{"a":"é"}').ascii_only
    assert LineStyle.from_text(style_of('{"a": "\\u00e9"}').as_text()) == style_of('{"a": "\\u00e9"}')
    assert LineStyle.from_text("not json") == GO and LineStyle.from_text(None) == GO
    assert dumps({"t": "<\u2028>"}) == '{"t":"\\u003c\\u2028\\u003e"}'
