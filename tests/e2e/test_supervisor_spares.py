"""Spares: a real tracker under `bee supervise`, and real warm hosts, replaced by a process started ahead.

Each promise is provoked with real processes: a replica killed is replaced by the spare (the log says so, the new
pid is the spare's, and the next spare is started); a spare that dies while waiting is started again; an upgrade
discards the spare and no process of the installation before serves; `spares = false` and `BEE_WARM_SPARES=0` keep
none. Waits poll the published status; nothing asserts on time (tests/perf/bench_supervisor.py and bench_warm.py
measure it).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from bee_contracts import version_info
from bee_contracts.installation import ENV_INSTALLED_FILE
from tests.conftest import bee_executable, stop_warm, warm_env
from tests.harness import warm
from tests.harness.editor import serve, session
from tests.harness.postgres import free_port
from tests.harness.supervisor import SupervisorProcess, alive, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


def tracker(home: Path, port: int, extra: str = "") -> str:
    return f"""
[services.tracker]
host = "tracker"
command = ["bee", "tracker", "serve", "--home", "{home}", "--fd", "{{listen_fd}}", "--fd", "{{check_fd}}"]
listen = "127.0.0.1:{port}"
{extra}
"""


def ready_spare(supervisor: SupervisorProcess, other_than: int | None = None) -> int:
    """Wait until the tracker's spare is ready (and is not ``other_than``); its pid."""

    def found() -> int | None:
        for spare in supervisor.status().get("spares", []):
            if spare.get("state") == "ready" and spare.get("pid") not in (None, other_than):
                return int(spare["pid"])
        return None

    return int(wait_until(found, 120, "a ready spare"))


def serving_pid(port: int) -> int:
    return int(httpx.get(f"http://127.0.0.1:{port}/health", timeout=30, trust_env=False).json()["pid"])


def test_a_killed_replica_is_replaced_by_the_spare_and_another_spare_follows(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    port = free_port()
    supervisor = supervisor_factory(tracker(tmp_path / "home", port))
    first = supervisor.wait_state("tracker", "running")
    spare = ready_spare(supervisor)
    assert spare != first["pid"] and alive(spare)
    assert [r["pid"] for r in supervisor.replicas()] == [first["pid"]]  # a spare is never counted as a replica
    os.kill(first["pid"], signal.SIGKILL)
    replaced = supervisor.wait_for(
        lambda s: (r := s.replica("tracker")).get("state") == "running" and r.get("pid") != first["pid"] and r,
        what="the replacement",
    )
    assert replaced["pid"] == spare
    assert serving_pid(port) == spare
    assert f"took over spare pid {spare}" in supervisor.log("tracker-0.log")
    assert ready_spare(supervisor, other_than=spare) != spare  # and the next one is started


def test_a_spare_that_dies_while_waiting_is_started_again(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    supervisor = supervisor_factory(tracker(tmp_path / "home", free_port()))
    supervisor.wait_state("tracker", "running")
    spare = ready_spare(supervisor)
    os.kill(spare, signal.SIGKILL)
    again = ready_spare(supervisor, other_than=spare)
    assert again != spare and alive(again)
    wait_until(lambda: not alive(spare), 30, "the dead spare to be reaped")
    assert "ended while waiting" in supervisor.log("supervisor.log")


def test_an_upgrade_discards_the_spare_and_nothing_of_the_old_installation_serves(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    installed = tmp_path / "installed.json"
    installed.write_text(json.dumps(version_info()))
    port = free_port()
    supervisor = supervisor_factory(tracker(tmp_path / "home", port), env={ENV_INSTALLED_FILE: str(installed)})
    first = supervisor.wait_state("tracker", "running")
    old_spare = ready_spare(supervisor)
    installed.write_text(json.dumps({**version_info(), "build": 2}))  # edited sources: an upgrade
    supervisor.wait_for(
        lambda s: (r := s.replica("tracker")).get("state") == "running" and r.get("pid") != first["pid"],
        what="the rolled replica",
    )
    wait_until(lambda: not alive(old_spare), 60, "the old spare to be stopped")
    new_spare = ready_spare(supervisor, other_than=old_spare)
    assert {serving_pid(port), supervisor.replica("tracker")["pid"], new_spare}.isdisjoint({old_spare, first["pid"]})


def test_spares_false_keeps_none(supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path) -> None:
    supervisor = supervisor_factory(tracker(tmp_path / "home", free_port(), "spares = false"))
    supervisor.wait_state("tracker", "running")
    supervisor.wait_for(lambda s: "spares" in s.status(), what="a published status")
    assert supervisor.status()["spares"] == []


# -- warm hosts ----------------------------------------------------------------------------------------------------


def warm_spare(runtime: Path, other_than: int | None = None) -> int:
    def found() -> int | None:
        for spare in warm.status(runtime).get("spares", []):
            if spare.get("state") == "ready" and spare.get("pid") not in (None, other_than):
                return int(spare["pid"])
        return None

    return int(wait_until(found, 120, "a ready spare warm host"))


@pytest.mark.parametrize("spares", [True, False])
def test_a_warm_host_killed_is_replaced_by_its_spare_unless_spares_are_off(checkout: Path, spares: bool) -> None:
    runtime = Path(os.path.realpath(tempfile.mkdtemp(prefix="bw", dir="/tmp")))
    env: dict[str, Any] = {**os.environ, **warm_env(runtime), "BEE_WARM_IDLE_SECONDS": "120"}
    if not spares:
        env["BEE_WARM_SPARES"] = "0"
    listing = session({"method": "tools/list"})
    try:
        assert "result" in serve([str(bee_executable()), "mcp", "serve"], checkout, env, listing)[1]
        first = warm.running_host(runtime, f"core {checkout.resolve()}")
        if not spares:
            warm.running_host(runtime, f"core {checkout.resolve()}")
            assert warm.status(runtime).get("spares") == []
            return
        spare = warm_spare(runtime)
        os.kill(first["pid"], signal.SIGKILL)
        replaced = warm.running_host(runtime, f"core {checkout.resolve()}", other_than=first["pid"])
        assert replaced["pid"] == spare
        assert "result" in serve([str(bee_executable()), "mcp", "serve"], checkout, env, listing)[1]
        log = (warm.folder_of(runtime) / "logs" / f"{replaced['service']}-0.log").read_text()
        assert f"took over spare pid {spare}" in log
    finally:
        stop_warm(runtime)
        shutil.rmtree(runtime, ignore_errors=True)
