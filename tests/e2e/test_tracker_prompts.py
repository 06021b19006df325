"""The tracker's session-start prompt over real HTTP with real tokens: listed and got by the official Python client
(in both protocol eras) and by the pinned TypeScript SDK client, named by the server's instructions, for the token's
actor; the same text `bee bd prime` prints on the local store and over HTTP (one function makes it); bad names and
arguments refused with what to send, the host serving on."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from bee_tracker.store import SqlStore, open_store
from tests.harness.node import missing_reason
from tests.harness.tracker import TrackerProcess, tracker_client
from tests.tracker.bd.run import bd
from tests.tracker.calls import ALICE, BOB, call, new

pytestmark = pytest.mark.e2e


@pytest.fixture
def shared(store_url: str) -> Iterator[SqlStore]:
    """The store the tracker serves, open beside it: ALICE holds a leased claim and an open-ended one, BOB handed
    one off to whoever comes next and holds another, and two issues are ready."""
    store = open_store(store_url)
    leased, open_ended = new(store, "Leased", priority=1), new(store, "Open ended", priority=1)
    call(store, "claim", ALICE, id=leased, lease_seconds=3600)
    call(store, "claim", ALICE, id=open_ended)
    passed_on = new(store, "Passed on", priority=0)
    call(store, "claim", BOB, id=passed_on)
    call(store, "handoff", BOB, id=passed_on, done="the parser", next="its tests", release=True)
    call(store, "claim", BOB, id=new(store, "Bob's own", priority=0))
    new(store, "Later", priority=3)
    yield store
    store.close()


def _text(result: Any) -> str:
    (message,) = result.messages
    assert message.role == "user" and message.content.type == "text"
    text: str = message.content.text
    return text


def test_the_python_client_lists_and_gets_session_start_for_the_tokens_actor(
    store_url: str, shared: SqlStore, tracker_factory: Callable[..., TrackerProcess]
) -> None:
    server = tracker_factory(store_url)

    async def session(era: str) -> tuple[Any, str, str, str | None]:
        async with tracker_client(server.url, server.token(ALICE), era=era) as client:
            listed = await client.list_prompts()
            got = await client.get_prompt("session_start")
            three = await client.get_prompt("session_start", {"ready": "1"})
            return listed, _text(got), _text(three), client.instructions

    for era in ("legacy", "2026-07-28"):
        listed, text, one, instructions = anyio.run(session, era)
        (prompt,) = listed.prompts
        assert (prompt.name, prompt.title) == ("session_start", "Start a session")
        assert [(a.name, a.required) for a in prompt.arguments] == [("ready", False)]
        assert text.startswith(f"## Your session ({ALICE})\n")
        assert "Leased (task): lease until " in text and "Open ended (task): no lease" in text
        assert "### Ready for you (2 of 2 ready)" in text and "Bob's own" not in text
        assert f"from {BOB} at " in text and "Done: the parser; Next: its tests" in text
        assert "### Ready for you (1 of 2 ready)" in one
        if era == "legacy":  # the initialize result carries them
            assert instructions is not None and "session_start" in instructions
    # One function makes it: `bee bd prime` prints the same text, locally as ALICE and over HTTP as her token.
    local = bd("--actor", ALICE, "prime", store=store_url)
    remote = bd("--url", server.url, "prime", env={"BEE_TRACKER_TOKEN": server.token(ALICE)})
    assert local.stdout.endswith("\n" + text + "\n") and remote.stdout.endswith("\n" + text + "\n")
    assert f"Tracker: the tracker at {server.url}" in remote.stdout


def test_bad_names_and_arguments_are_refused_and_the_host_serves_on(
    store_url: str, shared: SqlStore, tracker_factory: Callable[..., TrackerProcess]
) -> None:
    from mcp.shared.exceptions import MCPError

    server = tracker_factory(store_url)

    async def refused(name: str, arguments: dict[str, str]) -> str:
        async with tracker_client(server.url, server.token(ALICE)) as client:
            with pytest.raises(MCPError) as caught:
                await client.get_prompt(name, arguments)
            assert caught.value.error.code == -32602
            assert not (await client.call_tool("ready", {})).is_error  # serving on
            return caught.value.error.message

    assert "no prompt 'frobnicate'; see prompts/list" in anyio.run(refused, "frobnicate", {})
    for value in ("0", "21", "five", "-1", "1e3", "x" * 5000):
        message = anyio.run(refused, "session_start", {"ready": value})
        assert "ready must be a whole number from 1 to 20" in message and len(message) < 200
    assert "takes no argument 'actor'" in anyio.run(refused, "session_start", {"actor": BOB})


@pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason()))
def test_the_typescript_client_lists_and_gets_it_as_the_python_client_does(
    store_url: str, shared: SqlStore, tracker_factory: Callable[..., TrackerProcess], tmp_path: Path
) -> None:
    from tests.harness.node import http_server, ts_client

    server = tracker_factory(store_url)
    seen = ts_client(
        http_server(server.url, server.token(ALICE)),
        [],
        list_tools=False,
        prompts=[("session_start", {}), ("session_start", {"ready": "many"})],
    )
    assert "session_start" in seen["instructions"]
    assert [prompt["name"] for prompt in seen["promptList"]] == ["session_start"]
    assert seen["promptList"][0]["arguments"] == [
        {"name": "ready", "description": "How many ready issues to list, 1 to 20 (default 5).", "required": False}
    ]
    got, bad = seen["prompts"]
    text = got["result"]["messages"][0]["content"]["text"]
    local = bd("--actor", ALICE, "prime", store=store_url)
    assert local.stdout.endswith("\n" + text + "\n")
    assert bad["thrown"]["code"] == -32602 and "ready must be a whole number" in bad["thrown"]["message"]
