"""A real `bee tracker serve` subprocess on 127.0.0.1, and official MCP clients with real signed tokens."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.harness.postgres import free_port

#: Runs argv[2:] with at most argv[1] open file descriptors (soft and hard limit): no preexec_fn, no shell.
_WITH_NOFILE = (
    "import os, resource, sys; n = int(sys.argv[1]); resource.setrlimit(resource.RLIMIT_NOFILE, (n, n)); "
    "os.execv(sys.argv[2], sys.argv[2:])"
)


class TrackerProcess:
    """`bee tracker serve` with its own home; start, stop, kill -9 and restart on the same port."""

    def __init__(self, home: Path, store: str | None = None, *extra: str) -> None:
        self.home = home
        self.store = store
        self.extra = list(extra)
        #: Where the server runs, and whether it is told its home (False: it finds it as a user's would).
        self.cwd: Path | None = None
        self.pass_home = True
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.log = home / "server.log"
        #: The server's file-descriptor limit (soft and hard), when a test sets one (None: this process's).
        self.nofile: int | None = None
        #: Listening sockets it serves on instead of binding its port (``--fd``, as the supervisor hands replicas
        #: one shared address); ``port`` is then where its health is asked (one of them).
        self.fds: tuple[int, ...] = ()
        #: What its environment adds to this process's.
        self.env: dict[str, str] = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def argv(self) -> list[str]:
        argv = [
            str(Path(sys.executable).parent / "bee"),
            "tracker",
            "serve",
            *(["--home", str(self.home)] if self.pass_home else []),
            *([arg for fd in self.fds for arg in ("--fd", str(fd))] if self.fds else ["--port", str(self.port)]),
            *self.extra,
        ]
        if self.store:
            argv += ["--store", self.store]
        if self.nofile is not None:
            argv = [sys.executable, "-c", _WITH_NOFILE, str(self.nofile), *argv]
        return argv

    def start(self, timeout: float = 60.0) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        log = self.log.open("ab")
        self.process = subprocess.Popen(
            self.argv(),
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **self.env},
            cwd=self.cwd,
            pass_fds=self.fds,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"tracker exited with {self.process.returncode}:\n{self.log.read_text()}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError(f"tracker did not become healthy:\n{self.log.read_text()}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def kill9(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def token(self, actor: str, *extra: str) -> str:
        """A token for ``actor`` signed with this tracker's key.

        Minted in this process by the function `bee tracker token` calls (the same claims, the same key read the
        same way), unless ``extra`` command-line options are given: then by the command itself. A command costs
        a Python start (about half a second of CPU), and the suite mints hundreds of tokens; the command's own
        behaviour is tested where it is the subject (tests/e2e/test_tracker_tokens.py, tests/tracker/test_home.py).
        """
        if not extra:
            from bee_tracker.auth import mint
            from bee_tracker.home import read_key

            return mint(read_key(self.home), actor)
        completed = subprocess.run(
            [
                str(Path(sys.executable).parent / "bee"),
                "tracker",
                "token",
                "--home",
                str(self.home),
                "--actor",
                actor,
                *extra,
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return completed.stdout.strip()


#: The ``tracker_factory`` fixture: ``start(store=None, *extra_args, home=None, nofile=None)`` starts one tracker.
TrackerFactory = Callable[..., TrackerProcess]


@asynccontextmanager
async def tracker_client(url: str, token: str | None, era: str = "legacy", **http: Any) -> AsyncIterator[Any]:
    """The official MCP client over Streamable HTTP with ``Authorization: Bearer <token>``."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(60.0), **http) as client:
        # httpx's client, which the SDK's transport (typed for httpx2's) drives the same way: the e2e tests pass it.
        transport = streamable_http_client(url, http_client=client)  # type: ignore[arg-type]
        async with Client(transport, mode=era, cache=None) as mcp_client:
            yield mcp_client


#: What a 2026-07-28 request carries in ``params._meta`` in place of the handshake (as the official client sends it).
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bee-tests", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class ToolPoster:
    """Tool calls as single self-contained 2026-07-28 POSTs over one httpx connection pool, nothing else.

    The official client sends a ``tools/list`` beside every call (to check results against output schemas) and
    parses both into models; a reliability test making tens of thousands of calls measures the server's races,
    so it speaks the same wire requests without the client's own work. Answers are read as every client reads
    them: a failure is ``isError`` with the error envelope as JSON text.
    """

    def __init__(self, http: httpx.AsyncClient, url: str, token: str) -> None:
        self.http, self.url = http, url
        self.headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": "2026-07-28",
            "Authorization": f"Bearer {token}",
        }
        self._ids = 0

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
        """``(is_error, envelope or structured content)`` of one call of ``tool``."""
        import json

        self._ids += 1
        request = {
            "jsonrpc": "2.0",
            "id": self._ids,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": MODERN_META},
        }
        # 2026-07-28 names the method and tool in headers too, so that a proxy can route without the body.
        headers = {**self.headers, "Mcp-Method": "tools/call", "Mcp-Name": tool}
        response = await self.http.post(self.url, content=json.dumps(request), headers=headers)
        response.raise_for_status()
        result = response.json()["result"]
        if result.get("isError"):
            return True, json.loads(result["content"][0]["text"])
        return False, result["structuredContent"]
