"""Listening over real HTTP with real tokens: the tracker's resources read, `subscriptions/listen` waking the official
Python client when a subscribed resource changes (on SQLite, and on PostgreSQL from a write on another replica),
a claim that runs out waking listeners though nobody wrote, and every bound on listening provoked: resources per
stream, streams per actor, streams per process (the edge's own count, apart from calls, so 1,000 listeners leave a
`claim` its room), and a listener that stops reading."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.client.subscriptions import ListenNotSupportedError
from mcp.shared.exceptions import MCPError

from tests.harness.tracker import MODERN_META, ToolPoster, TrackerFactory, TrackerProcess, tracker_client

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

READY = "bee://tracker/ready"
ACTOR = "agent@example.com"


def issue(issue_id: str) -> str:
    return f"bee://tracker/issues/{issue_id}"


def claims(actor: str) -> str:
    return "bee://tracker/claims/" + actor.replace("@", "%40")


def _replicas(store_url: str, tracker_factory: TrackerFactory, home: Path) -> list[TrackerProcess]:
    """One tracker on SQLite; two sharing the PostgreSQL database (a listener on one, the writer on the other)."""
    count = 2 if store_url.startswith("postgresql") else 1
    return [tracker_factory(store_url, home=home) for _ in range(count)]


async def _call(client: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    data: dict[str, Any] = result.structured_content["data"]
    return data


async def _until_heard(subscription: Any, wanted: set[str], seconds: float = 20.0) -> set[str]:
    """Read events until every URI in ``wanted`` has been heard; the URIs heard (fails after ``seconds``)."""
    heard: set[str] = set()
    with anyio.fail_after(seconds):
        async for event in subscription:
            heard.add(event.uri)
            if wanted <= heard:
                return heard
    raise AssertionError(f"the stream ended having heard {sorted(heard)}, not {sorted(wanted - heard)}")


async def test_resources_are_read_and_listed_as_templates(tracker_factory: TrackerFactory, store_url: str) -> None:
    server = tracker_factory(store_url)
    token = server.token(ACTOR)
    async with tracker_client(server.url, token, era="auto") as client:
        urgent = await _call(client, "create", title="urgent", priority=0, labels=["api"])
        later = await _call(client, "create", title="later", priority=3)
        await _call(client, "claim", id=later["id"])
        templates = (await client.list_resource_templates()).resource_templates
        assert [template.uri_template for template in templates] == [
            "bee://tracker/issues/{id}",
            "bee://tracker/ready{?priority,label*,limit}",
            "bee://tracker/claims/{actor}",
            "bee://tracker/log{?actor,issue,tool,since,limit}",
        ]

        async def read(uri: str) -> dict[str, Any]:
            [contents] = (await client.read_resource(uri)).contents
            assert contents.mime_type == "application/json"
            body: dict[str, Any] = json.loads(contents.text)["data"]
            return body

        assert (await read(issue(urgent["id"])))["issue"]["title"] == "urgent"
        assert [row["id"] for row in (await read(f"{READY}?priority=0&label=api"))["issues"]] == [urgent["id"]]
        assert [row["id"] for row in (await read(READY))["issues"]] == [urgent["id"]]  # the claimed one is not ready
        held = await read(claims(ACTOR))
        assert [claim["id"] for claim in held["claims"]] == [later["id"]]
        # The audit log, read under bee tracker log's filters: the newest entries, oldest first, with who and where.
        log = await read("bee://tracker/log?actor=" + ACTOR.replace("@", "%40") + "&limit=2")
        assert [(entry["tool"], entry["issue"]) for entry in log["entries"]] == [
            ("create", later["id"]),
            ("claim", later["id"]),
        ]
        assert log["more"] is True and all(entry["actor"] == ACTOR and entry["replica"] for entry in log["entries"])
        for uri, code, words in [
            (issue("bd-nope"), "not_found", "no issue 'bd-nope'"),
            (f"{READY}?priority=9", "invalid_argument", "priority in a ready URI must be"),
            (f"{READY}?colour=red", "invalid_argument", "takes priority, label"),
            ("bee://tracker/log?since=yesterday", "invalid_argument", "RFC 3339 time"),
            ("bee://tracker/elsewhere", "invalid_argument", "serves no resource"),
        ]:
            with pytest.raises(MCPError) as refused:
                await read(uri)
            assert refused.value.code == -32602 and refused.value.data["code"] == code, refused.value
            assert words in refused.value.message, refused.value.message
        assert (await read(issue(urgent["id"])))["issue"]["id"] == urgent["id"]  # the host kept serving


async def test_a_2025_client_reads_resources_but_cannot_listen(tracker_factory: TrackerFactory) -> None:
    server = tracker_factory()
    async with tracker_client(server.url, server.token(ACTOR), era="legacy") as client:
        created = await _call(client, "create", title="read me")
        [contents] = (await client.read_resource(issue(created["id"]))).contents
        assert json.loads(contents.text)["data"]["issue"]["id"] == created["id"]
        with pytest.raises(ListenNotSupportedError):
            async with client.listen(resource_subscriptions=[issue(created["id"])]):
                pass
        # That era's subscribe needs a session the stateless tracker does not keep: it is not served.
        with (
            pytest.warns(Warning, match="resources/subscribe is removed"),  # the SDK says so, then sends it
            pytest.raises(MCPError) as refused,
        ):
            await client.session.subscribe_resource(issue(created["id"]))
        assert refused.value.code == -32601


async def test_listeners_are_woken_by_writes_on_any_replica(
    tracker_factory: TrackerFactory, store_url: str, tmp_path: Path
) -> None:
    servers = _replicas(store_url, tracker_factory, tmp_path / "home")
    listening, writing = servers[0], servers[-1]
    async with (
        tracker_client(listening.url, listening.token(ACTOR), era="auto") as listener,
        tracker_client(writing.url, writing.token(ACTOR), era="auto") as agent,
        tracker_client(writing.url, writing.token("lead@example.com"), era="auto") as lead,
    ):
        blocker = await _call(lead, "create", title="blocker")
        epic = await _call(lead, "create", title="epic", issue_type="epic")
        blocked = await _call(lead, "create", title="blocked", prerequisites=[blocker["id"]], parent=epic["id"])
        watched = [issue(blocked["id"]), issue(epic["id"]), READY, claims(ACTOR)]
        async with listener.listen(resource_subscriptions=watched) as subscription:
            # A blocker closes: the blocked issue becomes ready, and the ready queue changes.
            await _call(lead, "claim", id=blocker["id"])
            await _call(lead, "complete", id=blocker["id"], summary="done")
            await _until_heard(subscription, {issue(blocked["id"]), READY})
            # Claimed and released by the agent: the issue, the queue and the agent's claims.
            await _call(agent, "claim", id=blocked["id"])
            await _until_heard(subscription, {issue(blocked["id"]), READY, claims(ACTOR)})
            await _call(agent, "release", id=blocked["id"])
            await _until_heard(subscription, {issue(blocked["id"]), READY, claims(ACTOR)})
            # A child closes: its parent hears of it.
            await _call(agent, "claim", id=blocked["id"])
            await _call(agent, "complete", id=blocked["id"], summary="done")
            await _until_heard(subscription, {issue(epic["id"]), claims(ACTOR)})
        expiring = await _call(lead, "create", title="expiring")
        async with listener.listen(resource_subscriptions=[issue(expiring["id"]), READY]) as subscription:
            await _call(agent, "claim", id=expiring["id"], lease_seconds=1)
            await _until_heard(subscription, {issue(expiring["id"]), READY})
            # Nobody writes again: the claim runs out by the database's clock, and the listener is told.
            await _until_heard(subscription, {issue(expiring["id"]), READY})
        ready = json.loads((await listener.read_resource(READY)).contents[0].text)["data"]["issues"]
        assert expiring["id"] in [row["id"] for row in ready]


def _listen_body(uris: list[str], request_id: int = 1) -> bytes:
    params = {"notifications": {"resourceSubscriptions": uris}, "_meta": MODERN_META}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params}).encode()


def _listen_headers(token: str) -> dict[str, str]:
    return {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "subscriptions/listen",
        "Authorization": f"Bearer {token}",
    }


class RawStream:
    """A listen stream read as plain HTTP: the response, and its lines past the acknowledgement."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.status_code = response.status_code
        self.lines = response.aiter_lines()


@asynccontextmanager
async def raw_listen(http: httpx.AsyncClient, url: str, token: str, uris: list[str]) -> AsyncIterator[RawStream]:
    """A listen stream as plain HTTP, entered once it is acknowledged (or answered otherwise)."""
    async with http.stream("POST", url, content=_listen_body(uris), headers=_listen_headers(token)) as response:
        stream = RawStream(response)
        if response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream"):
            async for line in stream.lines:
                if "notifications/subscriptions/acknowledged" in line:
                    break
        yield stream


async def test_every_bound_on_listening_is_enforced(tracker_factory: TrackerFactory) -> None:
    server = tracker_factory(None, "--max-listen-uris", "3", "--max-listens-per-actor", "1", "--max-listens", "2")
    async with tracker_client(server.url, server.token(ACTOR), era="auto") as client:
        created = await _call(client, "create", title="watched")
        # More resources than a stream may hold, and a resource the tracker does not serve: refused before the ack.
        with pytest.raises(MCPError) as refused:
            async with client.listen(resource_subscriptions=[issue(f"bd-{n}") for n in range(4)]):
                pass
        assert "at most 3 resources" in refused.value.message
        with pytest.raises(MCPError) as refused:
            async with client.listen(resource_subscriptions=["bee://tracker/nothing"]):
                pass
        assert "serves no resource" in refused.value.message
        # The audit log is read, not listened to (every write changes it).
        with pytest.raises(MCPError) as refused:
            async with client.listen(resource_subscriptions=["bee://tracker/log"]):
                pass
        assert "read with resources/read, not listened to" in refused.value.message
        async with client.listen(resource_subscriptions=[issue(created["id"])]):
            # The actor's second stream in this process: refused, naming the cap; another actor may listen.
            with pytest.raises(MCPError) as refused:
                async with client.listen(resource_subscriptions=[READY]):
                    pass
            assert "already has 1 listen streams open" in refused.value.message
            async with (
                httpx.AsyncClient(timeout=30) as http,
                raw_listen(http, server.url, server.token("second@example.com"), [READY]) as second,
            ):
                assert second.status_code == 200
                # The process's third stream: the edge sheds it (503 busy), apart from calls.
                async with raw_listen(http, server.url, server.token("third@example.com"), [READY]) as third:
                    assert third.status_code == 503
                    body = json.loads(await third.response.aread())
                    assert body["error"] == "busy" and "listen streams open" in body["error_description"]
                    assert third.response.headers["retry-after"] == "1"
                # Calls are admitted meanwhile.
                await _call(client, "update", id=created["id"], title="still served")


@pytest.mark.timeout(300)
async def test_a_thousand_listeners_leave_a_claim_its_room(tracker_factory: TrackerFactory) -> None:
    server = tracker_factory(None, "--max-listens-per-actor", "1000", "--max-listens", "1100")
    token = server.token(ACTOR)
    limits = httpx.Limits(max_connections=1100, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=httpx.Timeout(120.0), limits=limits) as http:
        agent = ToolPoster(http, server.url, token)
        error, created = await agent.call("create", {"title": "claim me"})
        assert not error, created
        opened = anyio.Event()
        acknowledged = 0

        async def listen_until_done() -> None:
            nonlocal acknowledged
            async with raw_listen(http, server.url, token, [READY]) as response:
                assert response.status_code == 200, await response.response.aread()
                acknowledged += 1
                if acknowledged == 1000:
                    opened.set()
                await anyio.sleep_forever()

        async with anyio.create_task_group() as streams:
            for _ in range(1000):
                streams.start_soon(listen_until_done)
            with anyio.fail_after(240):
                await opened.wait()
            # Every listener holds its stream; a claim is still admitted (100 calls in flight are allowed).
            error, claimed = await agent.call("claim", {"id": created["data"]["id"]})
            assert not error, claimed
            assert claimed["data"]["claimed"] is True
            streams.cancel_scope.cancel()


def _stalled_listen(port: int, token: str, uris: list[str]) -> socket.socket:
    """A listen stream whose client never reads a byte of the answer (a tiny receive buffer, never drained)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    sock.connect(("127.0.0.1", port))
    body = _listen_body(uris)
    head = "".join(f"{name}: {value}\r\n" for name, value in _listen_headers(token).items())
    request = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}Content-Length: {len(body)}\r\n\r\n"
    sock.sendall(request.encode() + body)
    return sock


async def _may_listen(client: Any) -> bool:
    """Whether the actor may open a listen stream now (False: it holds its one stream already)."""
    try:
        async with client.listen(resource_subscriptions=[READY]):
            return True
    except MCPError as refused:
        if "already has 1 listen streams open" not in refused.message:
            raise
        return False


async def test_a_listener_that_stops_reading_is_dropped(tracker_factory: TrackerFactory) -> None:
    server = tracker_factory(
        None, "--listen-buffer", "8", "--listen-stall-seconds", "1", "--max-listens-per-actor", "1"
    )
    token = server.token(ACTOR)
    async with tracker_client(server.url, token, era="auto") as client:
        created = await _call(client, "create", title="busy issue")
        # Each write touches both: the issue, and the ready queue it is in.
        stalled = _stalled_listen(server.port, token, [issue(created["id"]), READY])
        try:
            # The stalled stream holds the actor's one slot until the tracker drops it: write until it has.
            for round_ in range(2000):
                await _call(client, "update", id=created["id"], notes=f"round {round_} " + "x" * 200)
                if round_ % 25 == 24 and await _may_listen(client):
                    break
            else:
                raise AssertionError("the stalled listener was never dropped")
        finally:
            stalled.close()
    log = server.log.read_text()
    assert "backlog full; ending the stream" in log


async def test_stopping_a_tracker_ends_its_listen_streams(tracker_factory: TrackerFactory) -> None:
    server = tracker_factory()
    token = server.token(ACTOR)
    async with (
        httpx.AsyncClient(timeout=30) as http,
        raw_listen(http, server.url, token, [READY]) as stream,
    ):
        assert stream.status_code == 200
        # A stream lasts as long as its client listens: the stop ends it rather than waiting out its grace time.
        await anyio.to_thread.run_sync(server.stop)
        with pytest.raises(httpx.HTTPError):
            async for _ in stream.lines:
                pass
    assert "timeout graceful shutdown exceeded" not in server.log.read_text()


async def test_a_call_cannot_pass_for_a_stream_to_skip_the_calls_admission(tracker_factory: TrackerFactory) -> None:
    server = tracker_factory(None, "--max-listens", "1")
    token = server.token(ACTOR)
    params: dict[str, Any] = {"name": "ready", "arguments": {}}
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    async with (
        httpx.AsyncClient(timeout=30) as http,
        raw_listen(http, server.url, token, [READY]) as stream,
    ):
        assert stream.status_code == 200  # the one stream this process holds
        # A handshake-era call whose Mcp-Method header names a stream (nothing checks it in that era): it is a call,
        # admitted and answered as one, not shed as the second stream.
        headers = {**_listen_headers(token), "MCP-Protocol-Version": "2025-11-25"}
        answer = await http.post(server.url, content=json.dumps(call), headers=headers)
        assert answer.status_code == 200, answer.text
        assert "issues" in json.dumps(answer.json()["result"]["structuredContent"])
        # In the 2026 era the SDK holds the header to the body's method: the disagreement is refused.
        modern = {**call, "params": {**params, "_meta": MODERN_META}}
        refused = await http.post(server.url, content=json.dumps(modern), headers=_listen_headers(token))
        assert refused.status_code in (400, 503), refused.text


async def test_listeners_hear_bee_bd_writing_on_the_same_sqlite_store(
    tracker_factory: TrackerFactory, tmp_path: Path
) -> None:
    """`bee bd` in its own process writes on the store a SQLite tracker serves: the tracker reads that write in the
    history and wakes its listeners (the issue, the ready queue, the issues depending on it)."""
    import os
    import subprocess

    from tests.conftest import bee_executable

    store = str(tmp_path / "team.db")
    server = tracker_factory(store)

    def bd(*args: str) -> dict[str, Any]:
        done = subprocess.run(
            [str(bee_executable()), "bd", "--store", store, "--actor", "cli@example.com", *args, "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={**os.environ, "BEE_WARM": "0"},
        )
        assert done.returncode == 0, done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    async with tracker_client(server.url, server.token(ACTOR), era="auto") as listener:
        blocker = await _call(listener, "create", title="blocker")
        blocked = await _call(listener, "create", title="blocked", prerequisites=[blocker["id"]])
        async with listener.listen(resource_subscriptions=[issue(blocked["id"]), READY]) as subscription:
            made = await anyio.to_thread.run_sync(lambda: bd("create", "made by bd"))
            await _until_heard(subscription, {READY})
            # bd closes the blocker: the blocked issue, which depends on it, turns ready.
            await anyio.to_thread.run_sync(lambda: bd("close", blocker["id"], "--reason", "done"))
            await _until_heard(subscription, {issue(blocked["id"]), READY})
        ready = await _call(listener, "ready")
        assert {made["id"], blocked["id"]} <= {item["id"] for item in ready["issues"]}
