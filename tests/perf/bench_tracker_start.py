"""Tracker start-up before and after its lazy imports, side by side in one run (`./dev bench tracker_start`).

The code before is the commit _baseline.BASELINE: its packages' sources go first on PYTHONPATH, everything else
(the installation, the machine, the service file) is the same. Before and after take turns, run by run:

- SIGKILL → serving: a one-replica tracker under `bee supervise` (SQLite, a temporary home) is killed with SIGKILL;
  right after the kill a `GET /health` and an authenticated `tools/call` of `ready` are sent to the shared address
  (they wait in the kernel's backlog, which the supervisor holds open), and a clock stops at each one's answer from
  the new process (a `/health` that says `ok`: the tracker answers 503 `starting` until its MCP endpoint and board
  are built). Targets: ≤ 0.5 s; the first `tools/call` no slower than before beyond noise.
- Cold start: `bee tracker serve` spawned by hand, to its first `/health` answer and (another spawn) to its first
  `tools/call` answer; with the CPU time (user + system) the process had used by then, read from /proc, which a
  loaded machine inflates far less than the wall clock.

Wall-clock seconds, medians of RUNS (BEE_BENCH_RUNS). Writes tests/perf/reports/tracker_start.json.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from tests.harness.postgres import free_port
from tests.harness.supervisor import BEE, SupervisorProcess, wait_until
from tests.perf._baseline import BASELINE, export, source_paths
from tests.perf._report import write_report

RUNS = int(os.environ.get("BEE_BENCH_RUNS", "7"))
#: How soon a restarted tracker must answer /health.
HEALTH_TARGET_S = 0.5
_CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ready", "arguments": {}}}


def service(home: Path, port: int) -> str:
    return f"""
[services.tracker]
host = "tracker"
command = ["bee", "tracker", "serve", "--home", "{home}", "--fd", "{{listen_fd}}", "--fd", "{{check_fd}}"]
listen = "127.0.0.1:{port}"
replicas = 1
"""


def token(home: Path) -> str:
    subprocess.run([str(BEE), "tracker", "init", "--home", str(home)], check=True, capture_output=True)
    minted = subprocess.run(
        [str(BEE), "tracker", "token", "--home", str(home), "--actor", "bench@example.com"],
        check=True,
        capture_output=True,
        text=True,
    )
    return minted.stdout.strip()


def health_from_other_than(port: int, victim: int) -> None:
    with httpx.Client(trust_env=False, timeout=60) as http:
        while True:
            answer = http.get(f"http://127.0.0.1:{port}/health")
            if answer.status_code == 200 and answer.json().get("pid") != victim:
                return


def first_call(port: int, bearer: str) -> None:
    headers = {"Authorization": f"Bearer {bearer}", "Accept": "application/json, text/event-stream"}
    with httpx.Client(trust_env=False, timeout=60) as http:
        answer = http.post(f"http://127.0.0.1:{port}/mcp", json=_CALL, headers=headers)
        answer.raise_for_status()
        assert "result" in answer.json(), answer.text


def finished_at(step: Callable[[], None]) -> float:
    """Run ``step``; the perf_counter reading as it returned."""
    step()
    return time.perf_counter()


def cpu_seconds(pid: int) -> float:
    """The user and system CPU time process ``pid`` has used so far (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def until_answered(request: Any) -> None:
    """Retry ``request`` while nothing listens yet (a process spawned by hand binds its port as it starts)."""
    while True:
        try:
            request()
            return
        except httpx.TransportError:
            time.sleep(0.01)


class Variant:
    """One side of the comparison: a supervisor running a tracker replica on one code, and its samples."""

    def __init__(self, name: str, root: Path, env: dict[str, str], cold: tuple[Path, str]) -> None:
        self.name, self.root, self.env = name, root, env
        self.cold_home, self.cold_bearer = cold
        self.home = root / "home"
        self.port = free_port()
        self.bearer = token(self.home)
        self.supervisor = SupervisorProcess(root, service(self.home, self.port), env).start()
        self.samples: dict[str, list[float]] = {
            "health": [],
            "call": [],
            "coldHealth": [],
            "coldCall": [],
            "coldHealthCpu": [],
            "coldCallCpu": [],
        }

    def running(self) -> int:
        found = self.supervisor.replicas()
        if len(found) == 1 and found[0]["state"] == "running":
            return int(found[0]["pid"])
        return 0

    def sigkill(self, pool: ThreadPoolExecutor) -> None:
        victim = wait_until(self.running, 120, f"{self.name}: a running replica")
        started = time.perf_counter()
        os.kill(victim, signal.SIGKILL)
        health = pool.submit(finished_at, lambda: health_from_other_than(self.port, victim))
        call = pool.submit(finished_at, lambda: first_call(self.port, self.bearer))
        self.samples["health"].append(health.result() - started)
        self.samples["call"].append(call.result() - started)
        wait_until(lambda: (pid := self.running()) and pid != victim, 120, f"{self.name}: the replacement")

    def cold(self) -> None:
        for key in ("coldHealth", "coldCall"):
            port = free_port()
            started = time.perf_counter()
            process = subprocess.Popen(
                [str(BEE), "tracker", "serve", "--home", str(self.cold_home), "--port", str(port)],
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                if key == "coldHealth":
                    until_answered(lambda port=port: health_from_other_than(port, -1))
                else:
                    until_answered(lambda port=port: first_call(port, self.cold_bearer))
                self.samples[key].append(time.perf_counter() - started)
                self.samples[f"{key}Cpu"].append(cpu_seconds(process.pid))
            finally:
                process.terminate()
                process.wait(timeout=60)

    def summary(self) -> dict[str, Any]:
        return {
            key: {"median_s": round(statistics.median(v), 3), "samples_s": [round(s, 3) for s in v]}
            for key, v in self.samples.items()
        }


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bee-bench-tracker-start-") as scratch:
        base = Path(scratch)
        old = export(base / "baseline")
        if old is None:
            raise SystemExit(f"this checkout lacks the baseline commit {BASELINE}; set BEE_BENCH_BASELINE")
        before_env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in source_paths(old))}
        cold = (base / "cold", token(base / "cold"))  # the cold starts' home and a token from its key
        variants = [
            Variant("before", base / "before", before_env, cold),
            Variant("after", base / "after", dict(os.environ), cold),
        ]
        try:
            with ThreadPoolExecutor(2) as pool:
                for run in range(RUNS):
                    for variant in variants if run % 2 == 0 else reversed(variants):
                        variant.sigkill(pool)
                        variant.cold()
        finally:
            for variant in variants:
                variant.supervisor.stop()
        results = {variant.name: variant.summary() for variant in variants}
    after, before = results["after"], results["before"]
    for key in after:
        print(f"{key:<11} before {before[key]['median_s']:.3f} s   after {after[key]['median_s']:.3f} s")
    met = after["health"]["median_s"] <= HEALTH_TARGET_S
    print(f"SIGKILL -> /health target <= {HEALTH_TARGET_S} s: {'met' if met else 'NOT met'}")
    report = {
        "runs": RUNS,
        "baseline": BASELINE,
        "targets": {"sigkill_to_health_s": HEALTH_TARGET_S},
        "results": results,
        "healthTargetMet": met,
    }
    print(f"wrote {write_report('tracker_start', report)}")


if __name__ == "__main__":
    main()
