from typing import Any

import pytest

from bee_contracts import BeeError, ErrorCode
from bee_hostkit.validation import (
    MAX_DEPTH,
    MAX_SAFE_INTEGER,
    OversizedNumber,
    SchemaValidator,
    parse_json_argument,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "count": {"type": "integer"},
        "data": {},
    },
    "required": ["text"],
    "additionalProperties": False,
}


def message(arguments: dict[str, Any]) -> str:
    with pytest.raises(BeeError) as info:
        SchemaValidator("demo", SCHEMA).validate(arguments)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    return info.value.message


def test_defaults_are_filled() -> None:
    assert SchemaValidator("demo", SCHEMA).validate({"text": "x"}) == {"text": "x", "limit": 5}


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "missing required argument 'text'"),
        ({"text": "x", "extra": 1}, "unknown argument 'extra'; allowed: count, data, limit, mode, text"),
        ({"text": 3}, "argument text must be of type string"),
        ({"text": "x", "limit": 0}, "argument limit is 0, outside the allowed range 1–20"),
        ({"text": "x", "mode": "c"}, "argument mode is 'c'; use one of a, b"),
        ({"text": ""}, "argument text has length 0; minLength is 1"),
    ],
)
def test_messages_say_what_to_change(arguments: dict[str, Any], expected: str) -> None:
    assert expected in message(arguments)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "argument count must be an integer, got 1.0"),
        (True, "argument count must be an integer, got True"),
        (MAX_SAFE_INTEGER + 1, "argument count is 9007199254740992, outside ±9007199254740991 (2**53 - 1)"),
        (-(2**60), "argument count is -1152921504606846976, outside ±9007199254740991"),
        (float(2**60), "argument count is 1.152921504606847e+18, outside ±9007199254740991"),
        (OversizedNumber("9" * 5000), "argument count is 999999999999… (5000 characters), a number too large"),
        # An integer past Python's digit limit for repr, as an HTTP or in-process caller can hand over.
        pytest.param(10**5000 - 1, "argument count is an integer of about 500", id="huge"),
        (float("inf"), "argument count is inf, not a finite number"),
        (float("nan"), "argument count is nan, not a finite number"),
    ],
)
def test_integers_are_real_integers_that_every_reader_holds_exactly(value: object, expected: str) -> None:
    assert expected in message({"text": "x", "count": value})


def test_the_safe_range_is_inclusive_and_can_be_lifted_for_data() -> None:
    assert SchemaValidator("demo", SCHEMA).validate({"text": "x", "count": -MAX_SAFE_INTEGER})["count"] < 0
    lifted = SchemaValidator("demo", SCHEMA, safe_integers=False)
    assert lifted.validate({"text": "x", "data": [2**80]})["data"] == [2**80]
    with pytest.raises(BeeError, match="too large to hold"):
        lifted.validate({"text": "x", "data": [OversizedNumber("1e400")]})


def test_numbers_are_checked_wherever_they_nest_and_named_by_their_path() -> None:
    refused = message({"text": "x", "data": {"a": [0, {"b": 2**64}]}})
    assert "argument data.a.1.b is 18446744073709551616, outside" in refused


def test_nesting_past_the_limit_is_refused_before_the_schema_walks_it() -> None:
    deep: object = 1
    for _ in range(MAX_DEPTH * 100):
        deep = [deep]
    assert f"nests deeper than {MAX_DEPTH} levels" in message({"text": "x", "data": deep})


def test_parse_json_argument_turns_every_parser_failure_into_invalid_argument() -> None:
    def failure(text: str) -> str:
        with pytest.raises(BeeError) as info:
            parse_json_argument("someJson", text, hint="pass an object")
        assert info.value.code is ErrorCode.INVALID_ARGUMENT
        return info.value.message

    assert failure("{oops") == (
        "someJson is not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2); "
        "pass an object"
    )
    assert "someJson nests too deeply to read" in failure("[" * 100_000)
    assert "someJson is not valid JSON (NaN is not JSON)" in failure("[NaN]")
    assert "Infinity is not JSON" in failure('{"a": -Infinity}')


def test_parse_json_argument_keeps_unholdable_numbers_for_validation_to_name() -> None:
    value = parse_json_argument("someJson", '{"n": ' + "9" * 5000 + "}")
    assert isinstance(value["n"], OversizedNumber) and value["n"].text == "9" * 5000
    assert isinstance(parse_json_argument("someJson", "[1e400]")[0], OversizedNumber)
    assert parse_json_argument("someJson", "[1, 1.5, 12345678901234567890]") == [1, 1.5, 12345678901234567890]
