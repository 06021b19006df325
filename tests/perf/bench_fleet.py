"""A fleet's work loop, listening against polling, side by side in one run (not a test; `./dev bench fleet`).

On SQLite (one tracker) and on PostgreSQL (two tracker replicas sharing the database, the agents split between
them), over real HTTP with real tokens, 32 agent processes (tests/reliability/fleet_agent.py) work a backlog behind a
gate issue; the clock starts when a lead completes the gate (every agent is running and waiting by then):

- **claim-next against ready+claim**: BEE_BENCH_FLEET_ISSUES (1,000) issues, all ready once the gate closes. The
  listening agents claim the next and complete claiming the next; the polling agents call ``ready``, claim one of the
  first eight it lists by id (a ``conflict`` is a lost race), complete, and sleep BEE_BENCH_POLL_SECONDS (0.5) when
  nothing is ready. Completed issues per second, lost races, and p50/p99 of the time an agent spends in requests per
  completed issue.
- **requests per completed issue**: the same two loops on a backlog of 16 dependency chains (issue n waits for
  issue n - 16), so that half the agents have no ready work at any time and must wait: every request counted
  (listen streams included), per completed issue (target: listening at most a third of polling).
- **wake latency**: a listener on the ready queue, a writer creating an issue (which is ready at once): the time
  from sending the write to the notification's arrival, on one replica and (PostgreSQL) from a write on the other
  replica (target across two: p50 <= 50 ms, p99 <= 250 ms). Then a claim left to run out (a one-second lease):
  the time from its expiry to the listener's wake, nobody writing (target: a stranded claim free, and agents told,
  within the lease and one second).

Writes tests/perf/reports/fleet.json and prints the verdicts.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from tests.harness.postgres import PostgresServer, binaries, free_port
from tests.harness.tracker import MODERN_META
from tests.perf._report import write_report
from tests.perf.bench_tracker import BEE, ROOT, Server, percentile

AGENTS = 32
ISSUES = int(os.environ.get("BEE_BENCH_FLEET_ISSUES", "1000"))
#: Dependency chains in the second backlog: fewer than the agents, so half of them wait for work at any time (the
#: fleet's usual state, and the one where listening and polling differ).
LANES = 16
LEASE_SECONDS = 30
POLL_SECONDS = float(os.environ.get("BEE_BENCH_POLL_SECONDS", "0.5"))
WAKE_SAMPLES = int(os.environ.get("BEE_BENCH_WAKE_SAMPLES", "200"))
#: Claims left to run out, each timed from its expiry to the listener's wake.
EXPIRY_SAMPLES = int(os.environ.get("BEE_BENCH_EXPIRY_SAMPLES", "5"))
GATE = "f-gate"
READY = "bee://tracker/ready"


def serve(home: Path, store: str) -> Server:
    port = free_port()
    argv = [str(BEE), "tracker", "serve", "--home", str(home), "--store", store, "--port", str(port)]
    return Server([*argv, "--log-level", "warning", "--max-connections", "40"], port)


def backlog(count: int, lanes: int | None) -> list[str]:
    """A gate issue, then ``count`` issues: all waiting for the gate, or in ``lanes`` chains behind it."""
    lines = [json.dumps({"id": GATE, "title": "gate", "status": "open", "priority": 0, "issue_type": "task"})]
    for n in range(count):
        issue_id = f"f-{n:05d}"
        blocker = f"f-{n - lanes:05d}" if lanes and n >= lanes else GATE
        dependency = {"issue_id": issue_id, "depends_on_id": blocker, "type": "blocks"}
        record = {"id": issue_id, "title": f"fleet task {n}", "status": "open", "priority": 2, "issue_type": "task"}
        lines.append(json.dumps({**record, "dependencies": [dependency]}))
    return lines


def _closed(store: str) -> int:
    from bee_tracker.store import open_store

    opened = open_store(store, migrate=False, max_connections=1)
    try:
        with opened.db.read() as tx:
            found = tx.row("SELECT COUNT(*) FROM issues WHERE status = 'closed' AND id <> ?", [GATE])
        return int(found[0]) if found else 0
    finally:
        opened.close()


def _post(url: str, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": MODERN_META},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": tool,
        "Authorization": f"Bearer {token}",
    }
    answer: dict[str, Any] = httpx.post(url, content=json.dumps(request), headers=headers, timeout=60).json()
    return answer


def _token(home: Path, actor: str) -> str:
    from bee_tracker.auth import mint
    from bee_tracker.home import read_key

    return mint(read_key(home), actor)


def _journals(folder: Path) -> list[list[dict[str, Any]]]:
    return [
        [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for path in sorted(folder.glob("*.jsonl"))
    ]


def _per_issue_seconds(journal: list[dict[str, Any]]) -> list[float]:
    """Seconds an agent spent in requests for each issue it completed (its calls since its previous completion)."""
    found, spent = [], 0.0
    for entry in journal:
        if entry["kind"] != "call":
            continue
        spent += entry["seconds"]
        if entry["tool"] == "complete" and not entry["error"]:
            found.append(spent)
            spent = 0.0
    return found


def fleet(store: str, urls: list[str], home: Path, folder: Path, mode: str) -> dict[str, Any]:
    """Run 32 agents in ``mode`` (``listen`` or ``poll``) until the backlog is done; what they did."""
    folder.mkdir()
    agents = []
    for n in range(AGENTS):
        argv = [sys.executable, "-m", "tests.reliability.fleet_agent", urls[n % len(urls)]]
        argv += [_token(home, f"agent-{n}@example.com"), str(LEASE_SECONDS), "0", str(n), str(folder / f"{n}.jsonl")]
        argv += [str(POLL_SECONDS)] if mode == "poll" else []
        agents.append(subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        while sum(1 for path in folder.glob("*.jsonl") if path.stat().st_size) < AGENTS:
            time.sleep(0.1)  # every agent has made its first request: all are running
        lead = _token(home, "lead@example.com")
        began = time.time()
        _post(urls[0], lead, "claim", {"id": GATE})
        _post(urls[0], lead, "complete", {"id": GATE, "summary": "open the gate"})
        while _closed(store) < ISSUES:
            time.sleep(0.05)
        seconds = time.time() - began
    finally:
        for agent in agents:
            agent.send_signal(signal.SIGKILL)
            agent.wait(timeout=30)
    journals = _journals(folder)
    entries = [entry for journal in journals for entry in journal if entry["t"] >= began]
    calls = Counter(entry["tool"] for entry in entries if entry["kind"] == "call")
    # Every stream counts, opened before the gate too: it is a request, and it is what the agent's waiting costs.
    listens = sum(1 for journal in journals for entry in journal if entry["kind"] == "listen")
    per_issue = [value for journal in journals for value in _per_issue_seconds(journal)]
    requests = sum(calls.values()) + listens
    return {
        "mode": mode,
        "seconds": round(seconds, 2),
        "completedPerSecond": round(ISSUES / seconds, 1),
        "requests": requests,
        "requestsPerCompletedIssue": round(requests / ISSUES, 2),
        "calls": dict(calls),
        "listenStreams": listens,
        "lostRaces": sum(1 for entry in entries if entry["kind"] == "lost"),
        "emptyClaims": sum(1 for e in entries if e["kind"] == "call" and e["tool"] == "claim" and not e.get("claimed")),
        "p50RequestSecondsPerIssue": round(percentile(per_issue, 0.5), 4),
        "p99RequestSecondsPerIssue": round(percentile(per_issue, 0.99), 4),
    }


async def _wake(listen_url: str, write_url: str, token: str) -> dict[str, Any]:
    """Create issues on ``write_url`` one at a time; when each one's notification reached a listener on
    ``listen_url``."""
    heard: asyncio.Queue[float] = asyncio.Queue()
    acknowledged = asyncio.Event()
    request = {
        "jsonrpc": "2.0",
        "id": "listen",
        "method": "subscriptions/listen",
        "params": {"notifications": {"resourceSubscriptions": [READY]}, "_meta": MODERN_META},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Authorization": f"Bearer {token}",
    }

    async def listen(http: httpx.AsyncClient) -> None:
        stream_headers = {**headers, "Mcp-Method": "subscriptions/listen"}
        async with http.stream("POST", listen_url, content=json.dumps(request), headers=stream_headers) as response:
            async for line in response.aiter_lines():
                if "notifications/subscriptions/acknowledged" in line:
                    acknowledged.set()
                elif "notifications/resources/updated" in line:
                    heard.put_nowait(time.perf_counter())

    latencies, writes = [], []
    async with httpx.AsyncClient(timeout=60) as http:
        listener = asyncio.create_task(listen(http))
        await asyncio.wait_for(acknowledged.wait(), 30)
        for n in range(WAKE_SAMPLES):
            while not heard.empty():
                heard.get_nowait()
            create = {**request, "id": n, "method": "tools/call"}
            create["params"] = {"name": "create", "arguments": {"title": f"wake {n}"}, "_meta": MODERN_META}
            write_headers = {**headers, "Mcp-Method": "tools/call", "Mcp-Name": "create"}
            began = time.perf_counter()
            response = await http.post(write_url, content=json.dumps(create), headers=write_headers)
            writes.append(time.perf_counter() - began)
            response.raise_for_status()
            latencies.append(await asyncio.wait_for(heard.get(), 10) - began)
            await asyncio.sleep(0.01)
        late = [await _expiry_overshoot(http, write_url, headers, heard, n) for n in range(EXPIRY_SAMPLES)]
        listener.cancel()
    return {
        "samples": WAKE_SAMPLES,
        "p50Ms": round(percentile(latencies, 0.5) * 1000, 2),
        "p99Ms": round(percentile(latencies, 0.99) * 1000, 2),
        "writeRoundTripP50Ms": round(percentile(writes, 0.5) * 1000, 2),
        "expirySamples": EXPIRY_SAMPLES,
        "expiryToWakeMaxMs": round(max(late) * 1000, 2),
        "expiryToWakeP50Ms": round(percentile(late, 0.5) * 1000, 2),
    }


async def _expiry_overshoot(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], heard: asyncio.Queue[float], n: int
) -> float:
    """Claim a fresh issue with a one-second lease and let it run out: how long after its expiry (by the database's
    clock, on this machine's) the listener heard that the ready queue changed."""
    from datetime import datetime

    async def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        body = {"name": tool, "arguments": arguments, "_meta": MODERN_META}
        request = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": body}
        answer = await http.post(
            url, content=json.dumps(request), headers={**headers, "Mcp-Method": "tools/call", "Mcp-Name": tool}
        )
        data: dict[str, Any] = answer.json()["result"]["structuredContent"]["data"]
        return data

    created = await call("create", {"title": f"expiring {n}"})
    claimed = await call("claim", {"id": created["id"], "lease_seconds": 1})
    expires = datetime.fromisoformat(claimed["lease_expires_at"].replace("Z", "+00:00")).timestamp()
    while True:
        heard_at = await asyncio.wait_for(heard.get(), 10)
        wall = time.time() - (time.perf_counter() - heard_at)  # when it was heard, on the wall clock
        if wall >= expires:
            return wall - expires


def run_store(name: str, fresh: Any, home: Path, work: Path, replicas: int) -> dict[str, Any]:
    row: dict[str, Any] = {"store": name, "replicas": replicas}
    for backlog_name, lanes in (("allReady", None), ("chains", LANES)):
        for mode in ("listen", "poll"):
            from bee_tracker.store import open_store

            store = fresh()
            opened = open_store(store)
            try:
                opened.import_lines(backlog(ISSUES, lanes))
            finally:
                opened.close()
            servers = [serve(home, store) for _ in range(replicas)]
            try:
                folder = work / f"{name}-{backlog_name}-{mode}"
                row[f"{backlog_name}-{mode}"] = fleet(store, [s.url for s in servers], home, folder, mode)
            finally:
                for server in servers:
                    server.stop()
            print(f"{name:<11} {backlog_name:<9} {mode:<6} {json.dumps(row[f'{backlog_name}-{mode}'])}", flush=True)
    store = fresh()
    servers = [serve(home, store) for _ in range(replicas)]
    try:
        token = _token(home, "listener@example.com")
        row["wakeOneReplica"] = asyncio.run(_wake(servers[0].url, servers[0].url, token))
        print(f"{name:<11} wake one replica {json.dumps(row['wakeOneReplica'])}", flush=True)
        if replicas > 1:
            row["wakeAcrossReplicas"] = asyncio.run(_wake(servers[0].url, servers[1].url, token))
            print(f"{name:<11} wake across two  {json.dumps(row['wakeAcrossReplicas'])}", flush=True)
    finally:
        for server in servers:
            server.stop()
    listened, polled = row["chains-listen"], row["chains-poll"]
    row["requestsListenVsPoll"] = round(listened["requestsPerCompletedIssue"] / polled["requestsPerCompletedIssue"], 3)
    return row


def run_all() -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bee-bench-fleet-"))
    home = work / "home"
    home.mkdir()
    databases = iter(range(1_000_000))
    # The first server makes the home's key; the agents' tokens are minted from it.
    first = serve(home, str(work / "key.db"))
    first.stop()
    rows = [run_store("sqlite", lambda: str(work / f"tracker-{next(databases)}.db"), home, work, 1)]
    bindir = binaries()
    if bindir is None:
        print("PostgreSQL is not installed: measured on SQLite only", file=sys.stderr)
    else:
        pg = PostgresServer(bindir)
        pg.start()
        try:
            rows.append(run_store("postgresql", pg.create_database, home, work, 2))
        finally:
            pg.stop()
    return {"issues": ISSUES, "agents": AGENTS, "pollSeconds": POLL_SECONDS, "rows": rows}


def main() -> None:
    report = run_all()
    for row in report["rows"]:
        ratio = row["requestsListenVsPoll"]
        print(f"{row['store']}: requests per completed issue, listening / polling = {ratio} (target <= 0.333)")
        wake = row.get("wakeAcrossReplicas") or row["wakeOneReplica"]
        print(f"{row['store']}: wake p50 {wake['p50Ms']} ms, p99 {wake['p99Ms']} ms")
    print(write_report("fleet", report))


if __name__ == "__main__":
    main()
