"""The tracker's stateless fast path answers exactly as the SDK's path does, over real HTTP with real tokens.

Two tracker apps share one SQLite store (tests/harness/twin_tracker.py): one with the fast path (the default), one
that sends everything through the SDK. Every request here goes to both, and the answers must agree: HTTP status,
the headers that matter, and the JSON body after parsing. Writes carry idempotency keys, so the second path to see
a write answers from the same recorded outcome, and which path goes first alternates; the lease tools (which take
no key) are compared with their fresh ids and times replaced. The fast path's own count shows which requests it
answered: every plain tools/call and tools/list, and none of the hostile ones it must leave to the SDK.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bee_contracts import load_catalog
from bee_contracts.limits import MAX_FRAME_BYTES
from tests.harness.tracker import tracker_client
from tests.harness.twin_tracker import Served, headers_that_matter, token, twin_trackers

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ALICE, BOB = "alice@example.com", "bob@example.com"
NO_LEASE = "lease-" + "0" * 32
MODERN = "2026-07-28"
#: The eras a request can come in: the handshake era with its header, without one (the SDK assumes 2025-03-26),
#: and the 2026-07-28 per-request envelope.
ERAS = ("2025-11-25", None, MODERN)
_keys = itertools.count()
_order = itertools.count()


@pytest.fixture
async def twins(tmp_path: Path) -> AsyncIterator[tuple[Served, Served]]:
    async with twin_trackers(tmp_path / "tracker") as pair:
        yield pair


def request(era: str | None, method: str, params: dict[str, Any] | None, request_id: Any = 1) -> dict[str, Any]:
    """A JSON-RPC request as that era's clients send it (the modern envelope in ``_meta``)."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if era == MODERN:
        envelope = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "twin-test", "version": "1"},
        }
        params = {**(params or {}), "_meta": {**envelope, **(params or {}).get("_meta", {})}}
    if params is not None:
        body["params"] = params
    return body


def headers(era: str | None, body: Any, actor: str = ALICE) -> dict[str, str]:
    sent = {
        "Authorization": f"Bearer {token(actor)}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    if era is not None:
        sent["MCP-Protocol-Version"] = era
    if era == MODERN and isinstance(body, dict):
        sent["Mcp-Method"] = str(body.get("method"))
        name = (body.get("params") or {}).get("name") if isinstance(body.get("params"), dict) else None
        if isinstance(name, str):
            sent["Mcp-Name"] = name
    return sent


async def send(served: Served, content: bytes, sent: dict[str, str]) -> tuple[int, dict[str, str | None], Any]:
    async with httpx.AsyncClient(timeout=60) as http:
        response = await http.post(served.url, content=content, headers=sent)
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    return response.status_code, headers_that_matter(response.headers), body


def unreplayed(answer: Any) -> Any:
    """A keyed write's answer as the first call gave it: a retry's answer is the same plus ``replayed: true``."""
    result = answer["result"]
    data = result["structuredContent"]["data"]
    assert data.pop("replayed") is True, answer
    text = json.loads(result["content"][0]["text"])
    assert text["data"].pop("replayed") is True
    result["content"][0]["text"] = json.dumps(text, ensure_ascii=False, separators=(",", ":"))
    return answer


async def both(
    twins: tuple[Served, Served], content: bytes, sent: dict[str, str], *, keyed_write: bool = False
) -> tuple[int, dict[str, str | None], Any]:
    """Send the same bytes with the same headers to both apps, which goes first alternating; the answers must be
    equal (a successful keyed write's second answer is its replay). Returns the fast path's answer."""
    fast, sdk = twins
    fast_first = next(_order) % 2 == 0
    first, second = (fast, sdk) if fast_first else (sdk, fast)
    from_first = await send(first, content, sent)
    from_second = await send(second, content, sent)
    if keyed_write and from_first[0] == 200 and not from_first[2]["result"].get("isError"):
        from_second = (*from_second[:2], unreplayed(from_second[2]))
    assert from_first == from_second
    return from_first


async def call(
    twins: tuple[Served, Served], era: str | None, tool: str, arguments: dict[str, Any], actor: str = ALICE
) -> Any:
    """tools/call on both paths; the fast path must have answered it. Returns the (equal) parsed answer."""
    body = request(era, "tools/call", {"name": tool, "arguments": arguments})
    before = twins[0].fast_answered
    sent = headers(era, body, actor)
    status, _, answer = await both(twins, json.dumps(body).encode(), sent, keyed_write="idempotency_key" in arguments)
    assert twins[0].fast_answered == before + 1, answer
    assert twins[1].fast_answered == 0
    return status, answer


def keyed(arguments: dict[str, Any]) -> dict[str, Any]:
    return {**arguments, "idempotency_key": f"twin-key-{next(_keys):06d}"}


def data(answer: Any) -> Any:
    result = answer["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]["data"]


def tool_error(answer: Any) -> str:
    result = answer["result"]
    assert result["isError"] is True and "structuredContent" not in result, result
    return str(json.loads(result["content"][0]["text"])["code"])


_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def without_fresh_values(answer: Any) -> Any:
    """A lease answer with what differs between two calls replaced: the times, and whether this call created the
    lease or ended it (the first join creates, the second renews; the first leave ends it, the second finds it
    ended)."""

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, str):
            if key == "text":
                return json.dumps(walk(json.loads(value)))
            return _TIME.sub("<time>", value)
        if key in ("created", "left", "expires_in_seconds"):
            return "<fresh>"
        return value

    return walk(answer)


@pytest.mark.parametrize("era", ERAS)
async def test_every_tracker_tool_answers_alike_on_both_paths(twins: tuple[Served, Served], era: str | None) -> None:
    served = {spec.name for spec in load_catalog("tracker")}
    covered: set[str] = set()

    async def ok(tool: str, arguments: dict[str, Any], actor: str = ALICE) -> Any:
        covered.add(tool)
        status, answer = await call(twins, era, tool, arguments, actor)
        assert status == 200
        return data(answer)

    async def fails(tool: str, arguments: dict[str, Any], code: str, actor: str = ALICE) -> None:
        covered.add(tool)
        status, answer = await call(twins, era, tool, arguments, actor)
        assert status == 200 and tool_error(answer) == code, answer

    epic = (await ok("create", keyed({"title": "Twin epic", "issue_type": "epic", "labels": ["twin"]})))["id"]
    task = (await ok("create", keyed({"title": "Twin task — ünïcode ✓", "parent": epic, "priority": 1})))["id"]
    other = (await ok("create", keyed({"title": "Other", "description": "d" * 2000})))["id"]
    await ok("get", {"id": task})
    await ok("get", {"id": epic, "comments_limit": 1})
    await ok("ready", {})
    await ok("ready", {"labels": ["twin"], "limit": 1, "offset": 0})
    await ok("search", {"query": "twin"})
    await ok("update", keyed({"id": other, "title": "Other, renamed", "add_labels": ["x"]}))
    await ok("claim", keyed({"id": task}))
    await ok("add_note", keyed({"id": task, "text": 'a note with "quotes" and \\ slashes'}))
    await ok("link", keyed({"id": other, "target": task, "type": "related"}))
    await ok("handoff", keyed({"id": task, "done": "half", "remaining": "half", "next": "finish", "release": True}))
    await ok("claim", keyed({"id": task}), actor=BOB)
    await ok("release", keyed({"id": task, "reason": "not mine after all"}), actor=BOB)
    await ok("claim", keyed({"id": other}))
    await ok("complete", keyed({"id": other, "summary": "done", "evidence": "twin test"}))

    # Tool failures: invalid arguments (schema and store rules), ids that do not exist, a claim held by another.
    await ok("claim", keyed({"id": task}))
    await fails("release", keyed({"id": task}), "forbidden", actor=BOB)
    await fails("update", keyed({"id": task, "status": "open"}), "forbidden", actor=BOB)
    await fails("update", keyed({"id": task, "status": "sideways"}), "invalid_argument")
    await fails("claim", keyed({"id": task}), "conflict", actor=BOB)
    await fails("get", {"id": "t-nope"}, "not_found")
    await fails("get", {}, "invalid_argument")
    await fails("get", {"id": task, "comments_limit": "many"}, "invalid_argument")
    await fails("ready", {"limit": 0}, "invalid_argument")
    await fails("search", {"status": "not-a-list"}, "invalid_argument")
    await fails("create", {"title": "x" * 501}, "invalid_argument")
    await fails("update", keyed({"id": task, "priority": 9}), "invalid_argument")
    await fails("link", keyed({"id": task, "target": "t-nope"}), "not_found")
    await fails("complete", keyed({"id": epic}), "blocked")
    await fails("handoff", keyed({"id": task}), "invalid_argument")
    await fails("add_note", keyed({"id": "t-nope", "text": "x"}), "not_found")
    await fails("lease_get", {"id": NO_LEASE}, "not_found")
    await fails("lease_renew", {"id": NO_LEASE}, "not_found")
    await fails("lease_leave", {"id": NO_LEASE}, "not_found")
    await fails("lease_join", {"space": "s", "checkout_id": "c", "ttl_seconds": -1}, "invalid_argument")

    # The lease tools take no idempotency key: the second join of one checkout renews the first's lease.
    joined = await lease_twice(twins, era, "lease_join", {"space": "twins", "checkout_id": f"c-{era}"})
    lease = joined["id"]
    covered.add("lease_join")
    await lease_twice(twins, era, "lease_get", {"id": lease})
    covered.add("lease_get")
    await lease_twice(twins, era, "lease_renew", {"id": lease})
    covered.add("lease_renew")
    await lease_twice(twins, era, "lease_leave", {"id": lease})
    assert covered == served, served - covered


async def lease_twice(twins: tuple[Served, Served], era: str | None, tool: str, arguments: dict[str, Any]) -> Any:
    """A lease call on each path in turn; the answers agree but for their times (lease reads report the time)."""
    body = request(era, "tools/call", {"name": tool, "arguments": arguments})
    sent = headers(era, body)
    before = twins[0].fast_answered
    from_fast = await send(twins[0], json.dumps(body).encode(), sent)
    from_sdk = await send(twins[1], json.dumps(body).encode(), sent)
    assert twins[0].fast_answered == before + 1
    assert from_fast[:2] == from_sdk[:2]
    assert without_fresh_values(from_fast[2]) == without_fresh_values(from_sdk[2])
    return data(from_fast[2])


@pytest.mark.parametrize("era", ERAS)
async def test_tools_list_and_an_unknown_tool_answer_alike(twins: tuple[Served, Served], era: str | None) -> None:
    fast = twins[0]
    for params in (None, {}, {"cursor": "anything"}) if era != MODERN else ({},):
        body = request(era, "tools/list", params)
        before = fast.fast_answered
        status, sent_headers, answer = await both(twins, json.dumps(body).encode(), headers(era, body))
        assert fast.fast_answered == before + 1
        assert status == 200 and sent_headers["content-type"] == "application/json"
        tools = answer["result"]["tools"]
        assert [tool["name"] for tool in tools] == [spec.name for spec in load_catalog("tracker")]
        assert "dev.bee/contract" in answer["result"]["_meta"]
    status, answer = await call(twins, era, "nope", {})
    assert answer["error"]["code"] == -32602 and "unknown tool" in answer["error"]["message"]
    assert status == (400 if era == MODERN else 200)


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_the_official_client_takes_the_fast_path(twins: tuple[Served, Served], era: str) -> None:
    fast = twins[0]
    async with tracker_client(fast.url, token(ALICE), era) as client:
        before = fast.fast_answered
        listed = await client.list_tools()
        assert [tool.name for tool in listed.tools] == [spec.name for spec in load_catalog("tracker")]
        created = await client.call_tool("create", {"title": "through the client"})
        got = await client.call_tool("get", {"id": created.structured_content["data"]["id"]})
        assert got.structured_content["data"]["issue"]["title"] == "through the client"
        missing = await client.call_tool("get", {"id": "t-nope"})
        assert missing.is_error
        assert fast.fast_answered == before + 4


# -- hostile input: the fast path either answers as the SDK does, or leaves the request to it ------------------


def raw(era: str | None, body: Any) -> tuple[bytes, dict[str, str]]:
    return json.dumps(body).encode(), headers(era, body)


def get_params(**extra: Any) -> dict[str, Any]:
    return {"name": "get", "arguments": {"id": "t-nope"}, **extra}


@pytest.mark.parametrize("era", ERAS)
async def test_hostile_requests_answer_alike(twins: tuple[Served, Served], era: str | None) -> None:
    fast = twins[0]

    async def left_to_the_sdk(content: bytes, sent: dict[str, str]) -> tuple[int, Any]:
        before = fast.fast_answered
        status, _, answer = await both(twins, content, sent)
        assert fast.fast_answered == before, (content[:200], answer)
        return status, answer

    async def answered_fast(content: bytes, sent: dict[str, str]) -> tuple[int, Any]:
        before = fast.fast_answered
        status, _, answer = await both(twins, content, sent)
        assert fast.fast_answered == before + 1, (content[:200], answer)
        return status, answer

    content, sent = raw(era, request(era, "tools/call", get_params()))
    # DNS rebinding: a foreign Host or Origin is refused by the SDK, never answered here.
    assert (await left_to_the_sdk(content, {**sent, "Host": "evil.example"}))[0] == 421
    assert (await left_to_the_sdk(content, {**sent, "Origin": "http://evil.example"}))[0] == 403
    # What the client must accept and send.
    assert (await left_to_the_sdk(content, {**sent, "Accept": "text/event-stream"}))[0] == 406
    assert (await left_to_the_sdk(content, {**sent, "Content-Type": "text/plain"}))[0] in (400, 415)
    await left_to_the_sdk(content, {**sent, "MCP-Protocol-Version": "1999-01-01"})
    # No token, or a bad one: refused before the body is read.
    no_token = {k: v for k, v in sent.items() if k != "Authorization"}
    assert (await left_to_the_sdk(content, no_token))[0] == 401
    assert (await left_to_the_sdk(content, {**sent, "Authorization": "Bearer not.a.token"}))[0] == 401

    # Params, name and arguments of the wrong shape.
    for params in ([1, 2], "get", {"name": 7, "arguments": {}}, {"name": "get", "arguments": [1]}):
        body = request(era, "tools/call", None) | {"params": params}
        if era == MODERN and isinstance(params, dict):
            body = request(era, "tools/call", params)
        await left_to_the_sdk(*raw(era, body))
    await left_to_the_sdk(*raw(era, request(era, "tools/call", get_params(extra="field"))))
    # Arguments null is what the SDK passes on as no arguments: the host answers, alike on both paths.
    await answered_fast(*raw(era, request(era, "tools/call", get_params(arguments=None))))

    # Ids: strings and safe integers are answered here; anything else is the SDK's (or CheckedBody's) to refuse.
    request_id: Any
    for request_id in ("a-string", "", 0, -5, 2**53 - 1):
        status, answer = await answered_fast(*raw(era, request(era, "tools/call", get_params(), request_id)))
        assert answer["id"] == request_id
    for request_id in (1.5, True, None, {"a": 1}, [1], 2**60):
        await left_to_the_sdk(*raw(era, request(era, "tools/call", get_params(), request_id)))

    # Huge arguments: a large but legal frame is validated by the host as usual; over 512 KiB is refused 413.
    big = request(era, "tools/call", {"name": "get", "arguments": {"id": "x" * (MAX_FRAME_BYTES - 2000)}})
    status, answer = await answered_fast(*raw(era, big))
    assert status == 200 and tool_error(answer) == "invalid_argument"
    huge = request(era, "tools/call", {"name": "get", "arguments": {"id": "x" * MAX_FRAME_BYTES}})
    assert (await left_to_the_sdk(*raw(era, huge)))[0] == 413

    # Not one plain request: a batch, a notification, another method, a body that is not JSON.
    plain = request(era, "tools/call", get_params())
    await left_to_the_sdk(json.dumps([plain]).encode(), sent)
    await left_to_the_sdk(*raw(era, {k: v for k, v in plain.items() if k != "id"}))
    await left_to_the_sdk(*raw(era, request(era, "ping", {})))
    await left_to_the_sdk(*raw(era, request(era, "tools/call", get_params()) | {"jsonrpc": "1.0"}))
    await left_to_the_sdk(b"{not json", sent)
    if era == MODERN:
        # The envelope and its headers must agree, as the SDK requires.
        await left_to_the_sdk(content, {**sent, "Mcp-Name": "ready"})
        await left_to_the_sdk(content, {**sent, "Mcp-Method": "tools/list"})
        await left_to_the_sdk(*raw(era, {**plain, "params": get_params()}))
        await left_to_the_sdk(content, {**sent, "Mcp-Param-Id": "t-nope"})
    else:
        # A handshake-era request carrying more than a progress token in _meta is the SDK's.
        await left_to_the_sdk(*raw(era, request(era, "tools/call", get_params(_meta={"other": 1}))))
        await answered_fast(*raw(era, request(era, "tools/call", get_params(_meta={"progressToken": "p"}))))


async def test_the_typescript_client_and_the_inspector_take_the_fast_path(twins: tuple[Served, Served]) -> None:
    import anyio.to_thread

    from tests.harness import node

    fast = twins[0]
    before = fast.fast_answered
    # The clients run as blocking subprocesses: in a worker thread, so this event loop keeps serving them.
    out = await anyio.to_thread.run_sync(
        node.ts_client,
        node.http_server(fast.url, token(ALICE)),
        [("create", {"title": "through the TypeScript client"}), ("get", {"id": "t-nope"})],
    )
    assert out["tools"] == [spec.to_wire() for spec in load_catalog("tracker")]
    created, missing = (node.answered(call) for call in out["calls"])
    assert node.success(created)["data"]["created"] is True
    assert json.loads(missing["content"][0]["text"])["code"] == "not_found"
    assert fast.fast_answered == before + 3  # tools/list and both calls; initialize went to the SDK

    def inspect() -> Any:
        return node.inspector(
            [],
            *("--transport", "http", "--server-url", fast.url),
            *("--method", "tools/call", "--tool-name", "ready", "--tool-arg", "limit=5"),
            headers={"Authorization": f"Bearer {token(BOB)}"},
        )

    called = await anyio.to_thread.run_sync(inspect)
    assert called.returncode == 0, (called.error, called.stderr)
    assert called.result["structuredContent"]["data"]["total"] >= 1
    assert fast.fast_answered >= before + 4


# -- unpaired surrogates: JSON may escape one (``"\ud800"``), Python's parser keeps it, UTF-8 cannot carry it -------

#: A lone high and a lone low surrogate, as a request's JSON escapes them.
LONE = ("\ud800", "\udfff")


def surrogate_headers(era: str | None, body: dict[str, Any]) -> dict[str, str]:
    """The era's headers for ``body``, less a routing header whose value a surrogate keeps out of HTTP (a header
    holds Latin-1 at most): the request the two paths get is the same either way."""
    sent = headers(era, {k: v for k, v in body.items() if k != "method"} | {"method": "tools/call"})
    if era == MODERN:
        sent["Mcp-Method"] = body["method"] if isinstance(body["method"], str) else ""
        name = (body.get("params") or {}).get("name")
        sent["Mcp-Name"] = name if isinstance(name, str) else ""
    return {key: value for key, value in sent.items() if value and value.isascii()}


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("lone", LONE, ids=["high", "low"])
async def test_unpaired_surrogates_answer_alike_wherever_they_are(
    twins: tuple[Served, Served], era: str | None, lone: str
) -> None:
    fast = twins[0]
    call_params = {"name": "get", "arguments": {"id": "t-nope"}}
    bodies: list[dict[str, Any]] = [
        request(era, "tools/call", call_params, request_id=lone),
        request(era, "tools/call", call_params, request_id=f"id-{lone}-end"),
        request(era, "tools/list", {}, request_id=lone),
        request(era, f"tools/{lone}", call_params),
        request(era, "tools/call", {**call_params, lone: 1}),
        request(era, "tools/call", {"name": lone, "arguments": {}}),
        request(era, "tools/call", {"name": f"get{lone}", "arguments": {"id": "t-nope"}}),
        request(era, "tools/call", {"name": "get", "arguments": {"id": lone}}),
        request(era, "tools/call", {"name": "search", "arguments": {"query": f"a{lone}b"}}),
        request(era, "tools/call", {"name": "ready", "arguments": {lone: 1}}),
        request(era, "tools/call", {"name": "ready", "arguments": {"labels": [lone]}}),
        request(era, "tools/call", {"name": "ready", "arguments": {"priority": lone}}),
        request(era, "tools/call", {**call_params, "_meta": {"progressToken": lone}}),
        request(era, "tools/list", {"cursor": lone}),
    ]
    if era == MODERN:
        client_info = {"io.modelcontextprotocol/clientInfo": {"name": lone, "version": "1"}}
        bodies.append(request(era, "tools/call", {**call_params, "_meta": client_info}))
    for body in bodies:
        # json.dumps escapes the surrogate (ASCII out): the bytes on the wire are valid UTF-8, as a client sends them.
        before = fast.fast_answered
        status, _, answer = await both(twins, json.dumps(body).encode(), surrogate_headers(era, body))
        assert status != 500 and isinstance(answer, dict), (body, status, answer)
        if era == MODERN and body["id"] == lone:
            # The plain call and listing with a surrogate id are the fast path's, which echoes the id as the SDK does.
            assert fast.fast_answered == before + 1 and answer["id"] == lone, answer
