"""The fleet's work loop, side by side in one run (not a test; `./dev bench claim_next`): claim-next races and
throughput against claiming a known id, and how soon a claim a killed agent left is free.

On SQLite (one tracker) and on PostgreSQL (two tracker replicas sharing the database, the agents split between
them), each over real HTTP with real tokens, 32 agents in 4 load processes, every claim with a lease as a fleet's
are (``--claim-ttl 600``; ``BEE_BENCH_SERVE`` changes the servers' options):

- **claim-next**: 10,000 ready issues; every agent calls ``claim`` without an id until nothing is ready. Every
  successful claim is a racing trial: a duplicate is an issue two agents both got (target: 0). Claims per second and
  p50/p99 over the whole drain.
- **claim of a known id**: 10,000 fresh issues on a fresh store; each agent claims its own share of them by id (no
  contention: the most a claim can cost). Claims per second and p50/p99, and claim-next's throughput as a ratio of
  this one (target: at least 0.8).
- **a stranded claim**: an agent process claims an issue with a two-second lease and is SIGKILLed; another agent
  (on the other replica, on PostgreSQL) claims it every 20 ms until it gets it. The time from the first claim's
  answer to the second's, over several trials (target: at most the lease plus one second).

Writes tests/perf/reports/claim_next.json and prints the verdicts.
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
from tests.perf._report import verdict, write_report
from tests.perf.bench_tracker import BEE, ROOT, Server, percentile

ISSUES = int(os.environ.get("BEE_BENCH_CLAIMS", "10000"))
AGENTS = 32
LOAD_PROCESSES = 4
LEASE_SECONDS = 2
STRANDED_TRIALS = int(os.environ.get("BEE_BENCH_STRANDED_TRIALS", "5"))
#: What every tracker serves with: a fleet's leases (every claim has one, as --claim-ttl gives it).
EXTRA = os.environ.get("BEE_BENCH_SERVE", "--claim-ttl 600").split()
HEADERS = {"Accept": "application/json, text/event-stream"}


def serve(home: Path, store: str) -> Server:
    port = free_port()
    argv = [str(BEE), "tracker", "serve", "--home", str(home), "--store", store, "--port", str(port)]
    return Server([*argv, "--log-level", "warning", "--max-connections", "40", *EXTRA], port)


def seed(store: str, count: int) -> None:
    from bee_tracker.store import open_store

    opened = open_store(store)
    try:
        opened.import_lines(
            json.dumps({"id": f"b-{n:05d}", "title": f"task {n}", "status": "open", "priority": n % 5})
            for n in range(count)
        )
    finally:
        opened.close()


def tokens_for(home: Path, count: int) -> list[str]:
    from bee_tracker.auth import mint
    from bee_tracker.home import ensure_key

    key, _ = ensure_key(home)
    return [mint(key, f"agent-{n}@example.com") for n in range(count)]


def _body(arguments: dict[str, Any], n: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "claim", "arguments": arguments}}


async def _call(http: httpx.AsyncClient, url: str, token: str, arguments: dict[str, Any], n: int) -> dict[str, Any]:
    response = await http.post(url, json=_body(arguments, n), headers={**HEADERS, "Authorization": f"Bearer {token}"})
    result: dict[str, Any] = response.json()["result"]
    if result.get("isError"):
        return {"error": json.loads(result["content"][0]["text"])["code"]}
    data: dict[str, Any] = result["structuredContent"]["data"]
    return data


def _worker(spec: dict[str, Any]) -> None:
    """Runs in a load process: its agents claim (the next, or their own known ids) until done; prints JSON."""

    async def agent(http: httpx.AsyncClient, n: int, out: dict[str, Any]) -> None:
        url, token = spec["urls"][n % len(spec["urls"])], spec["tokens"][n]
        # claim-next until nothing is ready; or this agent's share of the ids, one by one
        known = (f"b-{k:05d}" for k in range(n, spec["issues"], spec["agents"]))
        for i in range(spec["issues"] + 1):
            arguments = {}
            if spec["mode"] == "known":
                if (issue := next(known, None)) is None:
                    return
                arguments = {"id": issue}
            started = time.perf_counter()
            answer = await _call(http, url, token, arguments, i)
            out["latencies"].append(time.perf_counter() - started)
            if "error" in answer:
                out["errors"][answer["error"]] = out["errors"].get(answer["error"], 0) + 1
            elif not answer["claimed"]:
                return
            else:
                out["claims"].append(answer["id"])

    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {"claims": [], "latencies": [], "errors": {}}
        limits = httpx.Limits(max_connections=len(spec["mine"]) + 2)
        async with httpx.AsyncClient(timeout=120, limits=limits) as http:
            out["start"] = time.time()
            await asyncio.gather(*(agent(http, n, out) for n in spec["mine"]))
            out["end"] = time.time()
        return out

    print(json.dumps(asyncio.run(run())))


def drain(urls: list[str], tokens: list[str], mode: str) -> dict[str, Any]:
    """All agents in LOAD_PROCESSES processes, claiming in ``mode`` (``next`` or ``known``) until done."""
    children = []
    for p in range(LOAD_PROCESSES):
        spec = {
            "urls": urls,
            "tokens": tokens,
            "mode": mode,
            "issues": ISSUES,
            "agents": AGENTS,
            "mine": list(range(p, AGENTS, LOAD_PROCESSES)),
        }
        children.append(
            subprocess.Popen(
                [sys.executable, "-m", "tests.perf.bench_claim_next", "--worker", json.dumps(spec)],
                stdout=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            )
        )
    results = [json.loads(child.communicate(timeout=3600)[0]) for child in children]
    claims = [issue for result in results for issue in result["claims"]]
    latencies = [seconds for result in results for seconds in result["latencies"]]
    errors: Counter[str] = Counter()
    for result in results:
        errors.update(result["errors"])
    elapsed = max(r["end"] for r in results) - min(r["start"] for r in results)
    counted = Counter(claims)
    return {
        "mode": mode,
        "claims": len(claims),
        "distinct": len(counted),
        "duplicates": sum(count - 1 for count in counted.values()),
        "claimsPerSecond": len(claims) / elapsed,
        "p50Ms": percentile(latencies, 0.50) * 1000,
        "p99Ms": percentile(latencies, 0.99) * 1000,
        "errors": dict(errors),
    }


#: An agent in a process of its own: claims an issue with a lease, prints when the answer came, then hangs.
_DOOMED = """
import json, sys, time, httpx
url, token, issue, lease = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "claim", "arguments": {"id": issue, "lease_seconds": lease}}}
headers = {"Accept": "application/json, text/event-stream", "Authorization": "Bearer " + token}
answer = httpx.post(url, json=body, headers=headers, timeout=60).json()["result"]
assert not answer.get("isError"), answer
print(time.time(), flush=True)
sys.stdin.read()
"""


async def _rescue(url: str, token: str, issue: str) -> tuple[float, int]:
    """Claim ``issue`` every 20 ms until it is ours: when, and after how many refusals."""
    refused = 0
    async with httpx.AsyncClient(timeout=60) as http:
        while True:
            answer = await _call(http, url, token, {"id": issue}, refused)
            if "error" not in answer:
                return time.time(), refused
            refused += 1
            await asyncio.sleep(0.02)


def stranded(urls: list[str], tokens: list[str]) -> dict[str, Any]:
    """A claim left by a SIGKILLed agent, taken by another agent (on the other replica where there are two)."""
    waits = []
    for trial in range(STRANDED_TRIALS):
        issue = f"b-{trial:05d}"
        with subprocess.Popen(
            [sys.executable, "-c", _DOOMED, urls[0], tokens[0], issue, str(LEASE_SECONDS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        ) as doomed:
            assert doomed.stdout is not None
            granted = float(doomed.stdout.readline())
            os.kill(doomed.pid, signal.SIGKILL)
            doomed.wait(timeout=30)
        freed, refused = asyncio.run(_rescue(urls[-1], tokens[1], issue))
        waits.append({"secondsUntilFree": freed - granted, "refusedMeanwhile": refused})
    worst = max(wait["secondsUntilFree"] for wait in waits)
    return {
        "leaseSeconds": LEASE_SECONDS,
        "trials": waits,
        "worstSecondsUntilFree": worst,
        "withinLeasePlusOneSecond": worst <= LEASE_SECONDS + 1,
    }


def run_store(name: str, fresh: Any, home: Path, replicas: int) -> dict[str, Any]:
    """The three measurements on one kind of store (``fresh()`` makes an empty one)."""
    tokens = tokens_for(home, AGENTS)
    row: dict[str, Any] = {"store": name, "replicas": replicas}
    for mode in ("next", "known"):
        url = fresh()
        seed(url, ISSUES)
        servers = [serve(home, url) for _ in range(replicas)]
        try:
            row[mode] = drain([s.url for s in servers], tokens, mode)
        finally:
            for server in servers:
                server.stop()
        print(f"{name:<11} {mode:<5} {json.dumps(row[mode])}", flush=True)
    url = fresh()
    seed(url, STRANDED_TRIALS)
    servers = [serve(home, url) for _ in range(replicas)]
    try:
        row["stranded"] = stranded([s.url for s in servers], tokens)
    finally:
        for server in servers:
            server.stop()
    print(f"{name:<11} stranded {json.dumps(row['stranded'])}", flush=True)
    row["nextVsKnown"] = row["next"]["claimsPerSecond"] / row["known"]["claimsPerSecond"]
    return row


def run_all() -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bee-bench-claim-next-"))
    home = work / "home"
    databases = iter(range(1_000_000))
    rows = [run_store("sqlite", lambda: str(work / f"tracker-{next(databases)}.db"), home, 1)]
    bindir = binaries()
    if bindir is None:
        print("PostgreSQL is not installed: measured on SQLite only", file=sys.stderr)
        return {"issues": ISSUES, "agents": AGENTS, "rows": rows}
    pg = PostgresServer(bindir)
    pg.start()
    try:
        rows.append(run_store("postgresql", pg.create_database, home, 2))
    finally:
        pg.stop()
    return {"issues": ISSUES, "agents": AGENTS, "rows": rows}


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        _worker(json.loads(sys.argv[2]))
        return
    report = run_all()
    summary = {}
    for row in report["rows"]:
        store = row["store"]
        summary[f"{store}_duplicates"] = row["next"]["duplicates"]
        summary[f"{store}_next_vs_known"] = verdict(row["nextVsKnown"], 0.8, higher_is_better=True)
        summary[f"{store}_stranded_worst_seconds"] = round(row["stranded"]["worstSecondsUntilFree"], 3)
    report["summary"] = summary
    path = write_report("claim_next", report)
    print(json.dumps(summary, indent=2))
    print(f"report: {path}")


if __name__ == "__main__":
    main()
