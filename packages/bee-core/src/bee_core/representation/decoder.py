"""Decode a bee-json-v1 body back into JSON values, with the expansion bounded before and while it happens.

The parser is a strict recursive descent over the grammar in docs/representation.md: no insignificant
whitespace, every bare token checked against the same rules the encoder writes by. Tables reuse their hoisted
constants by reference, so building the value costs no more than the packet; the bound is enforced on the work
each table row implies and again, exactly, while the minified JSON is written.
"""

from __future__ import annotations

from json.decoder import scanstring  # type: ignore[attr-defined]  # public since 2.6, missing from typeshed
from typing import Any

from bee_contracts.jsonvalues import NUMBER, Lexeme, TooLarge, write_json
from bee_core.representation.encoder import MAX_DEPTH
from bee_core.representation.format import TABLE, bare_key, bare_segment, bare_value

_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}
#: Characters that end a bare token in value position (a bare value never contains them).
_VALUE_END = frozenset(",}]\n")
_SEGMENT_END = frozenset(".,=\n]}")

Path = tuple[str, ...]


class Malformed(ValueError):
    """The body does not follow the bee-json-v1 grammar; the message says where."""


class _Parser:
    def __init__(self, text: str, limit: int) -> None:
        self.text = text
        self.pos = 0
        self.limit = limit
        self.work = 0  # a lower bound on the bytes the decoded value writes, raised as rows are built

    def fail(self, what: str) -> Malformed:
        return Malformed(f"{what} at offset {self.pos} of the body")

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            found = repr(self.peek()) if self.peek() else "the end"
            raise self.fail(f"expected {char!r}, found {found}")
        self.pos += 1

    def charge(self, units: int) -> None:
        self.work += units
        if self.work > self.limit:
            raise TooLarge(self.limit)

    def string(self) -> str:
        try:
            value, end = scanstring(self.text, self.pos + 1, True)  # strict: no raw control characters
        except ValueError as exc:
            raise self.fail(f"bad quoted string ({exc.args[0].split(':')[0]})") from None
        self.pos = end
        return str(value)

    def run(self, stops: frozenset[str]) -> str:
        start = self.pos
        text = self.text
        while self.pos < len(text) and text[self.pos] not in stops:
            self.pos += 1
        return text[start : self.pos]

    def value(self, depth: int) -> Any:
        char = self.peek()
        if char == '"':
            return self.string()
        if char in ("[", "{"):
            if depth >= MAX_DEPTH:
                raise self.fail(f"nesting deeper than {MAX_DEPTH} levels")
            table = self.text.startswith(TABLE, self.pos + 1)
            if char == "[":
                return self.table(depth + 1, keyed=False) if table else self.array(depth + 1)
            return self.table(depth + 1, keyed=True) if table else self.object(depth + 1)
        start = self.pos
        token = self.run(_VALUE_END)
        if not token:
            raise self.fail("expected a value")
        if token in _LITERALS:
            return _LITERALS[token]
        if NUMBER.match(token):
            return Lexeme(token)
        if not bare_value(token):
            self.pos = start
            raise self.fail(f"{token[:40]!r} must be quoted")
        return token

    def key(self, stops: frozenset[str]) -> str:
        if self.peek() == '"':
            return self.string()
        start = self.pos
        token = self.run(stops)
        if not bare_key(token):
            self.pos = start
            raise self.fail(f"bad key {token[:40]!r}")
        return token

    def object(self, depth: int) -> dict[str, Any]:
        self.pos += 1
        result: dict[str, Any] = {}
        if self.peek() == "}":
            self.pos += 1
            return result
        while True:
            name = self.key(frozenset(":,}\n"))
            self.expect(":")
            result[name] = self.value(depth)
            self.charge(1)
            if self.peek() == "}":
                self.pos += 1
                return result
            self.expect(",")

    def array(self, depth: int) -> list[Any]:
        self.pos += 1
        result: list[Any] = []
        if self.peek() == "]":
            self.pos += 1
            return result
        while True:
            result.append(self.value(depth))
            self.charge(1)
            if self.peek() == "]":
                self.pos += 1
                return result
            self.expect(",")

    def path(self) -> Path:
        segments: list[str] = []
        while True:
            if self.peek() == '"':
                segments.append(self.string())
            else:
                start = self.pos
                segment = self.run(_SEGMENT_END)
                if not bare_segment(segment):
                    self.pos = start
                    raise self.fail(f"bad column name {segment[:40]!r}")
                segments.append(segment)
            if self.peek() != ".":
                return tuple(segments)
            self.pos += 1

    def table(self, depth: int, *, keyed: bool) -> Any:
        close = "}" if keyed else "]"
        self.pos += 2
        columns: list[tuple[Path, bool, Any]] = []  # (path, constant?, constant value)
        while self.peek() not in {"\n", close, ""}:
            if columns:
                self.expect(",")
            path = self.path()
            if self.peek() == "=":
                self.pos += 1
                columns.append((path, True, self.value(depth + len(path))))
            else:
                columns.append((path, False, None))
        _check_columns([c[0] for c in columns], self)
        varying = [path for path, constant, _ in columns if not constant]
        constants = [(path, value) for path, constant, value in columns if constant]
        rows: list[dict[str, Any]] = []
        keys: list[str] = []
        while self.peek() == "\n":
            self.pos += 1
            if keyed:
                keys.append(self.key(frozenset(",\n}")))
            cells: dict[Path, Any] = {}
            for index, path in enumerate(varying):
                if index or keyed:
                    self.expect(",")
                if self.peek() in _VALUE_END or not self.peek():
                    continue  # an empty cell: the key is absent in this row
                cells[path] = self.value(depth + len(path))
            # Every hoisted constant is written once per row: at least 4 bytes each ("":0 and a separator).
            self.charge(1 + 4 * len(constants))
            rows.append(_row(columns, cells))
        if not rows:
            raise self.fail("a table needs at least one row")
        self.expect(close)
        if keyed:
            return dict(zip(keys, rows, strict=True))
        return rows


def _check_columns(paths: list[Path], parser: _Parser) -> None:
    seen = set(paths)
    if len(seen) != len(paths):
        raise parser.fail("a table names a column twice")
    for path in paths:
        for cut in range(1, len(path)):
            if path[:cut] in seen:
                raise parser.fail(f"column {'.'.join(path[:cut])!r} is also the parent of another column")


def _row(columns: list[tuple[Path, bool, Any]], cells: dict[Path, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for path, constant, fixed in columns:
        if constant:
            value = fixed
        elif path in cells:
            value = cells[path]
        else:
            continue  # absent in this row
        node = row
        for segment in path[:-1]:
            node = node.setdefault(segment, {})
        node[path[-1]] = value
    return row


def decode_body(body: str, limit: int) -> Any:
    """The JSON value a body stands for.

    Raises:
        Malformed: the body does not follow the grammar (the message says where).
        TooLarge: decoding would write more than ``limit`` bytes of JSON.
    """
    parser = _Parser(body, limit)
    value = parser.value(0)
    if parser.pos != len(body):
        raise parser.fail("unexpected text after the value")
    return value


def expand(body: str, limit: int) -> str:
    """The minified JSON text a body stands for, refused past ``limit`` UTF-8 bytes (never clipped).

    Raises:
        Malformed: see :func:`decode_body`.
        TooLarge: the JSON would exceed ``limit`` bytes.
    """
    return write_json(decode_body(body, limit), limit)
