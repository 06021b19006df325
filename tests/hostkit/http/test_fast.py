"""The generic fast path (bee_hostkit.http.fast) on a host of its own, through the ASGI app with its lifespan.

The tracker's tests (tests/e2e/test_tracker_fast_path.py) compare the two paths over real HTTP for every tracker
tool; these cover what the tracker does not exercise: the caller a host derives, a result the fast serialiser
cannot write (an integer past 64 bits), a tool whose schema declares ``x-mcp-header``, a handler that fails
unexpectedly, and the switch that turns the fast path off.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from bee_contracts import ToolSpec
from bee_contracts.limits import MAX_RESULT_BYTES
from bee_hostkit import Call, Handler, Host
from bee_hostkit.host import GRACE_SECONDS
from bee_hostkit.http.app import mcp_http_app
from bee_hostkit.http.fast import HostServer

pytestmark = pytest.mark.anyio

_ANNOTATIONS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


def spec(name: str, properties: dict[str, Any] | None = None) -> ToolSpec:
    return ToolSpec(
        host="core",
        name=name,
        title=name,
        description=f"The {name} tool.",
        input_schema={"type": "object", "properties": properties or {}, "additionalProperties": False},
        output_schema={"type": "object"},
        annotations=_ANNOTATIONS,
    )


def whoami(call: Call[Any]) -> dict[str, Any]:
    return {"caller": call.caller}


def huge(call: Call[Any]) -> dict[str, Any]:
    return {"big": 2**70, "text": "ünïcode"}


def broken(call: Call[Any]) -> dict[str, Any]:
    raise RuntimeError("a bug")


async def routed(call: Call[Any]) -> dict[str, Any]:
    return {"region": call.args.get("region")}


def oversized(call: Call[Any]) -> dict[str, Any]:
    return {"text": "x" * MAX_RESULT_BYTES}


def slow(call: Call[Any]) -> dict[str, Any]:
    time.sleep(SLOW_SECONDS)
    return {}


#: Past the slow tool's 0.1 s deadline and the host's grace after it.
SLOW_SECONDS = 0.1 + GRACE_SECONDS + 0.5


def host() -> Host:
    region = {"region": {"type": "string", "x-mcp-header": "Region"}}
    handlers: dict[str, Handler] = {
        "whoami": whoami,
        "huge": huge,
        "broken": broken,
        "routed": routed,
        "oversized": oversized,
        "slow": slow,
    }
    return Host(
        "fast-test",
        [spec(name, region if name == "routed" else None) for name in handlers],
        handlers,
        caller_of=lambda scope: scope.get("test.caller"),
        deadlines={"slow": 0.1},
    )


class Caller:
    """Sets the caller in the scope, as an authentication wrapper would."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["test.caller"] = "carol"
        await self.app(scope, receive, send)


def app(*, fast: bool | None = None) -> Starlette:
    served = host()

    def build() -> HostServer:
        return HostServer(served.build_server(), served)

    return mcp_http_app(build, wrappers=[Caller], fast_path=fast)


@asynccontextmanager
async def client(application: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    async with application.router.lifespan_context(application):
        for part in application.state.deferred:
            await part.settled()
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            yield http


HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def post(http: httpx.AsyncClient, body: dict[str, Any]) -> tuple[int, Any]:
    response = await http.post("/mcp", content=json.dumps(body), headers=HEADERS)
    return response.status_code, response.json()


def tool_call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments or {}}}


async def test_answers_agree_with_the_sdk_path_and_the_fast_path_counts_what_it_took() -> None:
    fast_app, sdk_app = app(), app(fast=False)
    async with client(fast_app) as fast, client(sdk_app) as sdk:
        assert sdk_app.state.fast_path is None
        counted = fast_app.state.fast_path
        for body, taken in [
            (tool_call("whoami"), True),  # the caller from the scope, as the SDK path's from the request context
            (tool_call("huge"), True),  # past 64 bits: the standard library writes what orjson cannot
            (tool_call("broken"), True),  # an unexpected fault: the host's internal error, on both paths
            (tool_call("nope"), True),  # an unknown tool: the SDK's -32602, as the SDK writes it
            (tool_call("routed", {"region": "eu"}), False),  # x-mcp-header: the SDK checks the Mcp-Param headers
            ({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}, True),
            (tool_call("oversized"), True),  # over 256 KiB: result_too_large, nothing partial
            (tool_call("slow"), True),  # past its deadline: deadline_exceeded
        ]:
            before = counted.answered
            answers = await post(fast, body), await post(sdk, body)
            assert answers[0] == answers[1], body
            assert counted.answered == before + (1 if taken else 0), body
        assert (await post(fast, tool_call("whoami")))[1]["result"]["structuredContent"] == {"caller": "carol"}
        assert (await post(fast, tool_call("huge")))[1]["result"]["structuredContent"]["big"] == 2**70


def code_of(answer: Any) -> str:
    return str(json.loads(answer["result"]["content"][0]["text"])["code"])


async def test_the_limits_hold_on_both_paths() -> None:
    async with client(app()) as fast, client(app(fast=False)) as sdk:
        for name, code in (("oversized", "result_too_large"), ("slow", "deadline_exceeded")):
            answers = await post(fast, tool_call(name)), await post(sdk, tool_call(name))
            assert answers[0] == answers[1] and code_of(answers[0][1]) == code


async def test_both_paths_answer_a_call_through_the_hosts_one_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    answered: list[tuple[str, Any]] = []
    answer = Host.answer

    async def counted(self: Host, name: str, arguments: Any, scope: Any = None) -> dict[str, Any]:
        answered.append((name, scope.get("test.caller")))
        return await answer(self, name, arguments, scope)

    monkeypatch.setattr(Host, "answer", counted)
    fast_app = app()
    for application in (fast_app, app(fast=False)):
        async with client(application) as http:
            assert (await post(http, tool_call("whoami")))[1]["result"]["structuredContent"] == {"caller": "carol"}
    assert answered == [("whoami", "carol"), ("whoami", "carol")] and fast_app.state.fast_path.answered == 1


async def test_the_environment_switch_turns_the_fast_path_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BEE_HTTP_FAST_PATH", "0")
    switched = app()
    async with client(switched) as http:
        status, answer = await post(http, tool_call("whoami"))
        assert status == 200 and answer["result"]["structuredContent"] == {"caller": "carol"}
        assert switched.state.fast_path is None


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_every_handshake_version_answers_alike(version: str) -> None:
    fast_app = app()
    async with client(fast_app) as fast, client(app(fast=False)) as sdk:
        for body in (tool_call("whoami"), tool_call("broken"), {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}):
            sent = {**HEADERS, "MCP-Protocol-Version": version}
            answers = [await http.post("/mcp", content=json.dumps(body), headers=sent) for http in (fast, sdk)]
            assert [(a.status_code, a.json()) for a in answers] == [(answers[1].status_code, answers[1].json())] * 2
        assert fast_app.state.fast_path.answered == 3
