"""Tracker benchmark over real HTTP with real JWTs, side by side in one run (not a test; `./dev bench tracker`).

Throughput and p50/p99 latency of ready, get, claim and add_note at 1, 8 and 32 concurrent clients, against a
no-op tool on the same stack, on SQLite, on PostgreSQL with one replica and with two replicas sharing the database.
Writes tests/perf/reports/tracker.json and prints the ratios.

The load generator runs on the same machine as the servers (2 cores here), so absolute numbers include its cost.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from tests.harness.postgres import PostgresServer, binaries, free_port
from tests.perf._report import write_report

ROOT = Path(__file__).resolve().parents[2]

BEE = Path(sys.executable).parent / "bee"
SECONDS = float(os.environ.get("BEE_BENCH_SECONDS", "4"))
CONCURRENCY = (1, 8, 32)
OPERATIONS = ("ready", "get", "claim", "add_note")
POOL = 60_000  # issues imported up front, so claims never run out


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Server:
    def __init__(self, argv: list[str], port: int, env: dict[str, str] | None = None) -> None:
        self.port = port
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.post(f"http://127.0.0.1:{port}/mcp", timeout=1)
                return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError(f"{argv} did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def tracker(home: Path, store: str) -> Server:
    port = free_port()
    return Server(
        [
            str(BEE),
            "tracker",
            "serve",
            "--home",
            str(home),
            "--store",
            store,
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--max-connections",
            "40",
        ],
        port,
    )


#: Client processes per measurement: one asyncio process cannot drive 32 concurrent httpx clients without
#: becoming the bottleneck itself (measured: 146 ops/s from one process against 357 from four, same server).
LOAD_PROCESSES = 4
#: Where the next claim measurement starts in the imported pool (advanced after each claim cell).
_claims = {"base": 1000}


def _worker_process(
    urls: list[str],
    tokens: list[str],
    operation: str,
    clients: int,
    first: int,
    stride: int,
    claim_base: int,
    total_clients: int,
) -> None:
    """Runs in a child process: ``clients`` concurrent callers; prints the latencies and error count as JSON."""

    async def run() -> tuple[list[float], dict[str, int], int]:
        latencies: list[float] = []
        errors: dict[str, int] = {}
        highest = [0]
        stop_at = time.perf_counter() + SECONDS
        limits = httpx.Limits(max_connections=clients + 2, max_keepalive_connections=clients + 2)
        async with httpx.AsyncClient(timeout=60, limits=limits) as http:

            async def worker(k: int) -> None:
                n = first + k * stride  # this caller's global number
                url = urls[n % len(urls)]
                headers = {
                    "Authorization": f"Bearer {tokens[n % len(tokens)]}",
                    "Accept": "application/json, text/event-stream",
                }
                i = 0
                while time.perf_counter() < stop_at:
                    body = {
                        "jsonrpc": "2.0",
                        "id": i,
                        "method": "tools/call",
                        "params": {
                            "name": operation,
                            "arguments": arguments(operation, n, i, claim_base, total_clients),
                        },
                    }
                    started = time.perf_counter()
                    response = await http.post(url, json=body, headers=headers)
                    latencies.append(time.perf_counter() - started)
                    if response.status_code != 200:
                        errors[f"http {response.status_code}"] = errors.get(f"http {response.status_code}", 0) + 1
                    elif (result := response.json()["result"]).get("isError"):
                        code = json.loads(result["content"][0]["text"])["code"]
                        errors[code] = errors.get(code, 0) + 1
                    highest[0] = max(highest[0], i)
                    i += 1

            await asyncio.gather(*(worker(k) for k in range(clients)))
        return latencies, errors, highest[0]

    latencies, errors, highest = asyncio.run(run())
    print(json.dumps({"latencies": latencies, "errors": errors, "highestCall": highest}))


def measure(urls: list[str], tokens: list[str], operation: str, clients: int) -> dict[str, Any]:
    """``clients`` callers spread over up to LOAD_PROCESSES processes, calling one tool in a loop for SECONDS."""
    processes = min(clients, LOAD_PROCESSES)
    spec = json.dumps(
        {"urls": urls, "tokens": tokens, "operation": operation, "claim_base": _claims["base"], "clients": clients}
    )
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.perf.bench_tracker",
                "--worker",
                spec,
                str(len(range(p, clients, processes))),
                str(p),
                str(processes),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,  # where `-m tests.perf.…` finds the tests package
        )
        for p in range(processes)
    ]
    latencies: list[float] = []
    errors: dict[str, int] = {}
    highest = 0
    for child in children:
        out, _ = child.communicate(timeout=SECONDS + 120)
        result = json.loads(out)
        latencies += result["latencies"]
        for code, count in result["errors"].items():
            errors[code] = errors.get(code, 0) + count
        highest = max(highest, result["highestCall"])
    if operation == "claim":
        _claims["base"] += clients * (highest + 1)  # the next cell claims issues nobody has claimed yet
    return {
        "clients": clients,
        "opsPerSecond": len(latencies) / SECONDS,
        "p50Ms": percentile(latencies, 0.50) * 1000,
        "p99Ms": percentile(latencies, 0.99) * 1000,
        "errors": errors,
    }


def arguments(operation: str, n: int, i: int, claim_base: int, clients: int) -> dict[str, Any]:
    if operation == "ready":
        return {"limit": 20}
    if operation == "get":
        return {"id": f"b-{(n * 7919 + i * 104729) % 1000:05d}"}
    if operation == "claim":
        # Caller n of `clients` takes issues n, n + clients, n + 2 * clients, … after the base: no two callers (or
        # cells) ever claim the same one.
        return {"id": f"b-{claim_base + n + clients * i:05d}"}
    if operation == "add_note":
        return {"id": f"b-{(n * 31 + i) % 1000:05d}", "text": f"note {n} {i}"}
    return {}


def seed(home: Path, store: str) -> None:
    lines = "".join(
        json.dumps(
            {
                "id": f"b-{n:05d}",
                "title": f"benchmark task {n}",
                "status": "open",
                "priority": n % 5,
                "issue_type": "task",
                "labels": ["bench"],
            }
        )
        + "\n"
        for n in range(POOL)
    )
    source = home / "seed.jsonl"
    home.mkdir(parents=True, exist_ok=True)
    source.write_text(lines)
    subprocess.run(
        [str(BEE), "tracker", "import", "--home", str(home), "--store", store, str(source)],
        check=True,
        capture_output=True,
    )


def run_config(name: str, urls: list[str], tokens: list[str], operations: tuple[str, ...]) -> list[dict[str, Any]]:
    rows = []
    for operation in operations:
        for clients in CONCURRENCY:
            row = measure(urls, tokens, operation, clients)
            row.update(config=name, operation=operation)
            print(
                f"{name:<14} {operation:<9} {clients:>3} clients  {row['opsPerSecond']:8.0f} ops/s  "
                f"p50 {row['p50Ms']:6.1f} ms  p99 {row['p99Ms']:6.1f} ms  errors {row['errors'] or 'none'}",
                flush=True,
            )
            rows.append(row)
    return rows


def tokens_for(home: Path, count: int = 32) -> list[str]:
    # `token` never creates a key: the home gets one from `init` (idempotent; a server started later reuses it).
    subprocess.run([str(BEE), "tracker", "init", "--home", str(home)], check=True, capture_output=True)
    return [
        subprocess.run(
            [str(BEE), "tracker", "token", "--home", str(home), "--actor", f"bench-{n}@example.com"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        for n in range(count)
    ]


def run_all() -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bee-bench-tracker-"))
    rows: list[dict[str, Any]] = []

    noop_home = work / "noop"
    tokens = tokens_for(noop_home)
    secret = (noop_home / "signing-key").read_text().strip()
    port = free_port()
    noop = Server([sys.executable, str(Path(__file__).parent / "noop_tracker.py"), str(port), secret], port)
    try:
        rows += run_config("noop", [noop.url], tokens, ("noop",))
    finally:
        noop.stop()

    sqlite_home = work / "sqlite"
    seed(sqlite_home, str(sqlite_home / "tracker.db"))
    tokens = tokens_for(sqlite_home)
    server = tracker(sqlite_home, str(sqlite_home / "tracker.db"))
    try:
        rows += run_config("sqlite", [server.url], tokens, OPERATIONS)
    finally:
        server.stop()

    bindir = binaries()
    if bindir is not None:
        pg = PostgresServer(bindir)
        pg.start()
        try:
            for replicas in (1, 2):
                url = pg.create_database()
                home = work / f"pg{replicas}"
                seed(home, url)
                tokens = tokens_for(home)
                servers = [tracker(home, url) for _ in range(replicas)]
                try:
                    rows += run_config(f"postgres-{replicas}", [s.url for s in servers], tokens, OPERATIONS)
                finally:
                    for s in servers:
                        s.stop()
        finally:
            pg.stop()
    return {"secondsPerCell": SECONDS, "rows": rows}


def summarize(report: dict[str, Any]) -> dict[str, Any]:
    rows = report["rows"]

    def cell(config: str, operation: str, clients: int) -> dict[str, Any] | None:
        return next(
            (r for r in rows if r["config"] == config and r["operation"] == operation and r["clients"] == clients), None
        )

    summary: dict[str, Any] = {}
    noop32 = cell("noop", "noop", 32)
    for operation in OPERATIONS:
        row = cell("sqlite", operation, 32)
        if row and noop32:
            summary[f"sqlite_{operation}_vs_noop_32"] = row["opsPerSecond"] / noop32["opsPerSecond"]
        one, two = cell("postgres-1", operation, 32), cell("postgres-2", operation, 32)
        if one and two:
            summary[f"postgres_two_replicas_vs_one_{operation}_32"] = two["opsPerSecond"] / one["opsPerSecond"]
    for operation in ("ready", "get"):
        row = cell("sqlite", operation, 32)
        if row:
            summary[f"sqlite_{operation}_p99_ms_32"] = row["p99Ms"]
    return summary


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        spec = json.loads(sys.argv[2])
        _worker_process(
            spec["urls"],
            spec["tokens"],
            spec["operation"],
            int(sys.argv[3]),
            int(sys.argv[4]),
            int(sys.argv[5]),
            spec["claim_base"],
            spec["clients"],
        )
        return
    report = run_all()
    report["summary"] = summarize(report)
    path = write_report("tracker", report)
    print(json.dumps(report["summary"], indent=2))
    print(f"report: {path}")


if __name__ == "__main__":
    main()
