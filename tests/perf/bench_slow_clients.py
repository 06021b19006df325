"""What slow, silent and greedy clients cost another client of the tracker, side by side in one run (not a test;
`./dev bench slow_clients`).

One `bee tracker serve` (SQLite, the shipped limits) under the descriptor limit the review ran it with (1024), and
one client, Alice, calling `ready` one call after another on one connection and asking `/health` on a fresh
connection between calls, while each of these runs beside her in turn:

- nothing (the baseline);
- silent: 1,100 connections that send nothing, each reopened as soon as the server closes it (the review's case:
  it kept /health and every call timing out, and the log grew by 101 MB in 40 s);
- slow: 40 connections sending a call's headers and body a byte a second, 40 more sending their headers that way,
  each reopened when refused (the review's case: 19 of 20 of another user's calls were `busy`);
- greedy: Mallory's 1,000 clients from four processes (tests/harness/overload.py, sixty calls each, back to
  back), 10x what the host admits, all with one token.

Writes Alice's outcomes and latency percentiles, the health checks', what the attackers saw and how much the server
logged to tests/perf/reports/slow_clients.json. Target: none of Alice's calls or health checks fails in any round.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.harness.overload import generate, percentiles, summary
from tests.harness.raw_http import request
from tests.harness.tracker import TrackerProcess
from tests.perf._report import write_report

SECONDS = float(os.environ.get("BEE_SLOW_CLIENTS_SECONDS", "15"))
NOFILE = 1024
#: Calls each of Mallory's 1,000 clients sends, back to back: about as long as the other scenarios last.
GREEDY_CALLS = int(os.environ.get("BEE_SLOW_CLIENTS_GREEDY_CALLS", "60"))
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
CALL = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ready"}}).encode()


class Alice:
    """Calls one after another on one connection, and a health check on a fresh connection after each."""

    def __init__(self, server: TrackerProcess) -> None:
        self.server = server
        self.headers = {**ACCEPT, "Authorization": f"Bearer {server.token('alice@example.com')}"}
        self.calls: list[tuple[str, float]] = []
        self.health: list[tuple[str, float]] = []

    def run(self, keep_going: Callable[[], bool]) -> None:
        health = f"http://127.0.0.1:{self.server.port}/health"
        with httpx.Client(timeout=30) as http:
            while keep_going():
                self.calls.append(self._timed(lambda: http.post(self.server.url, content=CALL, headers=self.headers)))
                self.health.append(self._timed(lambda: httpx.get(health, timeout=30)))

    @staticmethod
    def _timed(send: Callable[[], httpx.Response]) -> tuple[str, float]:
        started = time.perf_counter()
        try:
            response = send()
            outcome = "ok" if response.status_code == 200 else f"http-{response.status_code}"
            if response.status_code == 200 and response.json().get("result", {}).get("isError"):
                outcome = "tool-error"
        except httpx.HTTPError as exc:
            outcome = type(exc).__name__
        return outcome, time.perf_counter() - started

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, samples in (("calls", self.calls), ("health", self.health)):
            out[name] = {
                "outcomes": dict(Counter(kind for kind, _ in samples)),
                **percentiles([seconds for _, seconds in samples]),
            }
        return out


class Holders:
    """``count`` connections kept open: each sends ``opening`` and then one byte of ``trickle`` every ``pace``
    seconds (``trickle`` empty: nothing more); one the server closes is reopened at once. Counts what happened."""

    def __init__(self, port: int, count: int, opening: bytes, trickle: bytes = b"", pace: float = 1.0) -> None:
        self.port, self.count, self.opening, self.trickle, self.pace = port, count, opening, trickle, pace
        self.events: Counter[str] = Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Holders:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    def _open(self, selector: selectors.BaseSelector) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            if self.opening:
                sock.sendall(self.opening)
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ, [0])
            self.events["opened"] += 1
        except OSError as exc:
            self.events[f"connect-{type(exc).__name__}"] += 1

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        for _ in range(self.count):
            self._open(selector)
        next_byte = time.monotonic() + self.pace
        while not self._stop.is_set():
            for key, _ in selector.select(timeout=0.1):
                self._read(selector, key.fileobj)  # type: ignore[arg-type]  # registered sockets only
            if self.trickle and time.monotonic() >= next_byte:
                next_byte += self.pace
                for key in list(selector.get_map().values()):
                    self._send_next(selector, key)
        for key in list(selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]  # sockets
        selector.close()

    def _read(self, selector: selectors.BaseSelector, sock: socket.socket) -> None:
        try:
            data = sock.recv(65536)
        except OSError:
            data = b""
        if data:
            self.events[data.split(b"\r\n", 1)[0].decode("latin-1", "replace")] += 1
            return
        self.events["closed-by-server"] += 1
        selector.unregister(sock)
        sock.close()
        self._open(selector)

    def _send_next(self, selector: selectors.BaseSelector, key: selectors.SelectorKey) -> None:
        sent = key.data
        if sent[0] >= len(self.trickle):
            return
        try:
            key.fileobj.send(self.trickle[sent[0] : sent[0] + 1])  # type: ignore[union-attr]  # sockets
            sent[0] += 1
        except OSError:
            pass


def scenario(server: TrackerProcess, name: str) -> dict[str, Any]:
    """Alice's view while ``name`` runs beside her, and what the attackers saw."""
    alice = Alice(server)
    log_before = server.log.stat().st_size
    started = time.monotonic()
    attackers: dict[str, Any] = {}
    if name == "greedy":
        outcomes: list[Any] = []
        attack = threading.Thread(
            target=lambda: outcomes.extend(generate(server.url, server.token("mallory@example.com"), GREEDY_CALLS))
        )
        attack.start()
        alice.run(attack.is_alive)
        attack.join()
        attackers = summary(outcomes)
    else:
        deadline = time.monotonic() + SECONDS
        with _attack(name, server) as holders:
            alice.run(lambda: time.monotonic() < deadline)
        attackers = {label: dict(h.events) for label, h in holders.items()}
    return {
        **alice.report(),
        "seconds": round(time.monotonic() - started, 1),
        "attackers": attackers,
        "serverLogBytes": server.log.stat().st_size - log_before,
    }


class _attack:
    """The holders of a scenario, started and stopped together."""

    def __init__(self, name: str, server: TrackerProcess) -> None:
        headers = {**ACCEPT, "Authorization": f"Bearer {server.token('mallory@example.com')}"}
        whole = request("/mcp", port=server.port, headers=headers, body=CALL)
        head_end = whole.index(b"\r\n\r\n") + 4
        self.holders: dict[str, Holders] = {}
        if name == "silent":
            self.holders = {"silent": Holders(server.port, 1100, b"")}
        elif name == "slow":
            self.holders = {
                "slowBodies": Holders(server.port, 40, whole[: head_end + 5], whole[head_end + 5 :]),
                "slowHeaders": Holders(server.port, 40, whole[:20], whole[20:head_end]),
            }

    def __enter__(self) -> dict[str, Holders]:
        for holders in self.holders.values():
            holders.__enter__()
        time.sleep(1.0)  # the connections are open before Alice starts
        return self.holders

    def __exit__(self, *exc: object) -> None:
        for holders in self.holders.values():
            holders.__exit__()


def main() -> None:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        server = TrackerProcess(Path(scratch) / "tracker", None, "--log-level", "info")
        server.nofile = NOFILE
        server.start()
        try:
            for name in ("baseline", "silent", "slow", "greedy"):
                results[name] = scenario(server, name)
                print(name, json.dumps({k: v for k, v in results[name].items() if k != "attackers"}), flush=True)
        finally:
            server.stop()
    failed = {
        name: {part: outcomes for part in ("calls", "health") if set(outcomes := result[part]["outcomes"]) != {"ok"}}
        for name, result in results.items()
    }
    report = {
        "descriptorLimit": NOFILE,
        "secondsPerScenario": SECONDS,
        "target": "every call and health check of Alice's answered 200 in every scenario",
        "met": not any(failed.values()),
        "failed": {name: parts for name, parts in failed.items() if parts},
        "scenarios": results,
    }
    path = write_report("slow_clients", report)
    print(json.dumps({k: v for k, v in report.items() if k != "scenarios"}, indent=2), f"\nreport: {path}")


if __name__ == "__main__":
    main()
