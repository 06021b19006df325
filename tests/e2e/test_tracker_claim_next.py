"""The fleet's loop over real HTTP with real tokens: agents racing for the next issue each get a different one (on
SQLite, and on PostgreSQL across two tracker replicas), and a claim a killed agent leaves is taken once its lease
runs out."""

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from bee_tracker.store import open_store
from tests.harness.tracker import ToolPoster, TrackerFactory, TrackerProcess
from tests.reliability.test_tracker_reliability import ONE, issues_jsonl

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

AGENTS = 32
ISSUES = 240


def _import(store_url: str, count: int) -> None:
    store = open_store(store_url)
    try:
        store.import_lines(issues_jsonl(count).splitlines())
    finally:
        store.close()


def _replicas(store_url: str, tracker_factory: TrackerFactory, home: Path) -> list[TrackerProcess]:
    """One tracker on SQLite; two processes sharing the PostgreSQL database (each its own pool and port)."""
    count = 2 if store_url.startswith("postgresql") else 1
    return [tracker_factory(store_url, "--claim-ttl", "600", home=home) for _ in range(count)]


async def _drain(agent: ToolPoster) -> list[str]:
    """Claim the next issue until nothing is ready; the ids taken."""
    taken: list[str] = []
    while True:
        error, body = await agent.call("claim", {})
        assert not error, body
        if not body["data"]["claimed"]:
            return taken
        assert body["data"]["lease_seconds"] == 600
        taken.append(body["data"]["id"])


async def test_racing_agents_each_take_a_different_next_issue(
    store_url: str, tracker_factory: TrackerFactory, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    _import(store_url, ISSUES)
    servers = _replicas(store_url, tracker_factory, home)
    agents, clients = [], []
    for n in range(AGENTS):  # one connection and one token each, spread over the replicas
        server = servers[n % len(servers)]
        http = httpx.AsyncClient(timeout=httpx.Timeout(60.0), limits=ONE)
        clients.append(http)
        agents.append(ToolPoster(http, server.url, server.token(f"agent-{n}@example.com")))
    try:
        results = await asyncio.gather(*(_drain(agent) for agent in agents))
    finally:
        for http in clients:
            await http.aclose()
    taken = [issue_id for ids in results for issue_id in ids]
    twice = [issue_id for issue_id, count in Counter(taken).items() if count > 1]
    assert not twice, f"taken twice: {twice[:5]}"
    assert len(taken) == ISSUES
    assert sum(1 for ids in results if ids) > 1  # the agents really raced
    store = open_store(store_url)
    try:
        holders = {claim["id"]: claim["holder"] for claim in store.claims()}
    finally:
        store.close()
    assert holders == {issue_id: f"agent-{n}@example.com" for n, ids in enumerate(results) for issue_id in ids}


#: An agent in a process of its own: it claims the next issue with a one-second lease, says so, then hangs.
_AGENT = """
import json, sys, httpx
url, token = sys.argv[1], sys.argv[2]
request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "claim",
    "arguments": {"lease_seconds": 1}, "_meta": %s}}
headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
    "MCP-Protocol-Version": "2026-07-28", "Authorization": "Bearer " + token, "Mcp-Method": "tools/call",
    "Mcp-Name": "claim"}
answer = httpx.post(url, content=json.dumps(request), headers=headers, timeout=60).json()
print(answer["result"]["structuredContent"]["data"]["id"], flush=True)
sys.stdin.read()
"""


async def test_a_claim_a_killed_agent_left_is_taken_once_its_lease_runs_out(
    store_url: str, tracker_factory: TrackerFactory, tmp_path: Path
) -> None:
    from tests.harness.tracker import MODERN_META

    _import(store_url, 1)
    [server, *_] = _replicas(store_url, tracker_factory, tmp_path / "home")
    with subprocess.Popen(
        [sys.executable, "-c", _AGENT % repr(MODERN_META), server.url, server.token("doomed@example.com")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as agent:
        try:
            assert agent.stdout is not None
            stranded = agent.stdout.readline().strip()
            assert stranded
        finally:
            os.kill(agent.pid, signal.SIGKILL)
            agent.wait(timeout=30)
    async with httpx.AsyncClient(timeout=httpx.Timeout(60.0), limits=ONE) as http:
        rescuer = ToolPoster(http, server.url, server.token("rescuer@example.com"))
        error, body = await rescuer.call("claim", {"id": stranded})
        assert error and body["code"] == "conflict" and "doomed@example.com" in body["error"]  # held until it runs out
        taken = await _next_once_free(rescuer)
    assert (taken["id"], taken["reclaimed_from"]) == (stranded, "doomed@example.com")


async def _next_once_free(agent: ToolPoster) -> dict[str, Any]:
    """Claim the next issue until one is ready, giving up after a minute (the lease is a second)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        error, body = await agent.call("claim", {})
        assert not error, body
        if body["data"]["claimed"]:
            data: dict[str, Any] = body["data"]
            return data
        await asyncio.sleep(0.05)
    raise AssertionError("the stranded claim was never offered again")
