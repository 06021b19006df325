"""Supervisor benchmark (not a test; `./dev bench supervisor`): how fast a real tracker serves again.

- The peer: `bee tracker serve` started by hand, from spawn to its first `/health` answer — the floor of any restart
  — measured once after each one-replica kill, so both see the same machine noise.
- SIGKILL to serving again: a tracker replica under `bee supervise` is killed with SIGKILL; the clock stops at the
  first `GET /health` answered through the shared address by a process other than the one killed (the request is
  sent right after the kill and waits in the kernel's backlog, which the supervisor holds open). With one replica
  and its spare ready, the spare takes over (target: ≤ 0.5 s); with `spares = false` it is a full restart of `bee
  tracker serve`, measured beside it; with two replicas, the other replica answers meanwhile.
- A spare's memory: the RSS and PSS of the ready spare beside those of the replica it would replace.
- Upgrade to restarted: the installation changes under the running supervisor (the file named by
  BEE_INSTALLED_VERSION_FILE gets other sources with the same version triple, as an edited editable install); the
  clock stops when status.json shows every replica running in a new process. Target: ≤ 5 s.

Writes tests/perf/reports/supervisor.json. The trackers run on SQLite in a temporary home.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bee_contracts import version_info
from bee_contracts.installation import ENV_INSTALLED_FILE
from tests.harness.postgres import free_port
from tests.harness.supervisor import BEE, SupervisorProcess, wait_until
from tests.perf._report import write_report

RUNS = int(os.environ.get("BEE_BENCH_RUNS", "7"))


def config(home: Path, port: int, replicas: int, spares: bool = True) -> str:
    return f"""
[services.tracker]
host = "tracker"
command = ["bee", "tracker", "serve", "--home", "{home}", "--fd", "{{listen_fd}}", "--fd", "{{check_fd}}"]
listen = "127.0.0.1:{port}"
replicas = {replicas}
spares = {"true" if spares else "false"}
"""


def ready_spare(supervisor: SupervisorProcess) -> int | None:
    for spare in supervisor.status().get("spares", []):
        if spare.get("state") == "ready" and spare.get("pid"):
            return int(spare["pid"])
    return None


def memory(pid: int) -> tuple[float, float]:
    """RSS and PSS of ``pid``, in MB."""
    rss = int(Path(f"/proc/{pid}/status").read_text().split("VmRSS:")[1].split()[0]) * 1024
    pss = int(Path(f"/proc/{pid}/smaps_rollup").read_text().split("Pss:")[1].split()[0]) * 1024
    return rss / 1e6, pss / 1e6


def all_running(supervisor: SupervisorProcess, replicas: int) -> list[dict[str, Any]] | None:
    found = supervisor.replicas()
    if len(found) == replicas and all(r["state"] == "running" for r in found):
        return found
    return None


def health_pid(http: httpx.Client, port: int) -> None:
    response = http.get(f"http://127.0.0.1:{port}/health", timeout=60)
    response.raise_for_status()


def cold_start(http: httpx.Client, home: Path) -> float:
    """The peer: `bee tracker serve` started by hand, spawn to its first /health answer (no supervisor)."""
    import subprocess

    port = free_port()
    started = time.perf_counter()
    process = subprocess.Popen(
        [str(BEE), "tracker", "serve", "--home", str(home), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                if http.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200:
                    return time.perf_counter() - started
            except httpx.HTTPError:
                time.sleep(0.01)
    finally:
        process.terminate()
        process.wait(timeout=30)


def sigkill_to_serving(
    root: Path, replicas: int, peer: list[float], *, spares: bool = True, memories: list[dict[str, float]] | None = None
) -> list[float]:
    """Kill a replica RUNS times (each once its spare is ready, with ``spares``); with ``peer``, a cold start is
    measured after each kill (the same machine noise); ``memories`` gets the spare's and the replica's."""
    port = free_port()
    supervisor = SupervisorProcess(root, config(root / "home", port, replicas, spares)).start()
    samples = []
    try:
        with httpx.Client(trust_env=False, limits=httpx.Limits(max_keepalive_connections=0)) as http:
            for _ in range(RUNS):
                running = wait_until(lambda: all_running(supervisor, replicas), 120, "running replicas")
                victim = running[0]["pid"]
                if spares:
                    spare = wait_until(lambda: ready_spare(supervisor), 120, "a ready spare")
                    if memories is not None:
                        (spare_rss, spare_pss), (rss, pss) = memory(spare), memory(victim)
                        memories.append(
                            {"spareRssMB": spare_rss, "sparePssMB": spare_pss, "replicaRssMB": rss, "replicaPssMB": pss}
                        )
                started = time.perf_counter()
                os.kill(victim, signal.SIGKILL)
                health_pid(http, port)
                samples.append(time.perf_counter() - started)

                def replaced(s: SupervisorProcess, victim: int = victim) -> object:
                    return (r := all_running(s, replicas)) and victim not in {x["pid"] for x in r}

                supervisor.wait_for(replaced, 120, "the replacement")
                if replicas == 1:
                    peer.append(cold_start(http, root / "cold-home"))
    finally:
        supervisor.stop()
    return samples


def upgrade_to_restarted(root: Path, replicas: int, how: str) -> list[float]:
    port = free_port()
    root.mkdir(parents=True)
    installed = root / "installed.json"
    installed.write_text(json.dumps(version_info()))
    env = {ENV_INSTALLED_FILE: str(installed)}
    supervisor = SupervisorProcess(root, config(root / "home", port, replicas), env).start()
    samples = []
    try:
        for run in range(RUNS):
            before = {r["pid"] for r in wait_until(lambda: all_running(supervisor, replicas), 120, "running")}
            time.sleep(1.5)  # let the watcher settle on the current fingerprint between runs
            started = time.perf_counter()
            installed.write_text(json.dumps({**version_info(), "build": run}))

            def restarted(before: set[int] = before) -> object:
                return (r := all_running(supervisor, replicas)) and not before & {x["pid"] for x in r}

            wait_until(restarted, 120, "every replica restarted")
            samples.append(time.perf_counter() - started)
    finally:
        supervisor.stop()
    return samples


def summary(samples: list[float]) -> dict[str, Any]:
    return {
        "median_s": round(statistics.median(samples), 3),
        "min_s": round(min(samples), 3),
        "max_s": round(max(samples), 3),
        "samples_s": [round(s, 3) for s in samples],
    }


def main() -> None:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bee-bench-supervisor-") as scratch:
        base = Path(scratch)
        peer: list[float] = []
        for replicas in (1, 2):
            name = f"sigkill_to_serving_{replicas}_replica{'s' if replicas > 1 else ''}"
            memories: list[dict[str, float]] = []
            results[name] = summary(sigkill_to_serving(base / name, replicas, peer, memories=memories))
            if replicas == 1:
                results["spare_memory"] = {
                    key: round(statistics.median(m[key] for m in memories), 1) for key in memories[0]
                }
            print(f"{name}: {results[name]}", flush=True)
        name = "sigkill_to_serving_1_replica_without_spare"
        results[name] = summary(sigkill_to_serving(base / name, 1, [], spares=False))
        print(f"{name}: {results[name]}", flush=True)
        results["tracker_cold_start_without_supervisor"] = summary(peer)
        print(f"tracker_cold_start_without_supervisor: {results['tracker_cold_start_without_supervisor']}", flush=True)
        for replicas, how in ((1, "file"), (2, "file")):
            name = f"upgrade_to_restarted_{replicas}_replica{'s' if replicas > 1 else ''}_{how}"
            results[name] = summary(upgrade_to_restarted(base / name, replicas, how))
            print(f"{name}: {results[name]}", flush=True)
    targets = {
        "sigkill_to_serving_1_replica_s": 0.5,
        "upgrade_to_restarted_s": 5.0,
    }
    path = write_report("supervisor", {"runs": RUNS, "targets": targets, "results": results})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
