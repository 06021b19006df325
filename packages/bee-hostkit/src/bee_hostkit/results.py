"""Tool results: structuredContent plus a text copy, measured exactly, guarded at the result limit.

A success carries ``structuredContent`` and its compact JSON copy as text content, in both protocol eras: both
specifications (2025-11-25 and 2026-07-28) ask a tool that returns structured content to return the serialized
JSON as text too; clients built on the TypeScript SDK refuse a result without structuredContent when the tool
declares an outputSchema; and hosts hand the model the text content, not the structured copy (the MCP Apps
guidance keeps structuredContent out of the model's context). No era lets one copy go without losing a client.
A failure carries the error envelope as JSON text only, with no ``structuredContent``: clients built on the
TypeScript SDK validate structuredContent against the tool's (success) outputSchema even when ``isError`` is true,
and would show a schema complaint instead of Bee's message.

The size a budget or the 256 KiB guard measures is the result object itself — ``content`` (the text copy),
``structuredContent`` and ``isError`` — serialized as compact UTF-8 JSON. The protocol envelope around it
(``jsonrpc``, ``id``, ``_meta``, ``resultType``) is not counted; the frame limit covers that. :func:`render`
serializes the structured content once: those bytes are the text copy and the count; the stdio transport writes
responses with the same serializer, so the count is the size on the wire.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from bee_contracts import BeeError, ErrorCode, wire
from bee_contracts.limits import MAX_RESULT_BYTES

_FIXED_OVERHEAD = len('{"content":[{"type":"text","text":""}],"structuredContent":,"isError":false}')


def compact_bytes(value: Any) -> bytes:
    """Compact JSON as UTF-8 bytes, non-ASCII unescaped: the one serialization results use (same bytes as the SDK's)."""
    try:
        return orjson.dumps(value)
    except TypeError:  # integers beyond 64 bits, or a lone surrogate: the standard library writes it, only slower
        return wire.compact(value)


def compact(value: Any) -> str:
    """:func:`compact_bytes` as text."""
    return compact_bytes(value).decode("utf-8")


def _copy_bytes(data: bytes) -> int:
    """Bytes compact JSON ``data`` takes again as the text copy: escaped inside a JSON string, without the quotes.

    Compact JSON (orjson's, or the standard library's with ``ensure_ascii=False``) holds no raw control character
    (every one is escaped inside its string) and no whitespace, so escaping it once more only doubles each quote
    and each backslash: the count needs no second serialization.
    """
    return len(data) + data.count(b'"') + data.count(b"\\")


def piece_bytes(value: Any) -> int:
    """Bytes one JSON value adds to a result: once in structuredContent, once escaped in the text copy.

    Because escaping is character by character, the size of a result is exactly the fixed overhead plus the
    piece size of its structured content, and a list grows by ``piece_bytes(item) + 2`` per item after the first
    (one comma in each copy). So a container's piece size is the sum of its parts': a value swapped for another
    inside it changes it by exactly the difference of their piece sizes.
    """
    data = compact_bytes(value)
    return len(data) + _copy_bytes(data)


def list_bytes(pieces: Iterable[int]) -> int:
    """Bytes the items of a list add to the result holding it, given each item's :func:`piece_bytes`.

    The items' pieces, and a comma in each copy between two items: what an empty list becomes when they fill it.
    """
    total = count = 0
    for piece in pieces:
        total += piece
        count += 1
    return total + 2 * (count - 1) if count else 0


def result_bytes(structured: Mapping[str, Any]) -> int:
    """Exact serialized size of the successful result carrying ``structured``."""
    return _FIXED_OVERHEAD + piece_bytes(structured)


def render(structured: Mapping[str, Any], limit: int = MAX_RESULT_BYTES) -> dict[str, Any]:
    """The wire form of a successful tool result: the text copy first, then the structured content.

    ``structured`` is serialized once: those bytes are the text copy, and the result's size is counted from them
    (the stdio transport writes the same serialization, so the count is the size on the wire).

    Raises:
        BeeError: ``result_too_large`` when the result exceeds ``limit``; nothing partial is delivered.
    """
    data = compact_bytes(structured)
    size = _FIXED_OVERHEAD + len(data) + _copy_bytes(data)
    if size > limit:
        raise _too_large(size, limit)
    return {
        "content": [{"type": "text", "text": data.decode("utf-8")}],
        "structuredContent": structured,
        "isError": False,
    }


def render_error(failure: BeeError) -> dict[str, Any]:
    """The wire form of a failed tool result: the error envelope as JSON text, and no structuredContent."""
    return {"content": [{"type": "text", "text": compact(failure.body())}], "isError": True}


def _too_large(size: int, limit: int) -> BeeError:
    return BeeError(
        ErrorCode.RESULT_TOO_LARGE,
        f"the complete result is {size} bytes, over the {limit}-byte result limit; nothing partial was "
        "delivered. Ask for less (a narrower selection, a smaller page).",
        details={"resultBytes": size, "limitBytes": limit},
    )
