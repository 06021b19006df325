"""Golden tests of `bee bd --json`: every answer has the keys, types and order of bd's, as read from Beads' source
(tests/tracker/bd/bd_shapes.py), on every real export and on both stores; and Go's encoding of them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bee_tracker.bd import gojson
from tests.tracker.bd import bd_shapes as bd_
from tests.tracker.bd.run import ALICE, EXPORTS, bd, loaded


def _first(items: list[dict[str, Any]], test: Any) -> dict[str, Any] | None:
    return next((item for item in items if test(item)), None)


@pytest.mark.parametrize("export", EXPORTS, ids=[p.stem for p in EXPORTS])
def test_every_reading_answer_has_bds_shape_on_every_real_export(store_url: str, export: Path) -> None:
    url = loaded(store_url, export)
    ready = bd("ready", "-n", "0", "--json", store=url).json
    for index, item in enumerate(ready):
        bd_.check_struct(item, bd_.ISSUE_WITH_COUNTS, f"ready[{index}]")
    listed = bd("list", "--all", "-n", "0", "--json", store=url).json
    assert listed, export
    for index, item in enumerate(listed):
        bd_.check_struct(item, bd_.ISSUE_WITH_COUNTS, f"list[{index}]")
    word = re.sub(r"[^A-Za-z]", " ", listed[0]["title"]).split()[0]
    for index, item in enumerate(bd("search", word, "--status", "all", "--json", store=url).json):
        bd_.check_struct(item, bd_.ISSUE_WITH_COUNTS, f"search[{index}]")
        assert "dependencies" not in item and "parent" not in item  # search.go fills neither
    for index, item in enumerate(bd("blocked", "--json", store=url).json):
        bd_.check_struct(item, bd_.BLOCKED_ISSUE, f"blocked[{index}]")
    stats = bd("stats", "--json", store=url).json
    assert list(stats) == ["schema_version", "summary"] and stats["schema_version"] == 1
    bd_.check_sorted_struct(dict(sorted({**stats["summary"], "schema_version": 1}.items())), bd_.STATISTICS, "stats")
    assert list(stats["summary"]) == sorted(name for name, _, _ in bd_.STATISTICS)  # every one, as bd writes them
    linked = _first(listed, lambda i: i.get("dependencies")) or listed[0]
    commented = _first(listed, lambda i: i["comment_count"]) or listed[0]
    shown = bd("show", linked["id"], commented["id"], "--json", store=url).json
    assert [item["id"] for item in shown] == [linked["id"], commented["id"]]
    for index, item in enumerate(shown):
        bd_.check_struct(item, bd_.ISSUE_DETAILS, f"show[{index}]")
    for index, node in enumerate(bd("dep", "tree", linked["id"], "--json", store=url).json):
        bd_.check_struct(node, bd_.TREE_NODE, f"tree[{index}]")
    for index, comment in enumerate(bd("comments", commented["id"], "--json", store=url).json):
        bd_.check_struct(comment, bd_.COMMENT, f"comments[{index}]")
    names = bd("label", "list", linked["id"], "--json", store=url).json
    assert isinstance(names, list) and names == sorted(names) and all(isinstance(n, str) for n in names)


def test_the_real_exports_reach_every_nested_shape(store_url: str) -> None:
    """The checks above are not vacuous: some export has comments, dependencies, dependents and a parent."""
    url = loaded(store_url, next(p for p in EXPORTS if p.stem == "gastownhall__beads__sqlite-era"))
    listed = bd("list", "--all", "-n", "0", "--json", store=url).json
    assert any(i.get("dependencies") for i in listed) and any(i.get("parent") for i in listed)
    assert any(i["comment_count"] for i in listed) and any(i["dependent_count"] for i in listed)
    chosen = [i["id"] for i in listed if i["comment_count"] or i["dependent_count"] or i.get("dependencies")]
    shown = bd("show", *chosen, "--json", store=url).json
    assert any(s.get("dependents") for s in shown) and any(s.get("dependencies") for s in shown)
    assert any(s.get("comments") for s in shown) and any(s.get("epic_total_children") for s in shown)
    for index, item in enumerate(shown):
        bd_.check_struct(item, bd_.ISSUE_DETAILS, f"show[{index}]")


def test_every_writing_answer_has_bds_shape(store_url: str) -> None:
    first = bd(
        "--actor",
        ALICE,
        "create",
        "First <thing> & more",
        "-t",
        "bug",
        "-p",
        "P1",
        "-l",
        "b,a",
        "--json",
        store=store_url,
    ).json
    bd_.check_sorted_struct(dict(first), bd_.ISSUE, "create")
    assert "labels" not in first  # create.go prints the issue it built, before its labels were added
    assert first["title"] == "First <thing> & more" and first["priority"] == 1 and first["issue_type"] == "bug"
    second = bd("--actor", ALICE, "create", "Second", "--json", store=store_url).json["id"]
    claimed = bd("--actor", ALICE, "update", first["id"], "--claim", "--json", store=store_url).json
    assert len(claimed) == 1 and claimed[0]["status"] == "in_progress" and claimed[0]["assignee"] == ALICE
    bd_.check_struct(claimed[0], bd_.ISSUE, "update")
    assert claimed[0]["labels"] == ["a", "b"]  # GetIssue loads labels, sorted
    comment = bd("--actor", ALICE, "comments", "add", first["id"], "Working on it", "--json", store=store_url).json
    bd_.check_sorted_struct(dict(comment), bd_.COMMENT, "comments add")
    assert comment["author"] == ALICE and comment["text"] == "Working on it" and isinstance(comment["id"], str)
    for action in ("add", "remove"):
        labelled = bd("label", action, first["id"], second, "urgent", "--json", store=store_url).json
        assert [item["issue_id"] for item in labelled] == [first["id"], second]
        for item in labelled:
            assert list(item) == sorted(bd_.LABEL_RESULT) and item["status"] == f"{action}ed".replace(
                "removeed", "removed"
            )
    bd_.check_sorted_object(
        bd("dep", "add", second, first["id"], "--json", store=store_url).json, bd_.DEP_ADDED, "dep add"
    )
    bd_.check_sorted_object(
        bd("dep", "remove", second, first["id"], "--json", store=store_url).json, bd_.DEP_REMOVED, "dep rm"
    )
    blocks = bd("dep", first["id"], "--blocks", second, "--json", store=store_url).json
    bd_.check_sorted_object(blocks, bd_.DEP_BLOCKS, "dep --blocks")
    bd("dep", "rm", second, first["id"], store=store_url)
    closed = bd("--actor", ALICE, "close", first["id"], "--reason", "Done", "--json", store=store_url).json
    bd_.check_struct(closed[0], bd_.ISSUE, "close")
    assert closed[0]["status"] == "closed" and closed[0]["close_reason"] == "Done" and "closed_at" in closed[0]
    reopened = bd("reopen", first["id"], "--json", store=store_url).json
    bd_.check_struct(reopened[0], bd_.ISSUE, "reopen")
    assert reopened[0]["status"] == "open" and "closed_at" not in reopened[0] and "close_reason" not in reopened[0]


def test_the_claim_next_answers_have_bds_shape(store_url: str) -> None:
    first, second, third = (bd("create", title, "--silent", store=store_url).stdout.strip() for title in "ABC")
    done = bd("--actor", ALICE, "close", first, "--claim-next", "--json", store=store_url).json
    bd_.check_sorted_object(done, bd_.CLOSE_CLAIMED, "close --claim-next")
    for where, item in [("claimed", done["claimed"]), *(("closed", item) for item in done["closed"])]:
        assert list(item) == sorted(item), f"close --claim-next {where}: keys not sorted"  # inside a Go map
        bd_.check_sorted_struct(dict(sorted({**item, "schema_version": 1}.items())), bd_.ISSUE, where)
    assert [item["id"] for item in done["closed"]] == [first] and done["closed"][0]["status"] == "closed"
    assert done["claimed"]["status"] == "in_progress" and done["claimed"]["assignee"] == ALICE
    taken = bd("--actor", ALICE, "ready", "--claim", "--json", store=store_url).json
    assert [item["id"] for item in taken] == [third if done["claimed"]["id"] == second else second]
    bd_.check_struct(taken[0], bd_.ISSUE_WITH_COUNTS, "ready --claim")
    rest = [done["claimed"]["id"], taken[0]["id"]]
    bd("--actor", ALICE, "close", *rest, store=store_url)
    nothing = bd("--actor", ALICE, "ready", "--claim", "--json", store=store_url)
    assert nothing.stdout == "[]\n"
    bd("reopen", first, store=store_url)
    bd("--actor", ALICE, "update", first, "--claim", store=store_url)
    alone = bd("--actor", ALICE, "close", first, "--claim-next", "--json", store=store_url).json
    assert isinstance(alone, list) and [item["id"] for item in alone] == [first]  # nothing was ready: the list


def test_a_failure_under_json_is_bds_error_object_on_stdout(store_url: str) -> None:
    bd("create", "x", store=store_url)
    failed = bd("show", "t-nothing", "--json", store=store_url)
    assert failed.returncode == 1
    assert json.loads(failed.stdout) == {"error": "no issues found matching the provided IDs", "schema_version": 1}
    assert list(json.loads(failed.stdout)) == ["error", "schema_version"]
    plain = bd("show", "t-nothing", store=store_url)
    assert plain.returncode == 1 and plain.stdout == "" and "t-nothing not found" in plain.stderr


def test_bds_envelope_wraps_every_answer_when_asked(store_url: str) -> None:
    made = bd("create", "x", "--json", store=store_url, env={gojson.ENVELOPE_ENV: "1"}).json
    assert list(made) == ["data", "schema_version"] and "schema_version" not in made["data"]
    listed = bd("list", "--json", store=store_url, env={gojson.ENVELOPE_ENV: "1"}).json
    assert list(listed) == ["data", "schema_version"] and isinstance(listed["data"], list)
    failed = bd("show", "nope", "--json", store=store_url, env={gojson.ENVELOPE_ENV: "1"})
    assert json.loads(failed.stdout) == {
        "data": {"error": "no issues found matching the provided IDs"},
        "schema_version": 1,
    }


# -- Go's encoding/json -------------------------------------------------------------------------------------------


def test_strings_are_escaped_as_go_escapes_them() -> None:
    text = gojson.dumps(["<a> & b", "line\u2028para\u2029", "tab\tnew\nbell\x07", "lone \ud800 surrogate", "é ✓ 🐝"])
    assert text == (
        "[\n"
        '  "\\u003ca\\u003e \\u0026 b",\n'
        '  "line\\u2028para\\u2029",\n'
        '  "tab\\tnew\\nbell\\u0007",\n'
        '  "lone \ufffd surrogate",\n'
        '  "é ✓ 🐝"\n'
        "]\n"
    )
    text.encode("utf-8")  # a lone surrogate never reaches the output stream


def test_numbers_are_written_as_go_writes_float64_and_int() -> None:
    assert gojson.dumps([0.0, 1.0, 1.5, 12345678.9, 1e-7, 1e21, 123456789012345678901, -2.5e-8, 0.000001]) == (
        "[\n  0,\n  1,\n  1.5,\n  12345678.9,\n  1e-07,\n  1e+21,\n  123456789012345678901,\n  -2.5e-08,\n"
        "  0.000001\n]\n"
    )


def test_empty_and_nested_values_are_indented_as_go_indents_them() -> None:
    assert gojson.dumps({"a": [], "b": {}, "c": [{"d": None, "e": True}]}) == (
        '{\n  "a": [],\n  "b": {},\n  "c": [\n    {\n      "d": null,\n      "e": true\n    }\n  ]\n}\n'
    )


def test_an_object_answer_is_sorted_at_every_depth_with_schema_version() -> None:
    answer = json.loads(gojson.answer({"z": 1, "a": {"y": 2, "b": [{"k": 1, "c": 2}]}}))
    assert list(answer) == ["a", "schema_version", "z"] and list(answer["a"]) == ["b", "y"]
    assert list(answer["a"]["b"][0]) == ["c", "k"]
    listed = json.loads(gojson.answer([{"z": 1, "a": 2}]))
    assert list(listed[0]) == ["z", "a"]  # a list passes through: its structs keep their field order


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(codec=None, blacklist_categories=()), max_size=12)
    | st.sampled_from(["<a href='x'>&amp;</a>", "\u2028\u2029", "\ud800", "\x00\x1f\x7f", "é ✓ 🐝"])
)
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
)


@given(_VALUES)
def test_the_fast_encoder_writes_what_the_go_encoder_here_writes(value: Any) -> None:
    # orjson writes answers without floats (every bd ready); this module's encoder, Go's rules written out, the rest.
    assert gojson.dumps(value) == gojson.slow_dumps(value)


def test_an_answer_with_a_float_or_a_lone_surrogate_takes_the_go_encoder() -> None:
    assert gojson.dumps({"a": [1.0]}) == '{\n  "a": [\n    1\n  ]\n}\n'
    assert gojson.dumps({"a": ["\ud800", 2**65]}) == '{\n  "a": [\n    "\ufffd",\n    36893488147419103232\n  ]\n}\n'
