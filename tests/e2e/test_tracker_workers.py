"""`bee tracker serve --workers N`: several processes on one port and one PostgreSQL store, over real HTTP.

Which worker answers is read from `/health` (its pid) on the very connection a client then keeps using.
"""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bee_tracker.auth import mint
from bee_tracker.home import read_key
from tests.conftest import BACKENDS, error_of
from tests.harness.tracker import TrackerProcess

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

BEE = str(Path(sys.executable).parent / "bee")
CLAIMERS = 32
TRIALS = 25


@pytest.fixture(params=[param for param in BACKENDS if param.id == "postgres"])
def pg_url(request: pytest.FixtureRequest) -> str:
    url: str = request.getfixturevalue("postgres_server").create_database()
    return url


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie waiting for its reaper is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def wait_until(predicate: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def worker_pids(port: int, want: int, attempts: int = 200) -> set[int]:
    """The pids behind ``port``, from /health over fresh connections, until ``want`` differ (or attempts run out)."""
    seen: set[int] = set()
    for _ in range(attempts):
        with httpx.Client() as fresh:
            seen.add(fresh.get(f"http://127.0.0.1:{port}/health", timeout=10).json()["pid"])
        if len(seen) >= want:
            break
    return seen


def run_bee(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BEE, *args], capture_output=True, text=True, timeout=120, check=False)


def test_several_workers_on_sqlite_are_refused_with_the_reason(tmp_path: Path) -> None:
    completed = run_bee("tracker", "serve", "--home", str(tmp_path / "home"), "--workers", "2")
    assert completed.returncode == 2
    assert "--workers 2 needs a PostgreSQL store" in completed.stderr
    assert "SQLite lets one process write at a time" in completed.stderr
    assert not (tmp_path / "home").exists()  # nothing half-started


@pytest.mark.parametrize("option", ["--max-in-flight", "--max-connections"])
def test_a_limit_too_small_to_share_among_the_workers_is_refused(tmp_path: Path, option: str) -> None:
    store = "postgresql://nobody@127.0.0.1:1/never-connected"
    completed = run_bee("tracker", "serve", "--store", store, "--workers", "4", option, "3")
    assert completed.returncode == 2
    assert f"{option} 3 cannot be shared by 4 workers: give at least 4" in completed.stderr


async def test_every_worker_answers_and_a_claim_still_has_one_winner(
    pg_url: str, tracker_factory: Callable[..., TrackerProcess], tmp_path: Path
) -> None:
    source = tmp_path / "issues.jsonl"
    source.write_text(
        "".join(
            json.dumps({"id": f"w-{n:03d}", "title": f"task {n}", "status": "open", "issue_type": "task"}) + "\n"
            for n in range(TRIALS)
        )
    )
    home = tmp_path / "home"
    assert run_bee("tracker", "import", "--home", str(home), "--store", pg_url, str(source)).returncode == 0
    server = tracker_factory(pg_url, "--workers", "2", home=home)
    assert len(worker_pids(server.port, want=2)) == 2
    key = read_key(home)
    tokens = [mint(key, f"agent-{n}@example.com") for n in range(CLAIMERS)]

    try:
        await _claim_races(server, tokens)
    except BaseExceptionGroup as group:  # the transport's nested groups hide their cause past ten levels: name it
        raise AssertionError(f"a claimer's session failed: {_leaves(group)}") from group


def _leaves(exc: BaseException) -> list[str]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [f"{exc.__class__.__name__}: {exc}"]


async def _claim_races(server: TrackerProcess, tokens: list[str]) -> None:
    async with AsyncExitStack() as stack:
        clients, served_by = [], []
        for token in tokens:
            # One connection per claimer, kept alive: the worker that answers its /health serves its claims.
            http = await stack.enter_async_context(
                httpx.AsyncClient(
                    headers={"Authorization": f"Bearer {token}"},
                    limits=httpx.Limits(max_connections=1),
                    timeout=60,
                )
            )
            served_by.append((await http.get(f"http://127.0.0.1:{server.port}/health")).json()["pid"])
            # httpx's client, which the SDK's transport (typed for httpx2's) drives the same way.
            transport = streamable_http_client(server.url, http_client=http)  # type: ignore[arg-type]
            clients.append(await stack.enter_async_context(Client(transport, mode="2026-07-28", cache=None)))
        assert len(set(served_by)) == 2, f"every claimer landed on one worker: {served_by}"

        failures = []
        for trial in range(TRIALS):
            results = await asyncio.gather(*(c.call_tool("claim", {"id": f"w-{trial:03d}"}) for c in clients))
            winners = [r.structured_content["data"]["assignee"] for r in results if not r.is_error]
            losers = {error_of(r)["code"] for r in results if r.is_error}
            if len(winners) != 1 or losers != {"conflict"}:
                failures.append((trial, winners, losers))
        assert not failures, failures[:3]


def test_a_dead_worker_is_replaced_and_sigterm_stops_them_all(
    pg_url: str, tracker_factory: Callable[..., TrackerProcess]
) -> None:
    server = tracker_factory(pg_url, "--workers", "2")
    first = worker_pids(server.port, want=2)
    assert len(first) == 2
    victim = min(first)
    os.kill(victim, signal.SIGKILL)
    assert wait_until(lambda: len(worker_pids(server.port, want=2, attempts=20) - {victim}) == 2, timeout=60)
    workers = worker_pids(server.port, want=2)
    assert victim not in workers

    assert server.process is not None
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=30) == 0
    assert wait_until(lambda: not any(alive(pid) for pid in workers), timeout=10)


def test_workers_die_with_their_parent_even_after_sigkill(
    pg_url: str, tracker_factory: Callable[..., TrackerProcess]
) -> None:
    server = tracker_factory(pg_url, "--workers", "2")
    workers = worker_pids(server.port, want=2)
    assert len(workers) == 2
    server.kill9()
    # No worker is left holding the port: each got SIGTERM when its parent died.
    assert wait_until(lambda: not any(alive(pid) for pid in workers), timeout=30)
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{server.port}/health", timeout=5)
