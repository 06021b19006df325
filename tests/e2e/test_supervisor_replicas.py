"""Two tracker replicas under a real supervisor, behind one address, on a real PostgreSQL.

- 32 claimers spread over both replicas (each request on a new connection, so the kernel hands them to either
  replica): exactly one winner per trial.
- An upgrade, and then SIGHUP, roll the replicas one at a time: every request through the address is served
  throughout.
"""

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx
import pytest
from anyio.abc import TaskStatus

from bee_contracts import version_info
from bee_contracts.installation import ENV_INSTALLED_FILE
from tests.conftest import _pg_missing_reason, error_of
from tests.harness.postgres import PostgresServer, free_port
from tests.harness.supervisor import SupervisorProcess
from tests.harness.tracker import tracker_client

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.skipif(_pg_missing_reason() is not None, reason=str(_pg_missing_reason())),
]

CLAIMERS = 32
TRIALS = int(os.environ.get("BEE_SUPERVISOR_TRIALS", "40"))
BEE = str(Path(sys.executable).parent / "bee")
NO_KEEPALIVE = httpx.Limits(max_keepalive_connections=0)


def describe(exc: BaseException) -> str:
    """What went wrong, down to the errors a client's task group wraps (its message alone names none)."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in exc.exceptions)
    return f"{exc.__class__.__name__}: {exc}"


def replicas_config(home: Path, store: str, port: int, replicas: int = 2) -> str:
    return f"""
[services.tracker]
host = "tracker"
command = ["bee", "tracker", "serve", "--home", "{home}", "--store", "{store}", "--access-log",
           "--fd", "{{listen_fd}}", "--fd", "{{check_fd}}"]
listen = "127.0.0.1:{port}"
replicas = {replicas}

[services.tracker.restart]
stop_timeout = 20
"""


def prepare_store(tmp_path: Path, store: str, issues: int) -> Path:
    home = tmp_path / "home"
    source = tmp_path / "issues.jsonl"
    source.write_text(
        "".join(
            json.dumps(
                {"id": f"s-{n:05d}", "title": f"task {n}", "status": "open", "priority": 2, "issue_type": "task"}
            )
            + "\n"
            for n in range(issues)
        )
    )
    subprocess.run([BEE, "tracker", "init", "--home", str(home)], check=True, capture_output=True, timeout=120)
    subprocess.run(
        [BEE, "tracker", "import", "--home", str(home), "--store", store, str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return home


def tokens(home: Path, count: int) -> list[str]:
    from bee_tracker.auth import mint
    from bee_tracker.home import read_key

    secret = read_key(home)
    return [mint(secret, f"agent-{n}@example.com") for n in range(count)]


async def hold_client(url: str, token: str, *, task_status: TaskStatus[Any] = anyio.TASK_STATUS_IGNORED) -> None:
    async with tracker_client(url, token, "2026-07-28", limits=NO_KEEPALIVE) as client:
        task_status.started(client)
        await anyio.sleep_forever()


def both_running(supervisor: SupervisorProcess) -> list[dict[str, Any]] | Literal[False]:
    replicas = supervisor.replicas()
    return len(replicas) == 2 and all(r["state"] == "running" for r in replicas) and replicas


def served_posts(supervisor: SupervisorProcess, index: int) -> int:
    return supervisor.log(f"tracker-{index}.log").count('"POST /mcp HTTP/1.1" 200')


@pytest.mark.timeout(900)
async def test_32_claimers_over_two_replicas_have_exactly_one_winner_per_trial(
    supervisor_factory: Callable[..., SupervisorProcess], postgres_server: PostgresServer, tmp_path: Path
) -> None:
    store = postgres_server.create_database()
    home = prepare_store(tmp_path, store, TRIALS)
    port = free_port()
    supervisor = supervisor_factory(replicas_config(home, store, port))
    await anyio.to_thread.run_sync(lambda: supervisor.wait_for(both_running, what="two running replicas"))
    url = f"http://127.0.0.1:{port}/mcp"
    failures = []
    async with anyio.create_task_group() as tg:
        clients = [await tg.start(hold_client, url, token) for token in tokens(home, CLAIMERS)]
        for trial in range(TRIALS):
            issue_id = f"s-{trial:05d}"
            outcomes: dict[int, str | dict[str, Any] | None] = {}

            async def claim(
                n: int,
                client: Any,
                issue_id: str = issue_id,
                outcomes: dict[int, str | dict[str, Any] | None] = outcomes,
            ) -> None:
                result = await client.call_tool("claim", {"id": issue_id})
                outcomes[n] = error_of(result)["code"] if result.is_error else result.structured_content

            async with anyio.create_task_group() as claims:
                for n, client in enumerate(clients):
                    claims.start_soon(claim, n, client)
            winners = [body["data"]["assignee"] for body in outcomes.values() if isinstance(body, dict)]
            losers = [code for code in outcomes.values() if isinstance(code, str)]
            if len(winners) != 1 or set(losers) != {"conflict"}:
                failures.append((issue_id, winners, losers))
        tg.cancel_scope.cancel()
    assert not failures, failures[:5]
    # Both replicas served claims through the one address.
    assert served_posts(supervisor, 0) > 0 and served_posts(supervisor, 1) > 0
    assert served_posts(supervisor, 0) + served_posts(supervisor, 1) >= CLAIMERS * TRIALS


@pytest.mark.timeout(600)
async def test_an_upgrade_and_sighup_roll_the_replicas_while_the_address_keeps_serving(
    supervisor_factory: Callable[..., SupervisorProcess], postgres_server: PostgresServer, tmp_path: Path
) -> None:
    import signal

    store = postgres_server.create_database()
    home = prepare_store(tmp_path, store, 5)
    port = free_port()
    installed = tmp_path / "installed.json"
    installed.write_text(json.dumps(version_info()))
    supervisor = supervisor_factory(replicas_config(home, store, port), env={ENV_INSTALLED_FILE: str(installed)})
    first = await anyio.to_thread.run_sync(lambda: supervisor.wait_for(both_running, what="two running replicas"))
    [token] = tokens(home, 1)
    answered: list[str] = []
    failed: list[str] = []

    async def keep_asking() -> None:
        async with httpx.AsyncClient(limits=NO_KEEPALIVE, timeout=30, trust_env=False) as http:
            while True:
                try:
                    response = await http.get(f"http://127.0.0.1:{port}/health")
                    (answered if response.status_code == 200 else failed).append(f"health {response.status_code}")
                    async with tracker_client(
                        f"http://127.0.0.1:{port}/mcp", token, "2026-07-28", limits=NO_KEEPALIVE
                    ) as client:
                        result = await client.call_tool("ready", {})
                    (failed if result.is_error else answered).append("ready")
                except Exception as exc:  # a refused or broken connection is exactly what must not happen
                    failed.append(describe(exc))
                await anyio.sleep(0.02)

    def rolled(before: list[dict[str, Any]]) -> Callable[[SupervisorProcess], Any]:
        def check(s: SupervisorProcess) -> Any:
            now = both_running(s)
            return now and not {r["pid"] for r in now} & {r["pid"] for r in before} and now

        return check

    async def answered_more(calls: int) -> None:
        # Calls answered, counted rather than timed: how many fit in a roll depends on the machine's pace.
        goal = answered.count("ready") + calls
        with anyio.fail_after(120):
            while answered.count("ready") < goal:
                await anyio.sleep(0.05)

    async with anyio.create_task_group() as tg:
        tg.start_soon(keep_asking)
        await answered_more(3)
        # An upgrade that keeps the version triple (a reinstall): the same trackers pass the contract check.
        installed.write_text(json.dumps({**version_info(), "build": 2}))
        second = await anyio.to_thread.run_sync(
            lambda: supervisor.wait_for(rolled(first), timeout=180, what="both replicas replaced after the upgrade")
        )
        await answered_more(3)
        supervisor.signal(signal.SIGHUP)
        await anyio.to_thread.run_sync(
            lambda: supervisor.wait_for(rolled(second), timeout=180, what="both replicas replaced after SIGHUP")
        )
        await answered_more(3)
        tg.cancel_scope.cancel()
    assert not failed, failed[:5]
    assert [r["restarts"] for r in supervisor.replicas()] == [2, 2]
    log = supervisor.log("supervisor.log")
    assert "the installed Bee changed" in log and "SIGHUP: restarting every service" in log
