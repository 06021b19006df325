"""A real `bee supervise` process on a service file of the test's own, and the means to watch what it does.

Waits poll the published status (``status.json``) until a condition holds or a deadline passes; they never assert
on time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

FAKE_HOST = Path(__file__).resolve().parents[1] / "supervisor" / "fake_host.py"
BEE = Path(sys.executable).parent / "bee"


def fake(*args: str) -> str:
    """A TOML array that runs the fake host with ``args``."""
    return json.dumps([sys.executable, str(FAKE_HOST), *args])


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its parent to reap it is dead)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return fields[0] not in ("Z", "X")


def wait_until(condition: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
    """Poll ``condition`` until it returns something truthy; that value. Fails after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.02)


class SupervisorProcess:
    """`bee supervise --config FILE --state DIR` in ``root``; its stdout and stderr go to ``root/supervisor.out``."""

    def __init__(self, root: Path, config: str, env: dict[str, str] | None = None, *extra: str) -> None:
        self.root = root
        self.config = root / "services.toml"
        self.state = root / "state"
        self.out = root / "supervisor.out"
        self.env = {**os.environ, **(env or {})}
        self.extra = list(extra)
        self.process: subprocess.Popen[bytes] | None = None
        root.mkdir(parents=True, exist_ok=True)
        self.config.write_text(config)

    def argv(self, *command: str) -> list[str]:
        return [str(BEE), "supervise", *command, "--config", str(self.config), "--state", str(self.state)]

    def start(self) -> SupervisorProcess:
        with self.out.open("ab") as out:
            self.process = subprocess.Popen(
                [*self.argv(), *self.extra], cwd=self.root, env=self.env, stdout=out, stderr=subprocess.STDOUT
            )
        return self

    def output(self) -> str:
        return self.out.read_text(errors="replace") if self.out.exists() else ""

    def status(self) -> dict[str, Any]:
        try:
            value = json.loads((self.state / "status.json").read_text())
        except (OSError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}

    def replicas(self) -> list[dict[str, Any]]:
        return list(self.status().get("replicas", []))

    def replica(self, service: str, index: int = 0) -> dict[str, Any]:
        for replica in self.replicas():
            if replica["service"] == service and replica["replica"] == index:
                return replica
        return {}

    def wait_for(self, condition: Callable[[SupervisorProcess], Any], timeout: float = 90.0, what: str = "") -> Any:
        """Wait until ``condition(self)`` holds; fails at once when the supervisor exits meanwhile."""

        def check() -> Any:
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(f"the supervisor exited ({self.process.returncode}):\n{self.output()}")
            return condition(self)

        try:
            return wait_until(check, timeout, what or "the supervisor")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\nstatus: {json.dumps(self.status(), indent=1)}\n{self.output()}") from None

    def wait_state(self, service: str, state: str, index: int = 0, timeout: float = 90.0) -> dict[str, Any]:
        replica: dict[str, Any] = self.wait_for(
            lambda s: (r := s.replica(service, index)).get("state") == state and r,
            timeout,
            f"{service}/{index} to be {state}",
        )
        return replica

    def pids(self) -> list[int]:
        return [r["pid"] for r in self.replicas() if r.get("pid")]

    def signal(self, signum: int) -> None:
        assert self.process is not None
        self.process.send_signal(signum)

    def wait(self, timeout: float = 60.0) -> int:
        assert self.process is not None
        return self.process.wait(timeout=timeout)

    def stop(self) -> None:
        """SIGTERM and wait (SIGKILL after a minute): the fixture's cleanup."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def log(self, name: str) -> str:
        path = self.state / "logs" / name
        return path.read_text(errors="replace") if path.exists() else ""
