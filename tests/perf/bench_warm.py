"""Warm hosts against cold ones, side by side in one run (not a test; `./dev bench warm`).

1. Spawn to the first ``tools/list`` answer: a minimal server on the same SDK, a cold `bee mcp serve`
   (``BEE_WARM=0``) and a warm-attached one (its warm host already kept), alternated so all see the same noise.
2. Memory added per extra editor session: five front ends on one checkout, the RSS (and PSS) of the front ends
   plus what the shared host grows by, per session after the first; a cold host's RSS beside it.
3. SIGKILL of the warm host, then the next request: from the kill to its answer, through the same session — with
   the host's spare ready (it takes over), and with ``BEE_WARM_SPARES=0`` (a cold start of the replacement) beside
   it; and what the spare costs in memory.
4. An upgrade noticed, then served by the new version: from the supervisor's "installed Bee changed" to the first
   answer from the replacement (``BEE_INSTALLED_VERSION_FILE`` stands for the installation).
5. Per-call round trip, interleaved: the minimal SDK server's one tool (the floor), a cold host, the front end
   relaying to its warm host, and a client on the warm host's socket itself — what handing the editor's pipes to the
   host (descriptor passing) could at best gain — on the same cheap Bee call.

Each warm measure runs in a runtime directory of its own, so its warm supervisor is this run's alone. Writes
tests/perf/reports/warm.json and prints the ratios against the targets.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.perf._report import median, verdict, write_report
from tests.perf.bench_core import first_tools_list_seconds

HERE = Path(__file__).parent

BEE = Path(sys.executable).parent / "bee"
MINIMAL = HERE / "minimal_server.py"
CHECKOUT = HERE.parent / "fixtures" / "checkout"
RUNS = 12
SESSIONS = 5
KILLS = 5
CALLS = 300
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
#: The cheapest Bee call, for round trips against the minimal server's one tool.
TINY_CALL = {"name": "bee_representation_encode", "arguments": {"jsonText": '{"a":1}'}}
CALL = {
    "name": "bee_context_packet",
    "arguments": {
        "manifestJson": json.dumps({"selections": [{"id": "r", "path": "README.md", "representation": "index"}]}),
        "budgetBytes": 4096,
    },
}


def runtime() -> Path:
    return Path(os.path.realpath(tempfile.mkdtemp(prefix="bw", dir="/tmp")))


def warm_env(run: Path, **more: str) -> dict[str, str]:
    return {**os.environ, "BEE_WARM": "1", "XDG_RUNTIME_DIR": str(run), "BEE_WARM_WAIT_SECONDS": "120", **more}


def cold_env() -> dict[str, str]:
    return {**os.environ, "BEE_WARM": "0"}


def stop(run: Path) -> None:
    subprocess.run([str(BEE), "supervise", "stop", "--warm"], env=warm_env(run), capture_output=True, check=False)
    shutil.rmtree(run, ignore_errors=True)


class Session:
    """`bee mcp serve` on raw pipes, after its 2025-11-25 handshake."""

    def __init__(self, checkout: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [str(BEE), "mcp", "serve", "--checkout", str(checkout)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next = 0
        self.request("initialize", INIT)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next += 1
        self.send({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params or {}})
        assert self.process.stdout is not None
        while True:
            answer: dict[str, Any] = json.loads(self.process.stdout.readline())
            if answer.get("id") == self.next:
                return answer

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def status(run: Path) -> dict[str, Any]:
    from bee_contracts.warm import warm_dir

    try:
        found: dict[str, Any] = json.loads((Path(warm_dir({"XDG_RUNTIME_DIR": str(run)})) / "status.json").read_text())
        return found
    except (OSError, ValueError):
        return {}


def host_pid(run: Path, checkout: Path, other_than: int | None = None, timeout: float = 120) -> int:
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        for replica in status(run).get("replicas", []):
            pid = replica.get("pid")
            if replica.get("address") == f"core {checkout}" and replica["state"] == "running" and pid != other_than:
                return int(pid)
        time.sleep(0.01)
    raise RuntimeError("no running warm host")


def memory(pid: int) -> tuple[int, int]:
    """RSS and PSS of ``pid``, in bytes."""
    rss = int(Path(f"/proc/{pid}/status").read_text().split("VmRSS:")[1].split()[0]) * 1024
    pss = int(Path(f"/proc/{pid}/smaps_rollup").read_text().split("Pss:")[1].split()[0]) * 1024
    return rss, pss


def start_times(checkout: Path) -> dict[str, float]:
    run = runtime()
    try:
        Session(checkout, warm_env(run)).close()  # the warm host is kept from now on
        minimal, cold, warm = [], [], []
        for _ in range(RUNS):
            minimal.append(first_tools_list_seconds([sys.executable, str(MINIMAL)], checkout))
            cold.append(first_tools_list_seconds([str(BEE), "mcp", "serve"], checkout, env=cold_env()))
            warm.append(first_tools_list_seconds([str(BEE), "mcp", "serve"], checkout, env=warm_env(run)))
    finally:
        stop(run)
    return {"minimalSeconds": median(minimal), "coldSeconds": median(cold), "warmSeconds": median(warm)}


def session_memory(checkout: Path) -> dict[str, float]:
    run = runtime()
    try:
        sessions = [Session(checkout, warm_env(run))]
        host = host_pid(run, checkout)
        sessions[0].request("tools/call", CALL)
        one_front = memory(sessions[0].process.pid)
        one_host = memory(host)
        for _ in range(SESSIONS - 1):
            session = Session(checkout, warm_env(run))
            session.request("tools/call", CALL)
            sessions.append(session)
        fronts = [memory(s.process.pid) for s in sessions]
        all_host = memory(host)
        extra = SESSIONS - 1
        rss_added = (sum(f[0] for f in fronts[1:]) + all_host[0] - one_host[0]) / extra
        pss_added = (sum(f[1] for f in fronts[1:]) + all_host[1] - one_host[1]) / extra
        for session in sessions:
            session.close()
        cold = Session(checkout, cold_env())
        cold.request("tools/call", CALL)
        cold_rss, cold_pss = memory(cold.process.pid)
        cold.close()
    finally:
        stop(run)
    return {
        "rssAddedPerSessionMB": rss_added / 1e6,
        "pssAddedPerSessionMB": pss_added / 1e6,
        "frontEndRssMB": one_front[0] / 1e6,
        "frontEndPssMB": one_front[1] / 1e6,
        "warmHostRssMB": all_host[0] / 1e6,
        "coldHostRssMB": cold_rss / 1e6,
        "coldHostPssMB": cold_pss / 1e6,
    }


def ready_spare(run: Path) -> int:
    give_up = time.monotonic() + 120
    while time.monotonic() < give_up:
        for spare in status(run).get("spares", []):
            if spare.get("state") == "ready" and spare.get("pid"):
                return int(spare["pid"])
        time.sleep(0.01)
    raise RuntimeError("no ready spare")


def after_kill(checkout: Path, *, spares: bool) -> dict[str, float]:
    run = runtime()
    seconds = []
    memories: list[tuple[int, int, int, int]] = []
    try:
        session = Session(checkout, warm_env(run, BEE_WARM_SPARES="1" if spares else "0"))
        for _ in range(KILLS):
            pid = host_pid(run, checkout)
            time.sleep(1.5)  # past start_seconds: a crash after a good start is restarted at once
            if spares:
                spare = ready_spare(run)
                memories.append((*memory(spare), *memory(pid)))
            started = time.perf_counter()
            os.kill(pid, signal.SIGKILL)
            answer = session.request("tools/list")
            seconds.append(time.perf_counter() - started)
            assert "result" in answer, answer
            host_pid(run, checkout, other_than=pid)
        session.close()
    finally:
        stop(run)
    found = {"killToAnswerSeconds": median(seconds), "killToAnswerMaxSeconds": max(seconds)}
    if memories:
        for index, key in enumerate(("spareRssMB", "sparePssMB", "hostRssMB", "hostPssMB")):
            found[key] = median([m[index] / 1e6 for m in memories])
    return found


def _logged_at(line: str) -> float:
    return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()


def after_upgrade(checkout: Path) -> dict[str, float]:
    from bee_contracts import version_info
    from bee_contracts.warm import warm_dir

    run = runtime()
    installed = run.parent / f"{run.name}-installed.json"
    installed.write_text(json.dumps(version_info()))
    try:
        session = Session(checkout, warm_env(run, BEE_INSTALLED_VERSION_FILE=str(installed)))
        old = host_pid(run, checkout)
        log = Path(warm_dir({"XDG_RUNTIME_DIR": str(run)})) / "logs" / "supervisor.log"
        installed.write_text(json.dumps({**version_info(), "build": 1}))
        while True:
            answer = session.request("tools/list")
            assert "result" in answer, answer
            if not Path(f"/proc/{old}").exists() or _zombie(old):
                served = time.time()
                break
        noticed = next(_logged_at(line) for line in log.read_text().splitlines() if "installed Bee changed" in line)
        session.close()
    finally:
        stop(run)
        installed.unlink(missing_ok=True)
    return {"upgradeNoticedToServedSeconds": served - noticed}


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


class Direct:
    """A session on the warm host's own socket, past its hello: the host as if it had the editor's pipes itself."""

    def __init__(self, run: Path, checkout: Path) -> None:
        import socket

        from bee_contracts.layout import Checkout
        from bee_contracts.warm import (
            hello_message,
            host_socket,
            identity_digest,
            identity_of,
            read_line,
            send_line,
            warm_dir,
        )

        env = warm_env(run)
        selected = Checkout.select(str(checkout), None, env)
        identity = identity_of("core", selected.path, selected.instance, "warning", env)
        path = host_socket(warm_dir(env), identity_digest(identity))
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        send_line(self.sock, hello_message(identity, dict(env), "session"))
        read_line(self.sock, time.monotonic() + 60)
        self.file = self.sock.makefile("rb")
        self.next = 0
        self.request("initialize", INIT)
        self.sock.sendall(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next += 1
        self.sock.sendall(
            json.dumps({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params or {}}).encode() + b"\n"
        )
        while True:
            answer: dict[str, Any] = json.loads(self.file.readline())
            if answer.get("id") == self.next:
                return answer

    def close(self) -> None:
        self.file.close()
        self.sock.close()


class Minimal(Session):
    """The minimal server on the same SDK (tests/perf/minimal_server.py), its one tool."""

    def __init__(self) -> None:  # Session.__init__ starts `bee mcp serve`; this one the minimal server
        self.process = subprocess.Popen(
            [sys.executable, str(MINIMAL)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.next = 0
        self.request("initialize", INIT)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def round_trips(checkout: Path) -> dict[str, float]:
    run = runtime()
    try:
        warm = Session(checkout, warm_env(run))
        direct = Direct(run, checkout)
        cold = Session(checkout, cold_env())
        minimal = Minimal()
        calls: dict[str, tuple[Any, dict[str, Any]]] = {
            "minimal": (minimal, {"name": "echo", "arguments": {}}),
            "cold": (cold, TINY_CALL),
            "warm": (warm, TINY_CALL),
            "direct": (direct, TINY_CALL),
        }
        timings: dict[str, list[float]] = {name: [] for name in calls}
        for _ in range(20):  # warm-up
            for session, call in calls.values():
                session.request("tools/call", call)
        for _ in range(CALLS):
            for name, (session, call) in calls.items():
                started = time.perf_counter()
                session.request("tools/call", call)
                timings[name].append(time.perf_counter() - started)
        for session, _ in calls.values():
            session.close()
    finally:
        stop(run)
    return {f"{name}CallMs": median(found) * 1000 for name, found in timings.items()}


def main() -> None:
    checkout = Path(tempfile.mkdtemp(prefix="bee-bench-")) / "checkout"
    shutil.copytree(CHECKOUT, checkout)
    checkout = checkout.resolve()
    starts = start_times(checkout)
    mem = session_memory(checkout)
    kill = after_kill(checkout, spares=True)
    cold_kill = after_kill(checkout, spares=False)
    upgrade = after_upgrade(checkout)
    calls = round_trips(checkout)
    attach_ratio = starts["warmSeconds"] / starts["minimalSeconds"]
    call_ratio = calls["warmCallMs"] / calls["minimalCallMs"]
    report = {
        "start": {
            **starts,
            "warmOverMinimal": attach_ratio,
            "coldOverMinimal": starts["coldSeconds"] / starts["minimalSeconds"],
        },
        "memory": mem,
        "kill": kill,
        "killWithoutSpares": cold_kill,
        "upgrade": upgrade,
        "calls": {
            **calls,
            "warmOverMinimal": call_ratio,
            "coldOverMinimal": calls["coldCallMs"] / calls["minimalCallMs"],
            "directOverMinimal": calls["directCallMs"] / calls["minimalCallMs"],
        },
        "targets": {
            "warmOverMinimal": "<= 0.15",
            "rssAddedPerSessionMB": "<= 15",
            "killToAnswerSeconds": "<= 0.3",
            "upgradeNoticedToServedSeconds": "<= 5",
            "callWarmOverMinimal": "<= 1.2",
        },
    }
    path = write_report("warm", report)
    print(json.dumps(report, indent=2))
    print(f"warm attach vs minimal cold start: {verdict(attach_ratio, 0.15, higher_is_better=False)}")
    print(f"RSS added per extra session: {mem['rssAddedPerSessionMB']:.1f} MB (target <= 15)")
    print(
        f"SIGKILL of the host -> next answer: {kill['killToAnswerSeconds']:.3f} s with its spare (target <= 0.3), "
        f"{cold_kill['killToAnswerSeconds']:.2f} s without; the spare: {kill['spareRssMB']:.0f} MB RSS"
    )
    print(f"upgrade noticed -> served by the new host: {upgrade['upgradeNoticedToServedSeconds']:.2f} s (target <= 5)")
    print(f"round trip through the front end vs the minimal server: {verdict(call_ratio, 1.2, higher_is_better=False)}")
    print(f"report: {path}")


if __name__ == "__main__":
    main()
