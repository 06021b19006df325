"""The artifact query language and bee_artifact_query in process: semantics, paging, budgets and bad queries."""

import json
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import BeeError, ErrorCode
from bee_contracts.shapes.core import ArtifactQueryResult
from bee_core.artifacts.query import parse_query
from bee_core.artifacts.records import ArtifactRecord
from bee_core.context import CoreContext
from bee_core.handlers.artifact_query import bee_artifact_query
from bee_hostkit import Call, Deadline
from bee_hostkit.results import result_bytes
from tests.core.artifacts_helpers import add, blob, initialised, tamper

ROWS = [
    {"name": "a", "status": "failed", "seconds": 2.5, "tags": ["slow", "db"], "meta": {"retries": 2}},
    {"name": "b", "status": "passed", "seconds": 0.1, "tags": [], "meta": {"retries": 0}},
    {"name": "c", "status": "failed", "seconds": 7, "tags": ["flaky"], "owner": None},
    {"name": "d", "status": "skipped", "tags": ["db"], "meta": {"retries": 1}},
    {"name": "e", "status": "passed", "seconds": True, "count": 1},
    {"name": "f.g", "status": "passed", "seconds": 2.5, "note": "Timeout after 30s"},
]


@pytest.fixture
def ctx(tmp_path: Path) -> CoreContext:
    return initialised(tmp_path)


@pytest.fixture
def table(ctx: CoreContext) -> ArtifactRecord:
    return add(ctx, "results.json", json.dumps(ROWS).encode())


def query(
    ctx: CoreContext, artifact: str, q: str | dict[str, Any], *, budget: int = 262144, deadline: Deadline | None = None
) -> ArtifactQueryResult:
    text = q if isinstance(q, str) else json.dumps(q)
    return bee_artifact_query(
        ctx,
        Call(
            "bee_artifact_query", {"id": artifact, "queryJson": text, "budgetBytes": budget}, deadline or Deadline(30)
        ),
    )


def names(result: ArtifactQueryResult) -> list[Any]:
    return [row["value"]["name"] for row in result["rows"]]


def fail(ctx: CoreContext, artifact: str, q: str | dict[str, Any], **kwargs: Any) -> BeeError:
    with pytest.raises(BeeError) as info:
        query(ctx, artifact, q, **kwargs)
    return info.value


def where(test: object) -> dict[str, Any]:
    return {"where": test}


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ({"path": "status", "op": "eq", "value": "failed"}, ["a", "c"]),
        ({"path": "status", "op": "ne", "value": "passed"}, ["a", "c", "d"]),
        ({"path": "seconds", "op": "eq", "value": 7.0}, ["c"]),
        ({"path": "seconds", "op": "eq", "value": 1}, []),  # true is not 1
        ({"path": "count", "op": "eq", "value": True}, []),  # and 1 is not true
        ({"path": "seconds", "op": "gt", "value": 1}, ["a", "c", "f.g"]),
        ({"path": "seconds", "op": "lte", "value": 2.5}, ["a", "b", "f.g"]),
        ({"path": "name", "op": "lt", "value": "c"}, ["a", "b"]),
        ({"path": "name", "op": "gte", "value": 5}, []),  # strings never compare with numbers
        ({"path": "status", "op": "in", "value": ["skipped", "failed"]}, ["a", "c", "d"]),
        ({"path": "status", "op": "nin", "value": ["passed"]}, ["a", "c", "d"]),
        ({"path": "tags", "op": "contains", "value": "db"}, ["a", "d"]),
        ({"path": "note", "op": "contains", "value": "after"}, ["f.g"]),
        ({"path": "name", "op": "startsWith", "value": "f."}, ["f.g"]),
        ({"path": "note", "op": "endsWith", "value": "30s"}, ["f.g"]),
        ({"path": "owner", "op": "exists"}, ["c"]),
        ({"path": "meta", "op": "exists", "value": False}, ["c", "e", "f.g"]),
        ({"path": "owner", "op": "eq", "value": None}, ["c"]),
        ({"path": "meta.retries", "op": "gte", "value": 1}, ["a", "d"]),
        ({"path": "tags.0", "op": "eq", "value": "db"}, ["d"]),
        ({"path": ["tags", 1], "op": "eq", "value": "db"}, ["a"]),
        ({"path": "tags", "op": "eq", "value": ["slow", "db"]}, ["a"]),
        ({"path": "meta", "op": "eq", "value": {"retries": 0}}, ["b"]),
        ({"path": "missing.deeper", "op": "ne", "value": 1}, ["a", "b", "c", "d", "e", "f.g"]),
        ({"path": "missing", "op": "lt", "value": 1}, []),
        (
            {
                "and": [
                    {"path": "status", "op": "eq", "value": "failed"},
                    {"not": {"path": "tags", "op": "contains", "value": "flaky"}},
                ]
            },
            ["a"],
        ),
        ({"or": [{"path": "name", "op": "eq", "value": "b"}, {"path": "count", "op": "exists"}]}, ["b", "e"]),
    ],
)
def test_operators(ctx: CoreContext, table: ArtifactRecord, condition: dict[str, Any], expected: list[str]) -> None:
    result = query(ctx, table.id, where(condition))
    assert names(result) == expected
    assert result["matchedRows"] == len(expected) and result["totalRows"] == len(ROWS)


def test_array_form_paths_reach_keys_with_dots(ctx: CoreContext, table: ArtifactRecord) -> None:
    result = query(ctx, table.id, {"where": {"path": ["name"], "op": "eq", "value": "f.g"}, "select": [["name"]]})
    assert result["rows"] == [{"index": 5, "value": {"name": "f.g"}}]


def test_select_projects_and_leaves_missing_fields_out(ctx: CoreContext, table: ArtifactRecord) -> None:
    result = query(ctx, table.id, {"select": ["name", {"path": "meta.retries", "as": "retries"}], "limit": 3})
    assert [row["value"] for row in result["rows"]] == [
        {"name": "a", "retries": 2},
        {"name": "b", "retries": 0},
        {"name": "c"},
    ]
    assert [row["index"] for row in result["rows"]] == [0, 1, 2]


def test_order_by_several_keys_with_mixed_types(ctx: CoreContext, table: ArtifactRecord) -> None:
    result = query(ctx, table.id, {"orderBy": ["seconds", {"path": "name", "direction": "desc"}], "select": ["name"]})
    # missing first, then true, then numbers ascending; ties by name descending
    assert names(result) == ["d", "e", "b", "f.g", "a", "c"]
    down = query(ctx, table.id, {"orderBy": [{"path": "seconds", "direction": "desc"}], "select": ["name"]})
    assert names(down) == ["c", "a", "f.g", "b", "e", "d"]  # stable: a before f.g as in the artifact


def test_paging_and_counts(ctx: CoreContext, table: ArtifactRecord) -> None:
    first = query(ctx, table.id, {"limit": 4})
    assert (first["returned"], first["nextOffset"], first["matchedRows"]) == (4, 4, 6)
    rest = query(ctx, table.id, {"limit": 4, "offset": 4})
    assert names(rest) == ["e", "f.g"] and rest["nextOffset"] is None
    assert rest["resultBytes"] == result_bytes(rest)


def test_jsonl_rows_carry_line_numbers(ctx: CoreContext) -> None:
    record = add(ctx, "events.jsonl", b'{"n": 1}\n\n{"n": 2, "big": 123456789012345678901234567890}\n{"n": 3}\n')
    result = query(ctx, record.id, {"where": {"path": "n", "op": "gte", "value": 2}})
    assert result["kind"] == "jsonl" and result["totalRows"] == 3
    assert result["rows"] == [
        {"index": 1, "lineNumber": 3, "value": {"n": 2, "big": 123456789012345678901234567890}},
        {"index": 2, "lineNumber": 4, "value": {"n": 3}},
    ]


def test_from_names_the_rows_of_a_nested_array(ctx: CoreContext) -> None:
    record = add(ctx, "report.json", json.dumps({"summary": {"total": 2}, "tests": ROWS[:2]}).encode())
    assert names(query(ctx, record.id, {"from": "tests"})) == ["a", "b"]
    error = fail(ctx, record.id, {})
    assert error.code is ErrorCode.INVALID_ARGUMENT and '"from": "items"' in error.message and "tests" in error.message
    assert "is a dict, not an array" in fail(ctx, record.id, {"from": "summary"}).message
    assert "is missing" in fail(ctx, record.id, {"from": "nope"}).message


def test_query_against_text_or_binary_is_unsupported(ctx: CoreContext) -> None:
    for data in (b"just a log line\n", b"\x00\x01\x02"):
        record = add(ctx, "x", data)
        error = fail(ctx, record.id, {})
        assert error.code is ErrorCode.UNSUPPORTED and "bee_artifact_search" in error.message


def test_from_on_jsonl_is_refused(ctx: CoreContext) -> None:
    record = add(ctx, "e.jsonl", b"{}\n{}\n")
    assert "from applies to json" in fail(ctx, record.id, {"from": "x"}).message


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{oops", "not valid JSON"),
        ("[]", "must be of type object"),
        ({"where": {"path": "a", "op": "regex", "value": "x"}}, "where.op is 'regex'; use one of eq, ne"),
        ({"where": {"match": "x"}}, "unknown field 'match'"),
        ({"where": {"path": "a"}}, "needs an op"),
        ({"where": {"path": "a", "op": "eq"}}, "needs a value for op eq"),
        ({"where": {"path": "a", "op": "in", "value": 1}}, "must be an array for op in"),
        ({"where": {"path": "a", "op": "lt", "value": [1]}}, "number or a string for op lt"),
        ({"where": {"path": "a", "op": "startsWith", "value": 1}}, "must be a string for op startsWith"),
        ({"where": {"path": "a", "op": "exists", "value": "yes"}}, "true or false"),
        (
            {"where": {"and": [{"path": "a", "op": "exists"}], "or": [{"path": "a", "op": "exists"}]}},
            "exactly one form",
        ),
        ({"where": {"path": "a", "op": "eq", "value": 1, "not": {"path": "a", "op": "exists"}}}, "exactly one form"),
        ({"where": {"and": []}}, "where.and has 0 items; minItems is 1"),
        ({"where": {"path": "a..b", "op": "eq", "value": 1}}, "empty segment"),
        ({"select": [5]}, "must be a path"),
        ({"select": ["a", {"path": "b", "as": "a"}]}, "repeats the output name 'a'"),
        ({"orderBy": [{"path": "a", "direction": "up"}]}, "use one of asc, desc"),
        ({"limit": 0}, "outside the allowed range 1–1000"),
        ({"sql": "select *"}, "unknown field 'sql'"),
        ('{"where":' + '{"not":' * 80 + "{}" + "}" * 80 + "}", "nests deeper than 64"),
        ("[" * 60_000, "queryJson nests too deeply to read"),
        ('{"limit": 1.0}', "field limit must be an integer, got 1.0"),
        ('{"limit": ' + "9" * 5000 + "}", "field limit is 999999999999… (5000 characters), a number too large"),
        ('{"where": {"path": "a", "op": "eq", "value": 1e400}}', "field where.value is 1e400, a number too large"),
    ],
)
def test_bad_queries_say_what_to_change(
    ctx: CoreContext, table: ArtifactRecord, bad: str | dict[str, Any], message: str
) -> None:
    error = fail(ctx, table.id, bad)
    assert error.code is ErrorCode.INVALID_ARGUMENT
    assert message in error.message, error.message


def test_integers_past_2_to_the_53_are_data_here_not_refused(ctx: CoreContext) -> None:
    # Query values are compared exactly with the rows' numbers, which keep every digit.
    record = add(ctx, "ids.json", json.dumps([{"id": 2**64 + 1}, {"id": 2**64}]).encode())
    result = query(ctx, record.id, where({"path": "id", "op": "eq", "value": 2**64 + 1}))
    assert [row["index"] for row in result["rows"]] == [0]


def test_query_over_64_kib_is_refused(ctx: CoreContext, table: ArtifactRecord) -> None:
    big = json.dumps({"where": {"path": "name", "op": "in", "value": ["x" * 100] * 700}})
    assert len(big.encode()) > 65536
    error = fail(ctx, table.id, big)
    assert error.code is ErrorCode.INVALID_ARGUMENT and "65536-byte limit" in error.message
    # The limit is in bytes of UTF-8, not characters.
    wide = json.dumps({"where": {"path": "name", "op": "in", "value": ["ü" * 100] * 400}}, ensure_ascii=False)
    assert len(wide) < 65536 < len(wide.encode())
    assert "65536-byte limit" in fail(ctx, table.id, wide).message
    parse_query(json.dumps({"where": {"path": "name", "op": "in", "value": ["x" * 100] * 600}}))


def test_budget_exceeded_names_a_limit_that_fits(ctx: CoreContext, table: ArtifactRecord) -> None:
    error = fail(ctx, table.id, {}, budget=1024)
    assert error.code is ErrorCode.BUDGET_EXCEEDED and "Lower limit in queryJson to" in error.message
    fits = int(error.message.split("Lower limit in queryJson to ")[1].split()[0])
    assert query(ctx, table.id, {"limit": fits}, budget=1024)["resultBytes"] <= 1024


def test_unknown_artifact_and_tampering(ctx: CoreContext, table: ArtifactRecord) -> None:
    assert fail(ctx, "art-0000000000000000", {}).code is ErrorCode.NOT_FOUND
    query(ctx, table.id, {})  # parsed rows cached now
    tamper(blob(ctx, table), json.dumps(ROWS[:1]).encode())
    assert fail(ctx, table.id, {}).code is ErrorCode.HASH_MISMATCH


def test_deadline(ctx: CoreContext, table: ArtifactRecord) -> None:
    assert fail(ctx, table.id, {}, deadline=Deadline(0)).code is ErrorCode.DEADLINE_EXCEEDED
