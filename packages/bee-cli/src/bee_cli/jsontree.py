"""A JSON (or JSON-with-comments) text parsed into a tree that remembers where everything in it is written.

Editing an editor's file should change the values Bee sets and nothing else. The tree gives the span of every
value, where each object entry's key starts and where the comma after it is, so :mod:`bee_cli.jsonedit` can splice
new text in and leave every other character as it was: whitespace, comments, trailing commas, and the spelling of
every number and string (``1e400``, ``1E2``, ``0.10000000000000000555`` and ``"\\u00e9"`` stay exactly that).

Strict JSON is RFC 8259. JSONC (VS Code's JSON with comments) adds ``//`` and ``/* */`` comments and trailing
commas. Either way a key repeated in one object is refused (editors disagree about which one counts, so an edit
could change the wrong one), as are ``NaN`` and ``Infinity`` (not JSON) and nesting deeper than :data:`MAX_DEPTH`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from bee_contracts.jsonvalues import NUMBER_AT, Lexeme

#: How deeply objects and arrays may nest (the parser recurses once per level).
MAX_DEPTH = 256

Kind = Literal["object", "array", "scalar"]

_GAP = re.compile(r"[ \t\n\r]*+")
# Comments are whitespace in JSONC. A /* that is never closed stops the gap at itself, and is reported there.
_JSONC_GAP = re.compile(r"(?:[ \t\n\r]++|//[^\n]*+|/\*.*?\*/)*+", re.DOTALL)
# Possessive throughout, so a string that is never closed costs one pass, not a backtracking search.
_STRING_BODY = r'"(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+'
_STRING = re.compile(_STRING_BODY + '"')
_STRING_START = re.compile(_STRING_BODY)
_LITERALS = {"true": True, "false": False, "null": None}
_NOT_JSON = ("NaN", "-Infinity", "Infinity")


class JsonSyntaxError(ValueError):
    """The text is not one JSON value (JSONC value): what is wrong and where (1-based line and column)."""

    def __init__(self, problem: str, text: str, index: int) -> None:
        super().__init__(problem)
        self.problem = problem
        self.index = index
        self.line, self.column = position(text, index)


def position(text: str, index: int) -> tuple[int, int]:
    """The 1-based line and column of ``index`` in ``text``."""
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1


@dataclass(eq=False, slots=True)
class Node:
    """A value: its kind and its span ``[start, end)``; an object's or array's entries in order."""

    kind: Kind
    start: int
    end: int = -1
    entries: list[Entry] = field(default_factory=list)

    def index(self, key: str | int) -> int | None:
        """Where the entry ``key`` (an object's key, an array's position) is in :attr:`entries`, if it is there."""
        if isinstance(key, int):
            return key if self.kind == "array" and 0 <= key < len(self.entries) else None
        if self.kind != "object":
            return None
        return next((at for at, entry in enumerate(self.entries) if entry.key == key), None)


@dataclass(eq=False, slots=True)
class Entry:
    """One member of an object (``key`` set) or item of an array."""

    key: str | None
    #: Where the entry begins: its key's opening quote, or (in an array) its value.
    start: int
    value: Node
    #: Where the comma after the value is, when there is one.
    comma: int | None = None


def parse(text: str, *, jsonc: bool) -> Node | None:
    """The tree of the one JSON value in ``text`` (None when the text is only whitespace and comments).

    Raises:
        JsonSyntaxError: the text is not exactly one JSON value (JSONC value with ``jsonc``), repeats a key in an
            object, or nests deeper than :data:`MAX_DEPTH`.
    """
    parser = _Parser(text, jsonc)
    at = parser.gap(0)
    if at == len(text):
        return None
    node = parser.value(at, 0)
    after = parser.gap(node.end)
    if after != len(text):
        raise JsonSyntaxError("more text after the JSON value", text, after)
    return node


def plain(node: Node, text: str) -> Any:
    """The value ``node`` stands for: dicts in key order, lists, and numbers as their exact spellings
    (:class:`~bee_contracts.jsonvalues.Lexeme`)."""
    if node.kind == "scalar":
        return _scalar(text[node.start : node.end])
    if node.kind == "object":
        return {entry.key: plain(entry.value, text) for entry in node.entries}
    return [plain(entry.value, text) for entry in node.entries]


def _scalar(token: str) -> Any:
    """The value of a token the parser has already checked: a string, a number (its spelling) or a literal."""
    if token[0] == '"':
        # Most strings have no escape, and slicing them is many times cheaper than decoding them.
        return token[1:-1] if "\\" not in token else json.loads(token)
    if token in _LITERALS:
        return _LITERALS[token]
    return Lexeme(token)


class _Parser:
    def __init__(self, text: str, jsonc: bool) -> None:
        self.text = text
        self.jsonc = jsonc
        self._gap = _JSONC_GAP if jsonc else _GAP

    def fail(self, problem: str, at: int) -> JsonSyntaxError:
        return JsonSyntaxError(problem, self.text, at)

    def gap(self, at: int) -> int:
        at = self._gap.match(self.text, at).end()  # type: ignore[union-attr]  # a pattern of * always matches
        if self.jsonc and self.text.startswith("/*", at):
            raise self.fail("a /* comment is never closed", at)
        return at

    def value(self, at: int, depth: int) -> Node:
        text = self.text
        first = text[at : at + 1]
        if first in ("{", "["):
            return self.container(at, depth)
        if first == '"':
            return Node("scalar", at, self.string_end(at))
        number = NUMBER_AT.match(text, at) if first and first in "-0123456789" else None
        if number is not None:
            return Node("scalar", at, number.end())
        for word in _LITERALS:
            if text.startswith(word, at):
                return Node("scalar", at, at + len(word))
        for word in _NOT_JSON:
            if text.startswith(word, at):
                raise self.fail(f"{word} is not JSON (it has no NaN or Infinity)", at)
        if not first:
            raise self.fail("the text ends where a value should be", at)
        raise self.fail(self._strict_comment(at) or "a value was expected here", at)

    def string_end(self, at: int) -> int:
        found = _STRING.match(self.text, at)
        if found is not None:
            return found.end()
        stop = _STRING_START.match(self.text, at).end()  # type: ignore[union-attr]  # it starts with the quote
        if stop == len(self.text):
            raise self.fail("a string is never closed", at)
        if self.text[stop] == "\\":
            raise self.fail("a string has an escape JSON does not define", stop)
        raise self.fail("a string holds a control character (a raw tab or line break); write it as an escape", stop)

    def container(self, at: int, depth: int) -> Node:
        text = self.text
        if depth >= MAX_DEPTH:
            raise self.fail(f"objects and arrays nest more than {MAX_DEPTH} deep", at)
        is_object = text[at] == "{"
        close = "}" if is_object else "]"
        node = Node("object" if is_object else "array", at)
        seen: set[str] = set()
        at = self.gap(at + 1)
        if text.startswith(close, at):
            node.end = at + 1
            return node
        while True:
            start = at
            key = None
            if is_object:
                if not text.startswith('"', at):
                    raise self.fail(self._expected_key(at), at)
                key_end = self.string_end(at)
                key = _scalar(text[at:key_end])
                if key in seen:
                    raise self.fail(f"the key {key!r} appears twice in one object; remove one", at)
                seen.add(key)
                at = self.gap(key_end)
                if not text.startswith(":", at):
                    raise self.fail("a ':' was expected after the key", at)
                at = self.gap(at + 1)
            value = self.value(at, depth + 1)
            entry = Entry(key, start, value)
            node.entries.append(entry)
            at = self.gap(value.end)
            if text.startswith(",", at):
                entry.comma = at
                at = self.gap(at + 1)
                if text.startswith(close, at):
                    if not self.jsonc:
                        raise self.fail(f"a comma before '{close}' (JSON allows no trailing comma)", at)
                    node.end = at + 1
                    return node
                continue
            if text.startswith(close, at):
                node.end = at + 1
                return node
            raise self.fail(self._strict_comment(at) or f"a ',' or '{close}' was expected here", at)

    def _expected_key(self, at: int) -> str:
        return self._strict_comment(at) or "a key in double quotes was expected here"

    def _strict_comment(self, at: int) -> str | None:
        if not self.jsonc and self.text.startswith(("//", "/*"), at):
            return "a comment (this file is strict JSON, which has none)"
        return None
