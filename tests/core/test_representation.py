"""bee-json-v1 in process: round trips, tables, variants, token counts and every bad packet."""

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import BeeError, ErrorCode
from bee_core.representation.codec import Encoded, decode_packet, encode_packet
from bee_core.representation.format import checksum
from bee_core.representation.tokens import count_tokens
from tests.core._json import canonical

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "json"
BIG = 10**7


def roundtrip(text: str, variant: str = "auto") -> Encoded:
    encoded = encode_packet(text, variant, "o200k")
    decoded = decode_packet(encoded.packet, BIG)
    assert canonical(decoded) == canonical(text), encoded.packet
    return encoded


def body(packet: str) -> str:
    return packet.split("\n", 1)[1]


def repack(text_body: str, expanded: int | None = None) -> str:
    """A packet around ``text_body`` with a valid check (what a careful forger would write)."""
    size = expanded if expanded is not None else 0
    return f"bee-json-v1 {size} {checksum(text_body)}\n{text_body}"


@pytest.mark.parametrize(
    "text",
    [
        "1.0",
        "1e3",
        "-0",
        "1.50",
        "1E+03",
        "-0.0e-0",
        "123456789012345678901234567890",
        "[1.0,1e3,-0,1.50,1E+03,123456789012345678901234567890,0.1e-7]",
        '{"a":1.0,"b":"1.0","c":[true,"true",null,"null",""]}',
    ],
)
@pytest.mark.parametrize("variant", ["auto", "columnar", "compact", "json"])
def test_number_spellings_and_look_alike_strings_survive(text: str, variant: str) -> None:
    decoded = decode_packet(roundtrip(text, variant).packet, BIG)
    assert canonical(decoded) == canonical(text)


def test_header_declares_the_minified_size_and_checks_the_body() -> None:
    encoded = encode_packet('{"a": [1, 2, 3]}', "auto", "o200k")
    head, text = encoded.packet.split("\n", 1)
    assert head == f"bee-json-v1 {len(encoded.minified)} {hashlib.sha256(text.encode()).hexdigest()[:8]}"
    assert encoded.minified == '{"a":[1,2,3]}'


def test_uniform_array_of_objects_becomes_a_table_with_dotted_and_hoisted_columns() -> None:
    rows = [
        {"id": 1, "user": {"name": "ann", "role": "admin"}, "kind": "member"},
        {"id": 2, "user": {"name": "bob", "role": "dev"}, "kind": "member"},
        {"id": 3, "user": {"name": "cy"}, "kind": "member"},
    ]
    encoded = roundtrip(json.dumps(rows), "columnar")
    assert body(encoded.packet) == "[@id,user.name,user.role,kind=member\n1,ann,admin\n2,bob,dev\n3,cy,]"


def test_object_of_objects_becomes_a_keyed_table() -> None:
    value = {"node_modules/a": {"version": "1.0.0", "dev": True}, "node_modules/b": {"version": "2.1.0", "dev": True}}
    encoded = roundtrip(json.dumps(value), "columnar")
    assert body(encoded.packet) == "{@version,dev=true\nnode_modules/a,1.0.0\nnode_modules/b,2.1.0}"


def test_absent_null_and_empty_cells_stay_distinct() -> None:
    rows = [{"a": None, "b": ""}, {"b": "x"}, {"a": 1, "b": []}, {}]
    encoded = roundtrip(json.dumps(rows), "columnar")
    assert "\n" in body(encoded.packet)  # it really is a table


def test_keys_that_need_quotes_in_column_paths() -> None:
    rows = [{"a.b": {"c=d": 1, "": 2}, "@x": "y", "k": {"": {}}}, {"a.b": {"c=d": 3}, "@x": "z", "k": {"": {}}}]
    roundtrip(json.dumps(rows), "columnar")


def test_nested_tables_and_tables_as_constants() -> None:
    inner = [{"x": 1, "y": 2}, {"x": 3, "y": 4}]
    rows = [{"name": "a", "points": inner, "same": inner}, {"name": "b", "points": inner[::-1], "same": inner}]
    roundtrip(json.dumps(rows), "columnar")
    roundtrip(json.dumps({"outer": rows, "deep": [[rows]]}), "auto")


def test_unicode_and_escapes_survive() -> None:
    value = ["é", "日本語", "😀", "a\u2028b", "\u0085", "tab\there", 'quote"', "back\\slash", " lead", "trail "]
    roundtrip(json.dumps(value, ensure_ascii=False))
    roundtrip(json.dumps(value, ensure_ascii=True))
    roundtrip('["\\ud800", {"\\udfff": "x"}]')  # lone surrogates, written escaped


def test_duplicate_keys_keep_the_last_value_like_every_json_parser() -> None:
    encoded = roundtrip('{"a": 1, "a": 2}')
    assert encoded.minified == '{"a":2}'


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.json")))
def test_real_documents_round_trip_and_are_never_more_tokens_than_minified(name: str) -> None:
    text = (FIXTURES / name).read_text()
    encoded = roundtrip(text)
    assert count_tokens(encoded.packet) <= count_tokens(encoded.minified)
    assert count_tokens(body(encoded.packet), "cl100k") <= count_tokens(encoded.minified, "cl100k")
    for variant in ("columnar", "compact", "json"):
        roundtrip(text, variant)


def test_auto_falls_back_to_minified_json_when_nothing_is_shorter() -> None:
    text = '["1","true","null",""," x"]'
    encoded = encode_packet(text, "auto", "o200k")
    assert count_tokens(body(encoded.packet)) <= count_tokens(encoded.minified)
    assert body(encode_packet(text, "json", "o200k").packet) == text


def test_token_counts_use_the_bundled_encodings() -> None:
    assert count_tokens("hello world", "o200k") == 2
    assert count_tokens("hello world", "cl100k") == 2
    assert count_tokens("", "o200k") == 0
    assert count_tokens("<|endoftext|>", "o200k") > 1  # special-token text counts as ordinary text


def fail(call: Callable[..., object], *args: Any) -> BeeError:
    with pytest.raises(BeeError) as info:
        call(*args)
    return info.value


@pytest.mark.parametrize(
    "text",
    ["", "{", "not json", '{"a":1} extra', "[NaN]", "Infinity", "{'a': 1}", "[1,]", "[" * 100000 + "]" * 100000],
)
def test_non_json_is_invalid_argument(text: str) -> None:
    error = fail(encode_packet, text, "auto", "o200k")
    assert error.code is ErrorCode.INVALID_ARGUMENT


def test_nesting_deeper_than_the_limit_is_refused() -> None:
    error = fail(encode_packet, "[" * 300 + "]" * 300, "auto", "o200k")
    assert error.code is ErrorCode.INVALID_ARGUMENT and "256" in error.message
    roundtrip("[" * 200 + "]" * 200)


def test_packet_of_another_version_is_unsupported() -> None:
    error = fail(decode_packet, "bee-json-v2 2 abcdef01\n[]", BIG)
    assert error.code is ErrorCode.UNSUPPORTED and "bee-json-v2" in error.message


@pytest.mark.parametrize("packet", ["[1,2]", "bee-json-v1", "bee-json-v1 x y\n1", "BEE-JSON-V1 1 00000000\n1", "\n1"])
def test_text_that_is_not_a_packet_is_invalid_argument(packet: str) -> None:
    assert fail(decode_packet, packet, BIG).code is ErrorCode.INVALID_ARGUMENT


def test_truncated_packet_is_hash_mismatch() -> None:
    packet = encode_packet((FIXTURES / "tz-zones.json").read_text(), "auto", "o200k").packet
    error = fail(decode_packet, packet[: len(packet) // 2], BIG)
    assert error.code is ErrorCode.HASH_MISMATCH and "truncated or altered" in error.message


def test_tampered_packet_is_hash_mismatch() -> None:
    packet = encode_packet('[{"a":1,"b":2},{"a":3,"b":4}]', "columnar", "o200k").packet
    assert fail(decode_packet, packet.replace("3", "9"), BIG).code is ErrorCode.HASH_MISMATCH


def test_a_packet_claiming_a_huge_expansion_is_refused_before_expanding() -> None:
    error = fail(decode_packet, repack("[]", expanded=10**15), 65536)
    assert error.code is ErrorCode.BUDGET_EXCEEDED and "nothing was expanded" in error.message


def test_a_crafted_bomb_with_a_lying_header_stops_at_the_declared_size() -> None:
    constant = "x" * 1000
    bomb = "[@a=" + constant + "\n" + "\n" * 50000 + "]"  # 51 KB that would expand to 50 MB
    error = fail(decode_packet, repack(bomb, expanded=100), BIG)
    assert error.code is ErrorCode.INVALID_ARGUMENT and "past its declared" in error.message
    # Even an honest-looking declaration cannot beat the call's bound.
    assert fail(decode_packet, repack(bomb, expanded=50_000_000), 262144).code is ErrorCode.BUDGET_EXCEEDED


def test_declared_size_that_disagrees_with_the_body_is_refused() -> None:
    packet = repack("[1,2,3]", expanded=3)
    assert "expands past" in fail(decode_packet, packet, BIG).message
    assert "but expands to 7" in fail(decode_packet, repack("[1,2,3]", expanded=9), BIG).message


@pytest.mark.parametrize(
    ("text_body", "where"),
    [
        ("{a:1", "expected"),
        ("[1 ,2]", "must be quoted"),
        ("[@a\n1]x", "after the value"),
        ("[@a,a\n1,2]", "column twice"),
        ("[@a,a.b\n1,2]", "parent of another column"),
        ("[@a,b\n1]", "expected ','"),
        ("[@a]", "at least one row"),
        ("{@a\nk}", "expected ','"),
        ('["\\x"]', "bad quoted string"),
        ("[@x\n]", ""),
        ('{"a"1}', "expected ':'"),
        ("{:1}", "bad key"),
        ("[a\tb]", "must be quoted"),
        ("[" * 300 + "]" * 300, "deeper"),
        ("1 ", "must be quoted"),
        ("", "expected a value"),
    ],
)
def test_malformed_bodies_are_invalid_argument_saying_where(text_body: str, where: str) -> None:
    if text_body == "[@x\n]":  # one row with one absent cell: valid, decodes to [{}]
        assert decode_packet(repack(text_body, expanded=4), BIG) == "[{}]"
        return
    error = fail(decode_packet, repack(text_body, expanded=1000), BIG)
    assert error.code is ErrorCode.INVALID_ARGUMENT, error.message
    assert where in error.message and "offset" in error.message


def test_the_specification_example_is_what_the_encoder_writes() -> None:
    spec = (Path(__file__).resolve().parents[2] / "docs" / "representation.md").read_text()
    blocks = re.findall(r"```(?:json)?\n(.*?)```", spec, re.DOTALL)
    source, packet = blocks[0], blocks[1].rstrip("\n")
    encoded = encode_packet(source, "auto", "o200k")
    assert encoded.packet == packet
    assert count_tokens(packet) == 54 and count_tokens(encoded.minified) == 73
