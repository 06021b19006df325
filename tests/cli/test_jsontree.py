"""bee_cli.jsontree: accepts exactly the JSON the standard library accepts (no NaN, no repeated key), keeps every
number's spelling, knows where each value is written, reads JSONC's comments and trailing commas, and fails in one
pass on hostile input."""

import json
import random
from collections.abc import Iterator
from typing import Any, NoReturn

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bee_cli.jsontree import MAX_DEPTH, Entry, JsonSyntaxError, Node, parse, plain
from bee_contracts.jsonvalues import Lexeme, write_json

_keys = st.text(max_size=6)
_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _keys
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4))
_layouts = st.sampled_from(
    [
        {},
        {"indent": 2},
        {"indent": "\t"},
        {"separators": (",", ":")},
        {"indent": 1, "ensure_ascii": False},
        {"ensure_ascii": False},
    ]
)


def _refuse(name: str) -> NoReturn:
    raise ValueError(name)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({key for key, _ in pairs}) != len(pairs):
        raise ValueError("duplicate")
    return dict(pairs)


def stdlib(text: str) -> Any:
    """What the standard library makes of ``text`` with numbers as spellings, NaN refused and keys unique."""
    return json.loads(
        text, parse_int=Lexeme, parse_float=Lexeme, parse_constant=_refuse, object_pairs_hook=_no_duplicates
    )


def spans(node: Node, text: str, found: list[str]) -> list[str]:
    found.append(text[node.start : node.end])
    for entry in node.entries:
        if entry.key is not None:
            assert json.JSONDecoder().raw_decode(text, entry.start)[0] == entry.key
        if entry.comma is not None:
            assert text[entry.comma] == ","
        spans(entry.value, text, found)
    return found


@settings(max_examples=300)
@given(value=_values, layout=_layouts)
def test_valid_json_gives_the_standard_librarys_values_and_spans_that_parse_alone(
    value: Any, layout: dict[str, Any]
) -> None:
    text = json.dumps(value, **layout)
    node = parse(text, jsonc=False)
    assert node is not None and (node.start, node.end) == (0, len(text))
    assert write_json(plain(node, text)) == write_json(stdlib(text))
    for piece in spans(node, text, []):  # every value's span is one JSON value by itself
        assert (tree := parse(piece, jsonc=False)) is not None
        assert write_json(stdlib(piece)) == write_json(plain(tree, piece))


@settings(max_examples=500)
@given(
    value=_values,
    layout=_layouts,
    edits=st.lists(
        st.tuples(st.integers(min_value=0), st.sampled_from(["", ",", ":", "{", "}", "[", "]", '"', "\\", "1", "-"])),
        min_size=1,
        max_size=3,
    ),
    replace=st.booleans(),
)
def test_broken_json_is_refused_exactly_when_the_standard_library_refuses_it(
    value: Any, layout: dict[str, Any], edits: list[tuple[int, str]], replace: bool
) -> None:
    text = json.dumps(value, **layout)
    for offset, piece in edits:
        at = offset % (len(text) + 1)
        text = text[:at] + piece + text[at + (1 if replace else 0) :]
    try:
        expected = write_json(stdlib(text))
    except ValueError:
        expected = None
    where = None
    try:
        node = parse(text, jsonc=False)
        got = None if node is None else write_json(plain(node, text))
    except JsonSyntaxError as exc:
        got, where = None, (exc.line, exc.column)
    assert got == expected, text
    assert where is None or min(where) >= 1


@pytest.mark.parametrize(
    "number", ["1e400", "1E2", "0.10000000000000000555", "-0", "1.50", "123456789012345678901234567890", "-0.0e-0"]
)
def test_numbers_keep_their_spelling(number: str) -> None:
    text = f'{{"n": {number}}}'
    assert (tree := parse(text, jsonc=False)) is not None
    assert plain(tree, text) == {"n": Lexeme(number)}


@settings(max_examples=300)
@given(
    value=_values,
    layout=_layouts,
    comments=st.lists(st.sampled_from(["// a line\n", "/* a block */", "/* two\nlines */", "/**/", "//\n"])),
    seed=st.randoms(use_true_random=False),
)
def test_jsonc_comments_and_trailing_commas_are_read_as_nothing(
    value: Any, layout: dict[str, Any], comments: list[str], seed: random.Random
) -> None:
    text = json.dumps(value, **layout)
    node = parse(text, jsonc=False)
    assert node is not None
    # Comments go where whitespace may, a trailing comma after the last entry of any object or array.
    gaps = [0, len(text)] + [entry.value.end for entry in _entries(node)]
    for comment in comments:
        at = seed.choice(gaps)
        text = text[:at] + comment + text[at:]
        gaps = [g + len(comment) if g > at else g for g in gaps]
    commented = parse(text, jsonc=True)
    assert commented is not None

    text = _trailing_commas(text, commented, seed)

    assert (tree := parse(text, jsonc=True)) is not None
    assert write_json(plain(tree, text)) == write_json(stdlib(json.dumps(value)))


def _entries(node: Node) -> Iterator[Entry]:
    for entry in node.entries:
        yield entry
        yield from _entries(entry.value)


def _trailing_commas(text: str, node: Node, seed: random.Random) -> str:
    ends = sorted((entry.value.end for entry in _last_entries(node) if seed.random() < 0.5), reverse=True)
    for at in ends:
        text = text[:at] + "," + text[at:]
    return text


def _last_entries(node: Node) -> Iterator[Entry]:
    if node.entries:
        yield node.entries[-1]
    for entry in node.entries:
        yield from _last_entries(entry.value)


@pytest.mark.parametrize(
    ("text", "jsonc", "problem", "line", "column"),
    [
        ('{"a": 1, "a": 2}', False, "the key 'a' appears twice in one object; remove one", 1, 10),
        ('{"a": NaN}', False, "NaN is not JSON", 1, 7),
        ('{"a": -Infinity}', False, "-Infinity is not JSON", 1, 7),
        ('{"a": 1,}', False, "a comma before '}' (JSON allows no trailing comma)", 1, 9),
        ('{\n  // x\n  "a": 1}', False, "a comment (this file is strict JSON, which has none)", 2, 3),
        ('{"a": 1} /* open', True, "a /* comment is never closed", 1, 10),
        ('{"a": "tab\there"}', False, "a string holds a control character", 1, 11),
        ('{"a": "\\x"}', False, "a string has an escape JSON does not define", 1, 8),
        ('{"a": "open', False, "a string is never closed", 1, 7),
        ('{"a": 1} 2', False, "more text after the JSON value", 1, 10),
        ('{"a" 1}', False, "a ':' was expected after the key", 1, 6),
        ('{"a": 01}', False, "a ',' or '}' was expected here", 1, 8),
        ('{"a": }', False, "a value was expected here", 1, 7),
        ('{"a": ', False, "the text ends where a value should be", 1, 7),
    ],
)
def test_what_is_wrong_is_said_with_its_line_and_column(
    text: str, jsonc: bool, problem: str, line: int, column: int
) -> None:
    with pytest.raises(JsonSyntaxError) as raised:
        parse(text, jsonc=jsonc)
    assert raised.value.problem.startswith(problem)
    assert (raised.value.line, raised.value.column) == (line, column)


def test_nesting_is_bounded_and_whitespace_alone_is_no_value() -> None:
    assert parse(" \n\t", jsonc=False) is None
    assert parse("// nothing\n/* here */", jsonc=True) is None
    fine = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse(fine, jsonc=False) is not None
    with pytest.raises(JsonSyntaxError, match=f"nest more than {MAX_DEPTH} deep"):
        parse("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), jsonc=False)


@pytest.mark.timeout(60)  # a give-up guard: each of these is one linear pass; a backtracking scan takes hours
@pytest.mark.parametrize(
    ("text", "jsonc"),
    [
        ('{"a": "' + "x" * (1 << 20), False),  # a string never closed
        ('{"a": "' + "\\\\" * (1 << 19) + "\\q", False),  # escapes, then a bad one
        ('{"a": 1} /*' + " * /" * (1 << 18), True),  # a comment never closed
        ("[" + "1," * (1 << 16), False),  # an array never closed
        ('{"a": 1' + " " * (1 << 20) + "x", False),  # spaces, then junk
    ],
)
def test_hostile_input_fails_in_one_pass(text: str, jsonc: bool) -> None:
    with pytest.raises(JsonSyntaxError):
        parse(text, jsonc=jsonc)
