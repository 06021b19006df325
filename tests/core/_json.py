"""Test helper: a canonical form of JSON text that keeps number spellings and ignores key order."""

from typing import Any

from bee_contracts.jsonvalues import parse_json, write_json


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def canonical(text: str) -> str:
    """Sorted keys, minified, every number as its exact lexeme (so 1 and "1" and 1.0 all differ)."""
    return write_json(_sorted(parse_json(text)))
