"""Encode JSON values as a bee-json-v1 body: bare strings where safe, columnar tables where they are shorter.

Variants (the ``encoding`` argument):

- ``auto`` (default): every array of objects and every object of objects is written both as a table and plainly,
  and the one with fewer tokens is kept; if the whole body is still more tokens than minified JSON, the body is
  the minified JSON itself (which is a valid body).
- ``columnar``: every array of objects and object of objects becomes a table, whatever it costs.
- ``compact``: no tables; JSON shapes with unquoted keys and strings where safe.
- ``json``: the body is the minified JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from bee_contracts.jsonvalues import Lexeme, quote, write_json
from bee_core.representation.format import TABLE, bare_key, bare_segment, bare_value

VARIANTS: Final = ("auto", "columnar", "compact", "json")

#: Deepest nesting of arrays and objects accepted (and written), so recursion never meets Python's limit.
MAX_DEPTH: Final = 256

Path = tuple[str, ...]


class TooDeep(ValueError):
    """The value nests deeper than :data:`MAX_DEPTH`."""


def key_text(key: str) -> str:
    return key if bare_key(key) else quote(key)


def path_text(path: Path) -> str:
    return ".".join(segment if bare_segment(segment) else quote(segment) for segment in path)


class Encoder:
    """One encoding run: memoises each node's text so that choosing between forms never re-encodes a subtree."""

    def __init__(self, variant: str, count: Callable[[str], int]) -> None:
        self.variant = variant
        self.count = count
        self._memo: dict[int, str] = {}

    def value(self, value: Any, depth: int = 0) -> str:
        if isinstance(value, str):
            if isinstance(value, Lexeme):
                return str.__str__(value)
            return value if bare_value(value) else quote(value)
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        if depth >= MAX_DEPTH:
            raise TooDeep(f"the JSON nests deeper than {MAX_DEPTH} levels")
        known = self._memo.get(id(value))
        if known is not None:
            return known
        if isinstance(value, dict):
            text = self._object(value, depth + 1)
        elif isinstance(value, list):
            text = self._array(value, depth + 1)
        else:
            raise TypeError(f"not a JSON value: {type(value).__name__}")
        self._memo[id(value)] = text
        return text

    def _plain_object(self, value: dict[str, Any], depth: int) -> str:
        return "{" + ",".join(key_text(k) + ":" + self.value(v, depth) for k, v in value.items()) + "}"

    def _object(self, value: dict[str, Any], depth: int) -> str:
        plain = self._plain_object(value, depth)
        rows = list(value.values())
        if self.variant in {"auto", "columnar"} and len(rows) >= 2 and all(isinstance(r, dict) and r for r in rows):
            table = self._table(rows, depth, keys=list(value))
            return self._choose(plain, table)
        return plain

    def _array(self, value: list[Any], depth: int) -> str:
        plain = "[" + ",".join(self.value(item, depth) for item in value) + "]"
        tabular = len(value) >= 2 and all(isinstance(r, dict) for r in value)
        # An array of empty objects has no columns: the plain form is shortest.
        if self.variant in {"auto", "columnar"} and tabular and any(value):
            return self._choose(plain, self._table(value, depth, keys=None))
        return plain

    def _choose(self, plain: str, table: str) -> str:
        if self.variant == "columnar":
            return table
        return table if self.count(table) < self.count(plain) else plain

    def _table(self, rows: list[dict[str, Any]], depth: int, keys: list[str] | None) -> str:
        """Rows as a table: dotted columns for nested objects, constant columns hoisted into the header."""
        columns = _columns(rows, ())
        cells: list[list[str | None]] = []
        for row in rows:
            cells.append([self._cell(row, path, depth) for path in columns])
        entries: list[str] = []
        varying: list[int] = []
        for index, path in enumerate(columns):
            column = [row[index] for row in cells]
            first = column[0]
            if len(rows) >= 2 and first is not None and all(cell == first for cell in column):
                entries.append(path_text(path) + "=" + first)
            else:
                entries.append(path_text(path))
                varying.append(index)
        lines = [("[" if keys is None else "{") + TABLE + ",".join(entries)]
        for position, row_cells in enumerate(cells):
            line = ",".join(row_cells[index] or "" for index in varying)
            if keys is not None:
                line = key_text(keys[position]) + ("," + line if varying else "")
            lines.append(line)
        return "\n".join(lines) + ("]" if keys is None else "}")

    def _cell(self, row: dict[str, Any], path: Path, depth: int) -> str | None:
        node: Any = row
        for segment in path:
            if not isinstance(node, dict) or segment not in node:
                return None
            node = node[segment]
        return self.value(node, depth + len(path))


def _columns(rows: list[dict[str, Any]], prefix: Path) -> list[Path]:
    """Column paths in first-seen order; a key whose value is a non-empty object in every row is flattened."""
    order: dict[str, None] = {}
    for row in rows:
        for key in row:
            order.setdefault(key, None)
    columns: list[Path] = []
    for key in order:
        values = [row.get(key) for row in rows]
        if all(isinstance(v, dict) and v for v in values) and all(key in row for row in rows):
            columns.extend(_columns(values, (*prefix, key)))  # type: ignore[arg-type]  # all dicts, checked above
        else:
            columns.append((*prefix, key))
    return columns


def check_depth(value: Any) -> None:
    """Refuse a value nested deeper than :data:`MAX_DEPTH` (iteratively, so any depth is measured safely).

    Raises:
        TooDeep: with the limit in the message.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth >= MAX_DEPTH:
            raise TooDeep(f"the JSON nests deeper than {MAX_DEPTH} levels")
        stack.extend((child, depth + 1) for child in children)


def encode_body(value: Any, variant: str, count: Callable[[str], int]) -> str:
    """The body of a packet for ``value``.

    Raises:
        TooDeep: the value nests deeper than :data:`MAX_DEPTH`.
        ValueError: ``variant`` is not one of :data:`VARIANTS`.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown encoding {variant!r}; use one of {', '.join(VARIANTS)}")
    check_depth(value)
    minified = write_json(value)
    if variant == "json":
        return minified
    body = Encoder(variant, count).value(value)
    if variant == "auto" and count(body) > count(minified):
        return minified
    return body
