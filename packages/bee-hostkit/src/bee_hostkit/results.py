"""Tool results: structuredContent plus a text copy, measured exactly, guarded at the result limit.

A success carries ``structuredContent`` and its compact JSON copy as text content. A failure carries the error
envelope as JSON text only, with no ``structuredContent``: clients built on the TypeScript SDK validate
structuredContent against the tool's (success) outputSchema even when ``isError`` is true, and would show a schema
complaint instead of Bee's message.

The size a budget or the 256 KiB guard measures is the result object itself — ``content`` (the text copy),
``structuredContent`` and ``isError`` — serialized as compact UTF-8 JSON. The protocol envelope around it
(``jsonrpc``, ``id``, ``_meta``, ``resultType``) is not counted; the frame limit covers that.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson

from bee_contracts import BeeError, ErrorCode
from bee_contracts.limits import MAX_RESULT_BYTES

_FIXED_OVERHEAD = len('{"content":[{"type":"text","text":""}],"structuredContent":,"isError":false}')


def compact_bytes(value: Any) -> bytes:
    """Compact JSON as UTF-8 bytes, non-ASCII unescaped: the one serialization results use (same bytes as the SDK's)."""
    try:
        return orjson.dumps(value)
    except TypeError:  # integers beyond 64 bits: the standard library writes the same text, only slower
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def compact(value: Any) -> str:
    """:func:`compact_bytes` as text."""
    return compact_bytes(value).decode("utf-8")


def escaped_bytes(text: str) -> int:
    """Bytes ``text`` takes inside a JSON string literal, without the quotes."""
    return len(orjson.dumps(text)) - 2


def piece_bytes(value: Any) -> int:
    """Bytes one JSON value adds to a result: once in structuredContent, once escaped in the text copy.

    Because escaping is character by character, the size of a result is exactly the fixed overhead plus the
    piece size of its structured content, and a list grows by ``piece_bytes(item) + 2`` per item after the first
    (one comma in each copy).
    """
    data = compact_bytes(value)
    return len(data) + escaped_bytes(data.decode("utf-8"))


def result_bytes(structured: Mapping[str, Any]) -> int:
    """Exact serialized size of the successful result carrying ``structured``."""
    return _FIXED_OVERHEAD + piece_bytes(structured)


def render(structured: Mapping[str, Any]) -> dict[str, Any]:
    """The wire form of a successful tool result: the text copy first, then the structured content."""
    return {
        "content": [{"type": "text", "text": compact(structured)}],
        "structuredContent": structured,
        "isError": False,
    }


def render_error(failure: BeeError) -> dict[str, Any]:
    """The wire form of a failed tool result: the error envelope as JSON text, and no structuredContent."""
    return {"content": [{"type": "text", "text": compact(failure.body())}], "isError": True}


def guard(structured: Mapping[str, Any], limit: int = MAX_RESULT_BYTES) -> int:
    """Return the result's size, or raise when it exceeds ``limit``.

    Raises:
        BeeError: ``result_too_large``; nothing partial is delivered.
    """
    size = result_bytes(structured)
    if size > limit:
        raise BeeError(
            ErrorCode.RESULT_TOO_LARGE,
            f"the complete result is {size} bytes, over the {limit}-byte result limit; nothing partial was "
            "delivered. Ask for less (a narrower selection, a smaller page).",
            details={"resultBytes": size, "limitBytes": limit},
        )
    return size
