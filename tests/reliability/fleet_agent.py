"""One agent of the fleet test (tests/reliability/test_fleet.py), in a process of its own: it listens, never polls.

    python -m tests.reliability.fleet_agent URL TOKEN LEASE_SECONDS STALL_PERCENT SEED JOURNAL [POLL_SECONDS]

It opens one ``subscriptions/listen`` stream on the ready queue, then loops: claim the next issue (a lease of
LEASE_SECONDS), "work" a moment, complete it claiming the next in the same call. When nothing is ready it waits for
the stream to say the queue changed, and only then claims again. In STALL_PERCENT of its issues it stalls past its
lease before completing, so its claim runs out: that late write must be refused. It writes what it did to JOURNAL,
one JSON line per event (``call``, ``wake``, ``late``, ``listen``), so the test can read it even after a SIGKILL.
Plain HTTP (httpx), the wire requests the official clients send: a fleet's agents start in well under a second.

With POLL_SECONDS it is instead the loop agents run without listening (tests/perf/bench_fleet.py's comparison):
``ready``, ``claim`` of one of the first issues it lists (a lost race is a ``conflict``), ``complete``; when nothing
is ready, sleep POLL_SECONDS and ask ``ready`` again.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from typing import Any, TextIO

import httpx

from tests.harness.tracker import MODERN_META

READY = "bee://tracker/ready"


class Agent:
    def __init__(self, url: str, token: str, lease: int, stall_percent: int, seed: int, journal: TextIO) -> None:
        self.url, self.lease, self.stall_percent = url, lease, stall_percent
        self.rng = random.Random(seed)
        self.journal = journal
        self.headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": "2026-07-28",
            "Authorization": f"Bearer {token}",
        }
        self.woken = asyncio.Event()
        self.acknowledged = asyncio.Event()
        self.ids = 0

    def note(self, kind: str, **fields: Any) -> None:
        self.journal.write(json.dumps({"kind": kind, "t": time.time(), **fields}) + "\n")
        self.journal.flush()

    async def call(self, http: httpx.AsyncClient, tool: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
        self.ids += 1
        request = {
            "jsonrpc": "2.0",
            "id": self.ids,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": MODERN_META},
        }
        headers = {**self.headers, "Mcp-Method": "tools/call", "Mcp-Name": tool}
        began = time.perf_counter()
        response = await http.post(self.url, content=json.dumps(request), headers=headers)
        while response.status_code == 503:  # shed at the edge: nothing was done; retry when it says
            await asyncio.sleep(float(response.headers.get("retry-after", "1")))
            response = await http.post(self.url, content=json.dumps(request), headers=headers)
        response.raise_for_status()
        result = response.json()["result"]
        seconds = time.perf_counter() - began
        if result.get("isError"):
            self.note("call", tool=tool, error=True, seconds=seconds)
            return True, json.loads(result["content"][0]["text"])
        data = result["structuredContent"]["data"]
        self.note("call", tool=tool, error=False, claimed=data.get("claimed"), seconds=seconds)
        return False, data

    async def listen(self, http: httpx.AsyncClient) -> None:
        """Hold a listen stream on the ready queue, waking the loop on every update; listen again if it drops."""
        request = {
            "jsonrpc": "2.0",
            "id": "listen",
            "method": "subscriptions/listen",
            "params": {"notifications": {"resourceSubscriptions": [READY]}, "_meta": MODERN_META},
        }
        headers = {**self.headers, "Mcp-Method": "subscriptions/listen"}
        while True:
            try:
                async with http.stream("POST", self.url, content=json.dumps(request), headers=headers) as response:
                    refused = "" if response.status_code == 200 else (await response.aread()).decode()[:300]
                    self.note("listen", status=response.status_code, refused=refused)
                    async for line in response.aiter_lines():
                        if "notifications/subscriptions/acknowledged" in line:
                            self.acknowledged.set()
                            self.woken.set()  # a new stream: what changed while none was open is unknown
                        elif "notifications/resources/updated" in line:
                            self.woken.set()
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)  # the stream ended (a replica stopping): listen again, then refetch

    async def run(self) -> None:
        limits = httpx.Limits(max_connections=2)
        async with httpx.AsyncClient(timeout=httpx.Timeout(120.0), limits=limits) as http:
            listening = asyncio.create_task(self.listen(http))
            await self.acknowledged.wait()
            current: str | None = None
            while True:
                if current is None:
                    self.woken.clear()
                    error, data = await self.call(http, "claim", {"lease_seconds": self.lease})
                    if error or not data["claimed"]:
                        await self.woken.wait()
                        self.note("wake")
                        continue
                    current = data["id"]
                current = await self.work(http, current)
            listening.cancel()

    async def poll(self, seconds: float) -> None:
        """The polling loop (see the module docstring)."""
        async with httpx.AsyncClient(timeout=httpx.Timeout(120.0)) as http:
            while True:
                error, data = await self.call(http, "ready", {"limit": 8})
                issues = [] if error else data["issues"]
                if not issues:
                    await asyncio.sleep(seconds)
                    continue
                chosen = self.rng.choice(issues)["id"]
                error, data = await self.call(http, "claim", {"id": chosen, "lease_seconds": self.lease})
                if error or not data["claimed"]:
                    self.note("lost", issue=chosen)
                    continue
                await asyncio.sleep(self.rng.uniform(0.0, 0.02))
                await self.call(http, "complete", {"id": chosen, "summary": "done"})

    async def work(self, http: httpx.AsyncClient, issue_id: str) -> str | None:
        """Work on ``issue_id`` and complete it, claiming the next; the next issue's id, or None."""
        late = self.rng.randrange(100) < self.stall_percent
        await asyncio.sleep(self.lease + 1.5 if late else self.rng.uniform(0.0, 0.02))
        arguments = {"id": issue_id, "summary": "done", "claim_next": True, "lease_seconds": self.lease}
        error, data = await self.call(http, "complete", arguments)
        if late:
            self.note("late", issue=issue_id, refused=error and data["code"] == "conflict", answer=data)
        following = {} if error else data.get("next") or {}
        if not following.get("claimed"):
            self.note("idle")  # nothing more in hand: the loop claims once, then waits to be woken
            return None
        return str(following["id"])


def main() -> None:
    url, token, lease, stall, seed, journal = sys.argv[1:7]
    with open(journal, "a", encoding="utf-8") as out:
        agent = Agent(url, token, int(lease), int(stall), int(seed), out)
        asyncio.run(agent.poll(float(sys.argv[7])) if len(sys.argv) > 7 else agent.run())


if __name__ == "__main__":
    main()
