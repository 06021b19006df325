"""Warm hosts as editors meet them: the real `bee` front end, the real warm supervisor and real hosts.

The editor's side is the official MCP client (or raw pipes, for what must happen at an exact moment: a host stopped
with SIGSTOP holds requests in flight until the test kills it). Where the promise is a check the front end makes of
what it connects to, the other end is a stand-in the test controls (tests/harness/warm.py). Waits poll the warm
supervisor's published status; nothing asserts on time.
"""

from __future__ import annotations

import functools
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import version_info
from bee_contracts.warm import (
    WIRE,
    environment_digest,
    folder_id,
    make_identity,
    read_line,
    send_line,
)
from tests.conftest import ERAS, bee_executable, core_process, stop_warm, warm_env
from tests.harness import warm
from tests.harness.editor import serve, session
from tests.harness.supervisor import alive, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

LEGACY_INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
}


def packet(path: str = "src/a.py") -> dict[str, Any]:
    return {
        "manifestJson": json.dumps({"selections": [{"id": "a", "path": path, "representation": "index"}]}),
        "budgetBytes": 8192,
    }


def serves(checkout: Path, view: str = "core") -> str:
    return f"{view} {checkout.resolve()}"


class Editor:
    """`bee mcp serve` on raw pipes, as an editor starts it, in the warm mode of ``runtime``."""

    def __init__(self, checkout: Path, runtime: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [str(bee_executable()), "mcp", "serve", *extra],
            cwd=checkout,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **warm_env(runtime), **(env or {})},
        )
        self.modern = False

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        if self.modern and "method" in message:
            message = {**message, "params": {**message.get("params", {}), "_meta": MODERN_META}}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, f"the front end closed stdout: {self.stderr()}"
        return json.loads(line)  # type: ignore[no-any-return]

    def request(self, id: int | str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request; its answer (an answer to an earlier request, say one cancelled, is passed over)."""
        self.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}})
        while True:
            reply = self.read()
            if reply.get("id") == id:
                return reply

    def start(self, era: str) -> None:
        if era == "legacy":
            assert "result" in self.request(0, "initialize", LEGACY_INIT)
            self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        else:
            self.modern = True
            assert "result" in self.request(0, "server/discover")

    def stderr(self) -> str:
        self.process.kill()
        assert self.process.stderr is not None
        return self.process.stderr.read().decode(errors="replace")

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=30)


@pytest.fixture
def editors() -> Iterator[Callable[..., Editor]]:
    started: list[Editor] = []

    def start(*args: Any, **kwargs: Any) -> Editor:
        editor = Editor(*args, **kwargs)
        started.append(editor)
        return editor

    yield start
    for editor in started:
        editor.process.kill()
        editor.process.wait(timeout=30)
        for stream in (editor.process.stdin, editor.process.stdout, editor.process.stderr):
            if stream is not None:
                stream.close()


def tool_error(reply: dict[str, Any]) -> dict[str, Any]:
    result = reply["result"]
    assert result["isError"] is True and "structuredContent" not in result, result
    return json.loads(result["content"][0]["text"])  # type: ignore[no-any-return]


# -- the host dies, or is upgraded, under a session ----------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("host_mode", ["warm"], indirect=True)
@pytest.mark.parametrize("era", ERAS)
async def test_a_host_killed_mid_session_is_replaced_and_the_client_goes_on_calling(
    checkout: Path, era: str, host_mode: str, warm_runtime: Path
) -> None:
    async with core_process(checkout, era) as client:
        first = warm.running_host(warm_runtime, serves(checkout))
        assert (await client.call_tool("bee_context_packet", packet())).is_error is False
        os.kill(first["pid"], signal.SIGKILL)
        # The next calls reach the replacement: the legacy session's handshake is replayed to it unseen.
        for _ in range(3):
            result = await client.call_tool("bee_context_packet", packet())
            assert result.is_error is False and result.structured_content["status"] == "complete"
        assert len((await client.list_tools()).tools) == 13
        second = warm.running_host(warm_runtime, serves(checkout), other_than=first["pid"])
        assert second["restarts"] >= 1


@pytest.mark.alone  # requests must reach the host before it is killed: beside other tests' load, some did not
@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("view", ["core", "discovery"])
def test_a_read_in_flight_is_replayed_and_a_write_in_flight_gets_one_retryable_error(
    checkout: Path, era: str, view: str, warm_runtime: Path, editors: Callable[..., Editor]
) -> None:
    extra = ("--discovery",) if view == "discovery" else ()
    editor = editors(checkout, warm_runtime, *extra)
    editor.start(era)
    assert "result" in editor.request(1, "tools/list")
    first = warm.running_host(warm_runtime, serves(checkout, "discovery" if extra else "core"))

    def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if view == "discovery":
            return {"name": "bee_tool_invoke", "arguments": {"name": name, "arguments": arguments}}
        return {"name": name, "arguments": arguments}

    # Stopped, the host holds both requests unanswered: they are in flight when it dies.
    os.kill(first["pid"], signal.SIGSTOP)
    editor.send(
        {"jsonrpc": "2.0", "id": "read", "method": "tools/call", "params": call("bee_context_packet", packet())}
    )
    write = call("bee_context_compress", {"text": "Some prose to shorten.", "contentKind": "prose"})
    editor.send({"jsonrpc": "2.0", "id": "write", "method": "tools/call", "params": write})
    warm.relayed(editor.process)  # both reached the stopped host's socket
    os.kill(first["pid"], signal.SIGKILL)
    replies = {reply["id"]: reply for reply in (editor.read(), editor.read())}
    body = replies["read"]["result"]["structuredContent"]
    assert replies["read"]["result"]["isError"] is False and body["status"] == "complete"
    error = tool_error(replies["write"])
    assert (error["code"], error["retryable"], error["outcome_unknown"]) == ("unavailable", True, True)
    assert "bee_" in error["error"] and "whether it took effect is unknown" in error["error"]
    if era != "legacy":
        assert replies["write"]["result"]["resultType"] == "complete"
    # The session goes on with the replacement, and the write can be made again.
    again = editor.request(2, "tools/call", write)
    assert again["result"]["isError"] is False, again
    assert editor.close() == 0


def test_a_read_in_flight_survives_a_replacement_that_dies_too(
    checkout: Path, warm_runtime: Path, editors: Callable[..., Editor]
) -> None:
    editor = editors(checkout, warm_runtime)
    editor.start("legacy")
    first = warm.running_host(warm_runtime, serves(checkout))
    os.kill(first["pid"], signal.SIGSTOP)  # the read is in flight when the host dies
    editor.send(
        {
            "jsonrpc": "2.0",
            "id": "read",
            "method": "tools/call",
            "params": {"name": "bee_context_packet", "arguments": packet()},
        }
    )
    warm.relayed(editor.process)
    os.kill(first["pid"], signal.SIGKILL)
    # The replacement dies as soon as it runs: before, or just after, it answers the replayed handshake.
    second = warm.running_host(warm_runtime, serves(checkout), other_than=first["pid"])
    os.kill(second["pid"], signal.SIGKILL)
    reply = editor.read()  # answered, never left hanging: the result from a third host, or a retryable error
    assert reply["id"] == "read"
    result = reply["result"]
    if result["isError"]:
        error = tool_error(reply)
        assert (error["code"], error["retryable"], error["outcome_unknown"]) == ("unavailable", True, False)
    else:
        assert result["structuredContent"]["status"] == "complete"
    assert editor.request(1, "tools/list")["result"]["tools"]  # and the session goes on
    assert editor.close() == 0


def test_a_host_that_stops_answering_is_given_up_and_replaced_and_the_read_is_answered(
    checkout: Path, warm_runtime: Path, editors: Callable[..., Editor]
) -> None:
    editor = editors(checkout, warm_runtime)
    editor.start("legacy")
    first = warm.running_host(warm_runtime, serves(checkout))
    os.kill(first["pid"], signal.SIGSTOP)  # alive, its socket open, answering nothing: only the front end can tell
    try:
        reply = editor.request("read", "tools/call", {"name": "bee_context_packet", "arguments": packet()})
        assert reply["result"]["isError"] is False, reply
        assert reply["result"]["structuredContent"]["status"] == "complete"
        replaced = warm.running_host(warm_runtime, serves(checkout), other_than=first["pid"])
        assert replaced["pid"] != first["pid"] and not alive(first["pid"])
        log = (warm.folder_of(warm_runtime) / "logs" / "supervisor.log").read_text()
        assert "reported unresponsive" in log and "killing it" in log
    finally:
        if alive(first["pid"]):
            os.kill(first["pid"], signal.SIGKILL)
    assert editor.close() == 0


def test_an_upgrade_mid_session_restarts_the_host_and_the_session_goes_on(
    checkout: Path, tmp_path: Path, editors: Callable[..., Editor]
) -> None:
    # Its own runtime directory, so that its warm supervisor is started with the installation seam.
    runtime = Path(os.path.realpath(tempfile.mkdtemp(prefix="bw", dir="/tmp")))
    installed = tmp_path / "installed.json"
    installed.write_text(json.dumps(version_info()))
    editor = editors(checkout, runtime, env={"BEE_INSTALLED_VERSION_FILE": str(installed)})
    try:
        editor.start("legacy")
        first = warm.running_host(runtime, serves(checkout))
        calls = 0

        def call() -> bool:
            """One call, which must succeed; False, so the wait goes on to its condition."""
            nonlocal calls
            calls += 1
            reply = editor.request(calls, "tools/call", {"name": "bee_context_packet", "arguments": packet()})
            assert reply["result"]["isError"] is False, reply
            return False

        call()
        installed.write_text(json.dumps({**version_info(), "build": 2}))  # edited sources: an upgrade
        # The client keeps calling while the supervisor replaces the host; no call fails.
        wait_until(
            lambda: call() or warm.host(runtime, serves(checkout)).get("pid") not in (None, first["pid"]),
            180,
            "the host to be replaced after the upgrade",
        )
        second = warm.running_host(runtime, serves(checkout), other_than=first["pid"])
        assert second["restarts"] >= 1
        for _ in range(3):
            call()
        log = (warm.folder_of(runtime) / "logs" / "supervisor.log").read_text()
        assert "the installed Bee changed" in log
    finally:
        subprocess.run(
            [str(bee_executable()), "supervise", "stop", "--warm"],
            env={**os.environ, **warm_env(runtime)},
            capture_output=True,
            timeout=120,
            check=False,
        )


def test_an_editor_configuration_naming_the_design_checkout_with_root_reaches_the_same_warm_host(
    checkout: Path, warm_runtime: Path
) -> None:
    # `bee setup-mcp` wrote --root before --checkout: both spellings are one identity, so one warm host.
    env = {**os.environ, **warm_env(warm_runtime)}
    pids = []
    for spelling in ("--root", "--checkout"):
        argv = [str(bee_executable()), "design", "mcp", "--stdio", spelling, str(checkout.resolve())]
        answered = serve(argv, checkout, env, session({"method": "tools/list"}))
        assert answered[1]["result"]["tools"], answered
        assert "serving in this process" not in answered["stderr"], answered["stderr"]
        pids.append(warm.running_host(warm_runtime, serves(checkout, "design"))["pid"])
    assert pids[0] == pids[1]


def test_every_warm_host_replaced_by_an_upgrade_comes_back_healthy_and_serves_a_session(
    checkout: Path, tmp_path: Path
) -> None:
    runtime = Path(os.path.realpath(tempfile.mkdtemp(prefix="bw", dir="/tmp")))
    installed = tmp_path / "installed.json"
    installed.write_text(json.dumps(version_info()))
    env = {
        **os.environ,
        **warm_env(runtime),
        "BEE_INSTALLED_VERSION_FILE": str(installed),
        "BEE_WARM_IDLE_SECONDS": "300",  # nothing leaves for want of a session while the test looks
    }
    commands = {
        serves(checkout): ["mcp", "serve"],
        serves(checkout, "discovery"): ["mcp", "serve", "--discovery"],
        serves(checkout, "design"): ["design", "mcp", "--stdio", "--checkout", str(checkout.resolve())],
    }

    def drive_each() -> None:
        for argv in commands.values():
            answered = serve([str(bee_executable()), *argv], checkout, env, session({"method": "tools/list"}))
            assert answered[1]["result"]["tools"], answered
            assert "serving in this process" not in answered["stderr"], answered["stderr"]

    try:
        drive_each()
        first = {where: warm.running_host(runtime, where)["pid"] for where in commands}
        installed.write_text(json.dumps({**version_info(), "build": 2}))  # edited sources: every host is replaced
        replaced = {where: warm.running_host(runtime, where, other_than=pid)["pid"] for where, pid in first.items()}
        wait_until(lambda: not any(alive(pid) for pid in first.values()), 120, "the old hosts to leave")
        gone = time.time()
        drive_each()

        # Still the replacements, and healthy when checked after the old ones left (a probe that reached an old
        # host through the shared socket failed once it closed): none failed its checks, none was dropped.
        def checked_since_gone(where: str) -> dict[str, Any] | None:
            entry = warm.host(runtime, where)
            return entry if (entry.get("health") or {}).get("at", 0) > gone else None

        for where, pid in replaced.items():
            entry = wait_until(functools.partial(checked_since_gone, where), 120, f"a health check of {where}")
            assert entry["pid"] == pid and entry["health"]["ok"], entry
        log = (warm.folder_of(runtime) / "logs" / "supervisor.log").read_text()
        assert "failed" not in log.lower().replace("failed to", ""), log
    finally:
        stop_warm(runtime)
        shutil.rmtree(runtime, ignore_errors=True)


MALFORMED = [
    b"{this is not json\n",
    b"\xff\xfe not utf-8\n",
    b"[]\n",
    b'{"jsonrpc": "2.0", "id": 9, "no_method": true}\n',
    b'{"jsonrpc": "2.0", "id": null, "method": "tools/list"}\n',
    b'{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}\n',
    b'{"jsonrpc": "2.0", "id": true, "method": "tools/list"}\n',
    b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "tools/list", "params": {"x": {}}}\n',
    b"\r\n   \n",
    b'{"jsonrpc":"2.0","id":"big-1","method":"tools/list","params":{"pad":"' + b"p" * (600 * 1024) + b'"}}\n',
    b'{"pad":"' + b"q" * (600 * 1024) + b'"}\n',
    b'{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},'
    b'"clientInfo":{"name":"raw","version":"0"}}}\r\n',
    # The last frame: over the limit, and no newline before stdin closes.
    b'{"jsonrpc":"2.0","id":"big-2","method":"tools/list","params":{"pad":"' + b"r" * (600 * 1024) + b'"}}',
]


def test_every_malformed_frame_is_answered_byte_for_byte_alike_warm_and_cold(
    checkout: Path, warm_runtime: Path
) -> None:
    def answers(mode: dict[str, str]) -> list[bytes]:
        process = subprocess.Popen(
            [str(bee_executable()), "mcp", "serve"],
            cwd=checkout,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **mode},
        )
        out, _ = process.communicate(b"".join(MALFORMED), timeout=300)
        return out.splitlines(keepends=True)

    cold = answers({"BEE_WARM": "0"})
    warm_answers = answers(warm_env(warm_runtime))
    assert len(cold) == 12, cold  # every frame that is a request (or cannot tell) has its answer; blank lines none
    # Each answer byte for byte; the order may differ, as the front end answers an oversized frame itself.
    assert sorted(warm_answers) == sorted(cold)


# -- several sessions on one host ----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_several_sessions_share_one_host_each_with_its_own_era_and_requests(
    checkout: Path, warm_runtime: Path, editors: Callable[..., Editor]
) -> None:
    legacy = editors(checkout, warm_runtime)
    modern = editors(checkout, warm_runtime)
    legacy.start("legacy")
    modern.start("2026-07-28")
    host = warm.running_host(warm_runtime, serves(checkout))
    # The same ids in both sessions never cross: each gets its own answer.
    for n in range(3):
        legacy.send(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "tools/call",
                "params": {"name": "bee_context_packet", "arguments": packet()},
            }
        )
        modern.send(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "tools/call",
                "params": {"name": "bee_context_packet", "arguments": packet("nope.py")},
            }
        )
    for _ in range(3):
        assert legacy.read()["result"]["structuredContent"]["status"] == "complete"
        assert tool_error(modern.read())["code"] == "not_found"
    # A legacy session's tools/list needs its own handshake; the modern one carries its envelope.
    assert "result" in modern.request("x", "tools/list")
    assert legacy.close() == 0
    assert "result" in modern.request("y", "tools/list")
    assert warm.host(warm_runtime, serves(checkout))["pid"] == host["pid"]
    statuses = [r for r in warm.status(warm_runtime)["replicas"] if r["address"] == serves(checkout)]
    assert len(statuses) == 1


def test_a_slow_tool_in_one_session_does_not_stall_another_and_a_cancel_stays_in_its_session(
    tmp_path: Path, warm_runtime: Path, editors: Callable[..., Editor]
) -> None:
    checkout = tmp_path / "big"
    checkout.mkdir()
    with open(checkout / "huge.bin", "wb") as huge:
        huge.truncate(4 * 1024**3)  # sparse: hashing it 64 times keeps a worker busy for a long while
    (checkout / "small.txt").write_text("small\n")
    slow_env = {"BEE_PACKET_DEADLINE_SECONDS": "600"}
    busy, other = editors(checkout, warm_runtime, env=slow_env), editors(checkout, warm_runtime, env=slow_env)
    busy.start("legacy")
    other.start("2026-07-28")
    selections = [{"id": f"s{n}", "path": "huge.bin", "representation": "index"} for n in range(64)]
    slow = {"manifestJson": json.dumps({"selections": selections}), "budgetBytes": 262144}
    busy.send(
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "bee_context_packet", "arguments": slow}}
    )
    quick = {"name": "bee_context_packet", "arguments": packet("small.txt")}
    for n in range(3):  # answered while the slow call holds its worker
        assert other.request(n, "tools/call", quick)["result"]["structuredContent"]["status"] == "complete"
    assert busy.process.stdout is not None
    assert not select.select([busy.process.stdout], [], [], 0)[0], "the slow call answered already"
    busy.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
    assert other.request("after", "tools/call", quick)["result"]["isError"] is False
    assert busy.request(8, "tools/call", quick)["result"]["structuredContent"]["status"] == "complete"
    assert warm.host(warm_runtime, serves(checkout))["state"] == "running"


# -- what the front end refuses to use -----------------------------------------------------------------------------


def front_end_cold_reason(checkout: Path, runtime: Path, env: dict[str, str] | None = None) -> str:
    """Run `bee mcp serve` until its first answer; the line it printed on stderr about serving cold."""
    completed = subprocess.run(
        [str(bee_executable()), "mcp", "serve"],
        cwd=checkout,
        input=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": LEGACY_INIT}).encode() + b"\n",
        capture_output=True,
        env={**os.environ, **warm_env(runtime), "BEE_WARM_WAIT_SECONDS": "3", **(env or {})},
        timeout=300,
        check=False,
    )
    assert b'"serverInfo"' in completed.stdout, completed.stderr  # served, cold, all the same
    lines = [line for line in completed.stderr.decode().splitlines() if "serving in this process" in line]
    assert len(lines) == 1, completed.stderr
    return lines[0]


def identity_for(checkout: Path, runtime: Path) -> dict[str, str]:
    env = {**os.environ, **warm_env(runtime), "BEE_WARM_WAIT_SECONDS": "3"}
    resolved = str(checkout.resolve())
    return make_identity("core", resolved, os.path.join(resolved, ".bee"), "warning", env, place=folder_id(resolved))


@pytest.fixture
def lonely_runtime(tmp_path: Path) -> Iterator[Path]:
    """A runtime directory where no real warm supervisor ever runs: the test's stand-ins answer instead."""
    runtime = Path(os.path.realpath(tempfile.mkdtemp(prefix="bw", dir="/tmp")))
    yield runtime
    shutil.rmtree(runtime, ignore_errors=True)


def ready(path: str, info: dict[str, str] | None = None) -> Callable[[Any], dict[str, Any]]:
    return lambda request: {"bee": "ready", "socket": path, "versionInfo": info or version_info()}


def test_a_host_whose_listener_is_another_users_is_never_used(checkout: Path, lonely_runtime: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to run a process as another user")
    folder = warm.folder_of(lonely_runtime)
    path = warm.socket_of(folder, identity_for(checkout, lonely_runtime))
    supervisor = warm.fake_supervisor(folder, ready(path))
    foreign = warm.listen_as(65534, path)
    try:
        reason = front_end_cold_reason(checkout, lonely_runtime)
    finally:
        foreign.kill()
        foreign.wait()
        assert foreign.stdout is not None
        foreign.stdout.close()
        supervisor.close()
    assert "is uid 65534, not this user" in reason and "refused" in reason


def test_a_host_of_another_version_or_identity_is_never_used(checkout: Path, lonely_runtime: Path) -> None:
    folder = warm.folder_of(lonely_runtime)
    identity = identity_for(checkout, lonely_runtime)
    path = warm.socket_of(folder, identity)
    supervisor = warm.fake_supervisor(folder, ready(path))
    welcomes = iter(
        [
            {
                "bee": "welcome",
                "wire": WIRE,
                "identity": identity,
                "versionInfo": {**version_info(), "version": "0.0.1"},
            },
            {
                "bee": "welcome",
                "wire": WIRE,
                "identity": {**identity, "checkout": "/elsewhere"},
                "versionInfo": version_info(),
            },
        ]
    )
    stale = {"welcome": next(welcomes)}

    def serve(conn: socket.socket) -> None:
        read_line(conn, time.monotonic() + 10)
        conn.sendall(json.dumps(stale["welcome"]).encode() + b"\n")
        warm.answer_lines(conn, lambda message: {"jsonrpc": "2.0", "id": message.get("id"), "result": {}})

    host = warm.Responder(path, serve)
    try:
        assert "reports" in front_end_cold_reason(checkout, lonely_runtime)  # another version: never relayed to
        stale["welcome"] = next(welcomes)
        assert "serves another checkout" in front_end_cold_reason(checkout, lonely_runtime)
    finally:
        host.close()
        supervisor.close()


def test_a_front_end_too_old_for_the_installed_bee_says_so_once_and_answers_every_request(
    checkout: Path, lonely_runtime: Path, editors: Callable[..., Editor]
) -> None:
    folder = warm.folder_of(lonely_runtime)
    identity = identity_for(checkout, lonely_runtime)
    path = warm.socket_of(folder, identity)
    supervisor = warm.fake_supervisor(folder, ready(path))
    refusing = threading.Event()

    def serve(conn: socket.socket) -> None:
        read_line(conn, time.monotonic() + 10)
        if refusing.is_set():
            conn.sendall(b'{"bee": "refused", "code": "wire", "error": "this host speaks wire 2"}\n')
            return
        welcome = {"bee": "welcome", "wire": WIRE, "identity": identity, "versionInfo": version_info(), "reads": []}
        conn.sendall(json.dumps(welcome).encode() + b"\n")
        warm.answer_lines(conn, lambda m: {"jsonrpc": "2.0", "id": m["id"], "result": {}} if "id" in m else None)

    host = warm.Responder(path, serve)
    editor = editors(checkout, lonely_runtime, env={"BEE_WARM_WAIT_SECONDS": "5"})
    try:
        assert editor.request(1, "tools/list") == {"jsonrpc": "2.0", "id": 1, "result": {}}
        refusing.set()
        for conn in host.connections:  # the "upgrade": the old host goes, the new one refuses this wire
            conn.shutdown(socket.SHUT_RDWR)
        for n in (2, 3):
            reply = editor.request(n, "tools/list")
            assert reply["id"] == n and "no longer speaks this front end's protocol" in reply["error"]["message"]
        call = editor.request(4, "tools/call", {"name": "bee_context_packet", "arguments": packet()})
        error = tool_error(call)
        assert error["code"] == "unavailable" and error["retryable"] is False
        assert "restart this MCP server" in error["error"]
        editor.close()
        assert editor.process.stderr is not None
        said = editor.process.stderr.read().decode()

        assert said.count("no longer speaks this front end's protocol") == 1, said
    finally:
        host.close()
        supervisor.close()


def test_the_host_refuses_a_connection_from_another_user_and_one_naming_another_identity(
    checkout: Path, warm_runtime: Path
) -> None:
    # A listener of the test's own, where another user can reach it: the host's own checks are all that stand.
    open_dir = Path(os.path.realpath(tempfile.mkdtemp(prefix="bo", dir="/tmp")))
    open_dir.chmod(0o777)
    path = str(open_dir / "host.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o777)
    listener.listen(8)
    env = {**os.environ, **warm_env(warm_runtime)}
    host = subprocess.Popen(
        [str(bee_executable()), "mcp", "serve", "--checkout", str(checkout), "--warm-fd", str(listener.fileno())],
        pass_fds=(listener.fileno(),),
        env=env,
        stderr=subprocess.DEVNULL,
    )
    listener.close()
    try:
        resolved = str(checkout.resolve())
        instance = os.path.join(resolved, ".bee")
        identity = make_identity("core", resolved, instance, "warning", env, place=folder_id(resolved))

        def hello(identity: dict[str, str]) -> dict[str, Any]:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.connect(path)
                send_line(sock, {"bee": "hello", "wire": WIRE, "role": "session", "identity": identity, "environ": env})
                return read_line(sock, time.monotonic() + 120)

        assert hello(identity)["bee"] == "welcome"
        refused = hello({**identity, "checkout": "/somewhere/else"})
        assert refused["bee"] == "refused" and refused["code"] == "identity"
        refused = hello({**identity, "environment": environment_digest({})})
        assert refused["bee"] == "refused" and refused["code"] == "identity"
        if os.getuid() == 0:
            # The host answers another user before it reads a byte from it.
            probe = (
                "import socket\n"
                f"s = socket.socket(socket.AF_UNIX); s.settimeout(60); s.connect({path!r})\n"
                "print(s.recv(4096).decode())\n"
            )
            completed = subprocess.run(
                ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", probe],
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            )
            answer = json.loads(completed.stdout)
            assert answer["bee"] == "refused" and answer["code"] == "uid" and "uid 65534" in answer["error"]
        assert hello(identity)["bee"] == "welcome"  # and it keeps serving its own user
    finally:
        host.terminate()
        assert host.wait(timeout=60) == 0
        shutil.rmtree(open_dir, ignore_errors=True)


def test_a_runtime_directory_open_to_others_means_cold_with_the_reason(checkout: Path, tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    (runtime / "bee").mkdir(parents=True)
    runtime.chmod(0o700)
    (runtime / "bee").chmod(0o775)
    reason = front_end_cold_reason(checkout, runtime)
    assert "open to other users (mode 0775" in reason


# -- nothing of Bee outlives its use -------------------------------------------------------------------------------


#: An editor: it starts the front end, waits for its first answer, tells the test the front end's pid, and waits.
EDITOR = """
import json, subprocess, sys, time
front = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": json.loads(sys.argv[1])}
front.stdin.write(json.dumps(init).encode() + b"\\n"); front.stdin.flush()
front.stdout.readline()
print(front.pid, flush=True)
time.sleep(3600)
"""


def test_sigkill_of_the_editor_leaves_nothing_of_bee_but_the_warm_supervisor_and_its_hosts(
    checkout: Path, warm_runtime: Path
) -> None:
    editor = subprocess.Popen(
        [
            sys.executable,
            "-c",
            EDITOR,
            json.dumps(LEGACY_INIT),
            str(bee_executable()),
            "mcp",
            "serve",
            "--checkout",
            str(checkout),
        ],
        stdout=subprocess.PIPE,
        env={**os.environ, **warm_env(warm_runtime)},
    )
    assert editor.stdout is not None
    front = int(editor.stdout.readline())
    supervisor = int((warm.folder_of(warm_runtime) / "supervisor.lock").read_text())
    editor.kill()
    editor.wait()
    editor.stdout.close()
    wait_until(lambda: not alive(front), 30, "the front end to exit after its editor was killed")
    left = warm.warm_processes(warm_runtime)

    def kept(pid: int) -> bool:  # the warm supervisor, or one of its descendants
        while pid in left and pid != supervisor:
            pid = left[pid][0]
        return pid == supervisor

    assert supervisor in left and all(kept(pid) for pid in left), left


def test_a_host_with_no_session_leaves_and_then_so_does_the_warm_supervisor(
    checkout: Path, editors: Callable[..., Editor]
) -> None:
    runtime = Path(os.path.realpath(tempfile.mkdtemp(prefix="bw", dir="/tmp")))
    quick = {"BEE_WARM_IDLE_SECONDS": "1", "BEE_WARM_SUPERVISOR_IDLE_SECONDS": "1"}
    editor = editors(checkout, runtime, env=quick)
    editor.start("legacy")
    host = warm.running_host(runtime, serves(checkout))
    folder = warm.folder_of(runtime)
    supervisor = int((folder / "supervisor.lock").read_text())
    status = subprocess.run(
        [str(bee_executable()), "supervise", "status", "--warm"],
        env={**os.environ, **warm_env(runtime)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert status.returncode == 0 and serves(checkout) in status.stdout and "running" in status.stdout
    assert editor.close() == 0
    wait_until(lambda: not alive(host["pid"]), 120, "the idle host to exit")
    wait_until(lambda: not alive(supervisor), 120, "the warm supervisor to exit once it holds no host")
    assert not (folder / "control.sock").exists()
    assert list((folder / "hosts").iterdir()) == []
    shutil.rmtree(runtime, ignore_errors=True)
