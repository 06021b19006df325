"""JSON values with exact number spellings: parse a JSON text, write it back minified under a byte bound.

Shared by the core host's JSON representation (bee-json-v1) and by `bee setup-mcp`, which edits editors' files
without changing how any of their numbers is written.

Numbers are kept as :class:`Lexeme` (the exact text of the number in the source), so ``1.0``, ``1e3``, ``-0``,
``1.50`` and 30-digit integers survive a round trip. Objects are dicts (duplicate keys: the last one wins, as in
every mainstream JSON parser), arrays are lists, strings are str (lone surrogates included), and ``true``,
``false``, ``null`` are ``True``, ``False`` and ``None``.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: The JSON number grammar (RFC 8259), matched at a position (``NUMBER_AT.match(text, index)``).
NUMBER_AT = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
#: The JSON number grammar, whole-string.
NUMBER = re.compile(NUMBER_AT.pattern + r"\Z")

_SURROGATE = re.compile("[\ud800-\udfff]")


class Lexeme(str):
    """A JSON number, as the exact text it was written with."""

    __slots__ = ()


class NotJson(ValueError):
    """The text is not one JSON value."""


class TooLarge(ValueError):
    """Writing the value would exceed the byte bound; nothing partial is kept."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the JSON text would exceed {limit} bytes")
        self.limit = limit


def _no_constants(name: str) -> Any:
    raise NotJson(f"{name} is not JSON (RFC 8259 has no NaN or Infinity)")


def parse_json(text: str) -> Any:
    """Parse one JSON value, keeping every number's exact spelling.

    Raises:
        NotJson: the text is not exactly one JSON value (NaN and Infinity are refused).
    """
    try:
        return json.loads(text, parse_int=Lexeme, parse_float=Lexeme, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise NotJson(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise NotJson("not accepted: the JSON nests too deeply") from None


def quote(text: str) -> str:
    """``text`` as a JSON string literal: non-ASCII kept, control characters and lone surrogates escaped."""
    quoted = json.dumps(text, ensure_ascii=False)
    if _SURROGATE.search(quoted):
        # A lone surrogate cannot be written as UTF-8: spell it as an escape, which JSON allows.
        quoted = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
    return quoted


class _Writer:
    """Appends pieces while counting UTF-8 bytes; stops as soon as the bound is passed."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.pieces: list[str] = []

    def put(self, piece: str) -> None:
        self.size += len(piece) if piece.isascii() else len(piece.encode("utf-8", "surrogatepass"))
        if self.size > self.limit:
            raise TooLarge(self.limit)
        self.pieces.append(piece)

    def value(self, value: Any) -> None:
        if isinstance(value, str):
            self.put(value if isinstance(value, Lexeme) else quote(value))
        elif value is None:
            self.put("null")
        elif value is True:
            self.put("true")
        elif value is False:
            self.put("false")
        elif isinstance(value, dict):
            self.put("{")
            first = True
            for key, item in value.items():
                self.put(quote(key) + ":" if first else "," + quote(key) + ":")
                first = False
                self.value(item)
            self.put("}")
        elif isinstance(value, list):
            self.put("[")
            for index, item in enumerate(value):
                if index:
                    self.put(",")
                self.value(item)
            self.put("]")
        else:
            raise TypeError(f"not a JSON value: {type(value).__name__}")


def write_json(value: Any, limit: int = 1 << 62) -> str:
    """Minified JSON text of ``value`` with every number written as its lexeme.

    Raises:
        TooLarge: the text would exceed ``limit`` UTF-8 bytes (checked while writing, so a value whose shared
            parts expand enormously is refused early, never clipped).
    """
    writer = _Writer(limit)
    writer.value(value)
    return "".join(writer.pieces)
