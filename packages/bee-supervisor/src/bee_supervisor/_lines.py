"""Where a key sits in a TOML text, so that a message about a bad value can name its line.

:mod:`tomllib` reports positions only for syntax errors; a document that parses carries none. This reads the text
once more, line by line, and records the line of every table header and ``key =`` it sees, by dotted path. It is a
locator for messages, not a parser: a key it cannot place (inside an inline table, say) falls back to the line of
the nearest enclosing key or table it did see.
"""

from __future__ import annotations

import re

_BARE = r"[A-Za-z0-9_-]+"
_QUOTED = r'"(?:[^"\\]|\\.)*"|\'[^\']*\''
_KEY = rf"(?:{_BARE}|{_QUOTED})"
_DOTTED = rf"{_KEY}(?:\s*\.\s*{_KEY})*"
_HEADER = re.compile(rf"^\s*\[\[?\s*({_DOTTED})\s*\]\]?")
_ASSIGN = re.compile(rf"^\s*({_DOTTED})\s*=")
_PART = re.compile(_KEY)


def _parts(dotted: str) -> tuple[str, ...]:
    return tuple(part.strip("\"'") for part in _PART.findall(dotted))


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The 1-based line of each table header and assignment in ``text``, keyed by its full dotted path."""
    found: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = _parts(header.group(1))
            found.setdefault(table, number)
            continue
        assign = _ASSIGN.match(line)
        if assign:
            found.setdefault((*table, *_parts(assign.group(1))), number)
    return found


def line_of(lines: dict[tuple[str, ...], int], path: tuple[str, ...]) -> int | None:
    """The line of ``path``, else of its nearest enclosing key or table that was seen; None for none.

    A table never written as a header of its own (``[services.job]`` makes ``services`` implicit) is placed at the
    first line that mentions it.
    """
    for end in range(len(path), 0, -1):
        prefix = path[:end]
        if prefix in lines:
            return lines[prefix]
        inside = [line for key, line in lines.items() if key[:end] == prefix]
        if inside:
            return min(inside)
    return None
