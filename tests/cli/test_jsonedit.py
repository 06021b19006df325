"""bee_cli.jsonedit: edits splice into the text, follow the file's layout, and are checked before they are used."""

from typing import Any

import pytest

from bee_cli.jsonedit import EditFailed, JsonText
from bee_contracts.jsonvalues import Lexeme


def edited(text: str, *edits: tuple[Any, ...], jsonc: bool = False) -> str:
    document = JsonText(text, jsonc=jsonc)
    for method, *args in edits:
        getattr(document, method)(*args)
    return document.result()


LINED = '{\n    "a": 1, // one\n    "b": [1E2]\n}\n'


@pytest.mark.parametrize(
    ("text", "jsonc", "after"),
    [
        # One entry a line: the new one on the line after the last, at the same indentation, the comment kept.
        (LINED, True, '{\n    "a": 1, // one\n    "b": [1E2],\n    "k": {\n        "x": "y"\n    }\n}\n'),
        ('{\n  "a": 1 // last\n}', True, '{\n  "a": 1, // last\n  "k": {\n    "x": "y"\n  }\n}'),
        # Entries on one line: the new one inline after them.
        ('{"a": 1e400, "b": 2}', False, '{"a": 1e400, "b": 2, "k": {"x": "y"}}'),
        ('{"a":1}', False, '{"a":1, "k": {"x": "y"}}'),
        # Trailing commas (JSONC): the new entry has one too.
        ('{\n  "a": 1,\n}', True, '{\n  "a": 1,\n  "k": {\n    "x": "y"\n  },\n}'),
        # An empty object is laid out like the file: on lines, indented one unit in from its own line.
        ('{\n\t"s": {}\n}', False, '{\n\t"s": {},\n\t"k": {\n\t\t"x": "y"\n\t}\n}'),
        ("{}", False, '{"k": {"x": "y"}}'),
        ("", False, '{\n  "k": {\n    "x": "y"\n  }\n}\n'),
        ("// only a comment\n", True, '// only a comment\n{\n  "k": {\n    "x": "y"\n  }\n}\n'),
        # Windows line endings stay Windows line endings.
        ('{\r\n  "a": 1\r\n}\r\n', False, '{\r\n  "a": 1,\r\n  "k": {\r\n    "x": "y"\r\n  }\r\n}\r\n'),
    ],
)
def test_a_new_entry_follows_the_layout_and_taking_it_out_gives_back_the_bytes(
    text: str, jsonc: bool, after: str
) -> None:
    assert edited(text, ("put", ("k",), {"x": "y"}), jsonc=jsonc) == after
    # A blank file became an empty object, which stays; every other text comes back byte for byte.
    restored = (
        text if text.strip() and not text.startswith("//") else after.replace('\n  "k": {\n    "x": "y"\n  }\n', "")
    )
    assert edited(after, ("delete", ("k",)), jsonc=jsonc) == restored


def test_items_are_appended_and_removed_the_same_way() -> None:
    assert edited("[1,]", ("append", (), "x"), jsonc=True) == '[1, "x",]'
    assert edited("[\n  1\n]", ("append", (), {"a": True})) == '[\n  1,\n  {\n    "a": true\n  }\n]'
    assert edited('[\n  1,\n  {\n    "a": true\n  }\n]', ("delete", (1,))) == "[\n  1\n]"
    assert edited("[1, 2, 3]", ("delete", (1,))) == "[1, 3]"
    assert edited("[1, 2, 3]", ("delete", (0,))) == "[2, 3]"
    assert edited("[1, 2, 3]", ("delete", (2,))) == "[1, 2]"
    assert edited("[ 1 ]", ("delete", (0,))) == "[]"


@pytest.mark.parametrize(
    ("text", "key", "after"),
    [
        (LINED, "a", '{\n    // one\n    "b": [1E2]\n}\n'),
        (LINED, "b", '{\n    "a": 1 // one\n}\n'),
        ('{\n  "a": 1, /* keep */ "b": 2\n}', "b", '{\n  "a": 1 /* keep */\n}'),
        ('{\n  // about a\n  "a": 1\n}', "a", "{\n  // about a\n}"),
        ('{"a": 1, "b": 2, "c": 3}', "b", '{"a": 1, "c": 3}'),
    ],
)
def test_taking_an_entry_out_keeps_every_comment(text: str, key: str, after: str) -> None:
    assert edited(text, ("delete", (key,)), jsonc=True) == after


def test_a_value_is_replaced_where_it_stands_and_an_equal_one_is_not_touched() -> None:
    text = '{"a": {"b": 1.50, "c": "old"}, "z": 0.10000000000000000555}'
    document = JsonText(text, jsonc=False)
    assert not document.put(("a", "b"), Lexeme("1.50"))  # the same number, as spelled
    assert document.put(("a", "b"), "1.50")  # a string is not the number
    assert document.put(("a", "c"), ["n", "e", "w"])
    assert document.result() == '{"a": {"b": "1.50", "c": ["n", "e", "w"]}, "z": 0.10000000000000000555}'
    assert document.changed
    assert not JsonText(text, jsonc=False).changed


def test_lookups_say_what_is_not_there() -> None:
    document = JsonText('{"a": [1, {"b": null}], "s": "text"}', jsonc=False)
    assert document.get(("a", 1, "b")) is None and document.has(("a", 1, "b"))
    for where in [("x",), ("a", 2), ("a", "0"), ("s", 0)]:
        assert not document.has(where)
        with pytest.raises(LookupError):
            document.get(where)
    with pytest.raises(LookupError):
        document.put(("x", "y"), 1)  # no parent
    with pytest.raises(LookupError):
        document.put(("a", 5), 1)  # past the end of an array: append instead
    with pytest.raises(LookupError):
        document.append(("s",), 1)
    assert not document.delete(("a", 1, "c"))


def test_an_edit_that_does_not_give_what_it_should_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    document = JsonText('{"a": 1}', jsonc=False)
    # A splice that lands one character off: the text still parses, but holds other values.
    monkeypatch.setattr(JsonText, "_insert", lambda self, parent, key, value: [(2, 3, "x")])
    document.put(("b",), "two")
    with pytest.raises(EditFailed, match="does not hold the values"):
        document.result()
    # One that breaks the text is refused at once.
    monkeypatch.setattr(JsonText, "_insert", lambda self, parent, key, value: [(7, 8, "")])
    with pytest.raises(EditFailed, match="not JSON"):
        JsonText('{"a": 1}', jsonc=False).put(("b",), "two")
