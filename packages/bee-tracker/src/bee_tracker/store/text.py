"""Text the store cannot hold: NUL characters (PostgreSQL text refuses them), unpaired surrogates (not encodable
as UTF-8 by either database), and JSON nested deeper than any Beads record is."""

from __future__ import annotations

from typing import Any

#: Deepest nesting of arrays and objects accepted in an imported record (Beads writes four levels at most).
MAX_DEPTH = 32


def _string_problem(text: str) -> str | None:
    if "\x00" in text:
        return "a NUL character (U+0000)"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "an unpaired surrogate (a lone \\ud800-\\udfff escape)"
    return None


def unstorable(value: Any) -> str | None:
    """What in ``value`` (a JSON value: strings, keys, nested lists and objects) the store cannot keep, or None."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, str):
            problem = _string_problem(current)
            if problem:
                return problem
        elif isinstance(current, dict | list):
            if depth >= MAX_DEPTH:
                return f"arrays or objects nested more than {MAX_DEPTH} deep"
            items = current.items() if isinstance(current, dict) else enumerate(current)
            for key, item in items:
                if isinstance(key, str):
                    stack.append((key, depth))
                stack.append((item, depth + 1))
    return None
