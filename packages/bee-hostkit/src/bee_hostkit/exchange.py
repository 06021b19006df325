"""What Bee's clients of remote MCP servers read of an HTTP exchange beyond what the SDK reports: whether the
server's edge refused a request (and why), and the failures inside the exception groups of the client's tasks."""

from __future__ import annotations

import json

import httpx2

#: The most characters of a refusal's reason kept (it is the server's text, shown in an error message).
REASON_CHARS = 300


class Unchanged:
    """The answer of :func:`edge_refusal` for a response that says nothing of refusals (not a POST)."""


UNCHANGED = Unchanged()


async def edge_refusal(response: httpx2.Response) -> tuple[int, str] | Unchanged | None:
    """For the client's response hook: ``(status, reason)`` when the server's edge refused this POST (an error
    status whose body is not a JSON-RPC error: OAuth's ``error_description`` or ``error`` is the reason), None when
    it did not, :data:`UNCHANGED` for any other request (the optional GET stream, a session's DELETE)."""
    if response.request.method != "POST":
        return UNCHANGED
    if response.status_code < 400:
        return None
    await response.aread()
    try:
        body = json.loads(response.text)
    except ValueError:
        body = None
    if isinstance(body, dict) and "jsonrpc" in body and "error" in body:
        return None  # a JSON-RPC error at an HTTP status: an answer, which the SDK raises as MCPError
    reason = (body.get("error_description") or body.get("error")) if isinstance(body, dict) else None
    return response.status_code, str(reason)[:REASON_CHARS] if reason else ""


def exception_leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside ``exc``, exception groups flattened."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in exception_leaves(inner)]
    return [exc]
