import pytest

from bee_contracts import BeeError, ErrorCode
from bee_hostkit.validation import SchemaValidator

SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
        "mode": {"type": "string", "enum": ["a", "b"]},
    },
    "required": ["text"],
    "additionalProperties": False,
}


def message(arguments):
    with pytest.raises(BeeError) as info:
        SchemaValidator("demo", SCHEMA).validate(arguments)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    return info.value.message


def test_defaults_are_filled():
    assert SchemaValidator("demo", SCHEMA).validate({"text": "x"}) == {"text": "x", "limit": 5}


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "missing required argument 'text'"),
        ({"text": "x", "extra": 1}, "unknown argument 'extra'; allowed: limit, mode, text"),
        ({"text": 3}, "argument text must be of type string"),
        ({"text": "x", "limit": 0}, "argument limit is 0, outside the allowed range 1–20"),
        ({"text": "x", "mode": "c"}, "argument mode is 'c'; use one of a, b"),
        ({"text": ""}, "argument text has length 0; minLength is 1"),
    ],
)
def test_messages_say_what_to_change(arguments, expected):
    assert expected in message(arguments)
