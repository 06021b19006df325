"""What Bee's remote MCP clients read of an exchange: an edge's refusal and its reason, exception groups flattened."""

from __future__ import annotations

import json

import httpx2
import pytest

from bee_hostkit.exchange import REASON_CHARS, UNCHANGED, edge_refusal, exception_leaves

pytestmark = pytest.mark.anyio


def _response(method: str, status: int, body: object) -> httpx2.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx2.Response(status, content=content, request=httpx2.Request(method, "https://tracker.example/mcp"))


async def test_an_edge_refusal_keeps_its_status_and_reason() -> None:
    refused = await edge_refusal(_response("POST", 401, {"error": "invalid_token", "error_description": "expired"}))
    assert refused == (401, "expired")
    assert await edge_refusal(_response("POST", 429, {"error": "x" * 1000})) == (429, "x" * REASON_CHARS)
    assert await edge_refusal(_response("POST", 502, b"<html>bad gateway</html>")) == (502, "")


async def test_answers_and_other_requests_are_not_refusals() -> None:
    assert await edge_refusal(_response("POST", 200, {"jsonrpc": "2.0", "id": 1, "result": {}})) is None
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad"}}
    assert await edge_refusal(_response("POST", 400, error)) is None  # an answer the SDK raises itself
    assert await edge_refusal(_response("GET", 405, {"error": "no stream"})) is UNCHANGED


def test_exception_groups_are_flattened_to_their_leaves() -> None:
    first, second, third = ValueError("a"), KeyError("b"), TimeoutError()
    group = BaseExceptionGroup("outer", [first, ExceptionGroup("inner", [second, third])])
    assert exception_leaves(group) == [first, second, third]
    assert exception_leaves(first) == [first]
