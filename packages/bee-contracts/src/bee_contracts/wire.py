"""What crosses a process boundary as JSON-RPC, written once: meta keys, error codes, error frames, tool failures.

A host's transport, the tracker's HTTP fast path, the warm front end and the supervisor's checks all say these
things; each imports them from here, so that an answer a front end makes itself is byte for byte the one a host
would make.

Stdlib only, and cheap: the `bee` front end imports this.
"""

from __future__ import annotations

import json

# Annotations only (mypy reads this name as True): the typing module is a megabyte the front end need not load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

#: Where a Bee host stamps its version triple in the ``_meta`` of its handshake and ``tools/list``.
CONTRACT_META_KEY = "dev.bee/contract"
#: The 2026-07-28 era's per-request envelope: its protocol version, and the server's own info in each result.
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

#: JSON-RPC 2.0 error codes Bee answers with itself.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


def compact(value: object) -> bytes:
    """Compact JSON, non-ASCII unescaped: the bytes Bee writes on every wire.

    A string holding a lone surrogate (a client may send ``"\\ud800"``, which JSON allows and UTF-8 cannot carry) is
    written escaped instead, as ASCII: still the same JSON value.
    """
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode("ascii")


def error_frame(request_id: object, code: int, message: str, data: object = None) -> bytes:
    """A JSON-RPC error response, newline-terminated."""
    error: dict[str, object] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return compact({"jsonrpc": "2.0", "id": request_id, "error": error}) + b"\n"


def result_frame(request_id: object, result: Mapping[str, Any]) -> bytes:
    """A JSON-RPC result response, newline-terminated."""
    return compact({"jsonrpc": "2.0", "id": request_id, "result": result}) + b"\n"


def error_body(
    message: str, code: str, *, retryable: bool, outcome_unknown: bool = False, details: object = None
) -> dict[str, object]:
    """The one error envelope of a failed tool call: ``{error, code, retryable, outcome_unknown, details?}``."""
    body: dict[str, object] = {
        "error": message,
        "code": code,
        "retryable": retryable,
        "outcome_unknown": outcome_unknown,
    }
    if details is not None:
        body["details"] = details
    return body


def tool_failure(body: Mapping[str, object], text: str | None = None) -> dict[str, Any]:
    """A failed tool result: the envelope as JSON text (``text`` when it is already written) and no
    ``structuredContent`` (the TypeScript SDK validates that against the success schema even on errors)."""
    return {
        "content": [{"type": "text", "text": compact(body).decode("utf-8") if text is None else text}],
        "isError": True,
    }


def complete(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` marked complete, as the 2026-07-28 era requires of every result (the SDK drops the key from
    handshake-era answers)."""
    result["resultType"] = "complete"
    return result
