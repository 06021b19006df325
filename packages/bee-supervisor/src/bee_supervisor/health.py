"""Health checks: ``GET /health`` over HTTP, an MCP handshake over a child's stdio, or only that it runs.

Each check answers a :class:`Probe`: whether the replica is healthy, a short detail for people, and the version
triple the replica reported in the same answer (for the contract check).
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import httpx

from bee_contracts.wire import CONTRACT_META_KEY
from bee_supervisor.contract import VersionInfo, triple

if TYPE_CHECKING:
    from mcp import Client


@dataclass(frozen=True)
class Probe:
    """One check's answer."""

    ok: bool
    detail: str
    stamp: VersionInfo | None = None
    #: Wall-clock time of the answer (for status: "last health result").
    at: float = field(default_factory=time.time)


async def probe_http(client: httpx.AsyncClient, url: str, timeout: float) -> Probe:
    """GET ``url``: healthy on 200; the version triple is read from its JSON body."""
    try:
        response = await client.get(url, timeout=timeout)
    except httpx.HTTPError as exc:
        return Probe(False, f"GET {url}: {exc.__class__.__name__}: {exc}".rstrip(": "))
    if response.status_code != 200:
        return Probe(False, f"GET {url}: HTTP {response.status_code}")
    try:
        body = response.json()
    except ValueError:
        body = None
    return Probe(True, f"GET {url}: HTTP 200", triple(body))


async def wait_http(client: httpx.AsyncClient, url: str, *, poll: float = 0.05) -> Probe:
    """Probe ``url`` until it answers 200 (the caller bounds the wait), returning that answer."""
    while True:
        probe = await probe_http(client, url, timeout=max(poll, 30.0))
        if probe.ok:
            return probe
        await anyio.sleep(poll)


def handshake_stamp(client: Client) -> VersionInfo | None:
    """The ``dev.bee/contract`` stamp of the handshake (``initialize`` or ``server/discover``) ``client`` made."""
    session = client.session
    result: Any = session.discover_result or session.initialize_result
    meta = getattr(result, "meta", None) or {}
    return triple(meta.get(CONTRACT_META_KEY))


@asynccontextmanager
async def mcp_session(read_fd: int, write_fd: int, timeout: float) -> AsyncIterator[Client]:
    """An MCP client session (the official SDK's, in ``auto`` mode) over a child's stdout and stdin pipe ends.

    Entering it performs the handshake; :func:`handshake_stamp` then reads what the host reported.
    """
    from mcp import Client

    from bee_supervisor._pipes import pipe_transport

    async with Client(pipe_transport(read_fd, write_fd), read_timeout_seconds=timeout, cache=None) as client:
        yield client


@asynccontextmanager
async def warm_session(path: str, identity: Mapping[str, str], timeout: float) -> AsyncIterator[Client]:
    """An MCP client session (the official SDK's, in ``auto`` mode) with the warm host listening at ``path``.

    It connects as a front end does — the peer must be this user's process, and its welcome must name ``identity``
    — but as a probe, which never keeps a host from going idle. Entering it performs both handshakes.

    Raises:
        ConnectionError: the host is another user's, refused the hello, or named another identity.
        TimeoutError: no welcome within ``timeout`` seconds.
    """
    from mcp import Client

    from bee_contracts.warm import hello_message, peer_uid
    from bee_supervisor._pipes import pipe_transport

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        with anyio.fail_after(timeout):
            try:
                sock.connect(path)
            except BlockingIOError:  # the listener's backlog is full: wait for room
                await anyio.wait_writable(sock)
                sock.connect(path)
            if peer_uid(sock) != os.getuid():
                raise ConnectionError(f"the process behind {path} is another user's")
            hello = hello_message(dict(identity), {}, "probe")
            await _send_all(sock, json.dumps(hello).encode() + b"\n")
            welcome = await _read_line(sock)
        if welcome.get("bee") != "welcome":
            raise ConnectionError(f"the host refused the probe: {welcome.get('error')}")
        if welcome.get("identity") != dict(identity):
            raise ConnectionError("the host serves another identity")
        async with Client(
            pipe_transport(sock.fileno(), sock.fileno()), read_timeout_seconds=timeout, cache=None
        ) as client:
            yield client
    finally:
        sock.close()


async def _send_all(sock: socket.socket, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[sock.send(view) :]
        except BlockingIOError:
            await anyio.wait_writable(sock)


async def _read_line(sock: socket.socket, limit: int = 1024 * 1024) -> dict[str, Any]:
    """One JSON object line: the welcome (nothing follows it before the client's first request)."""
    data = b""
    while not data.endswith(b"\n"):
        try:
            chunk = sock.recv(65536)
        except BlockingIOError:
            await anyio.wait_readable(sock)
            continue
        if not chunk:
            raise ConnectionError("the host closed the connection before its welcome")
        data += chunk
        if len(data) > limit:
            raise ConnectionError("a welcome line over the limit")
    value = json.loads(data)
    if not isinstance(value, dict):
        raise ConnectionError("a welcome that is not a JSON object")
    return value


async def probe_mcp(client: Client, timeout: float) -> Probe:
    """A ``tools/list`` over the open session (every era serves it; ``ping`` is gone from 2026-07-28), with the
    contract stamp it carries."""
    try:
        with anyio.fail_after(timeout):
            listed = await client.list_tools()
    except Exception as exc:  # any failure to answer is the finding
        return Probe(False, f"tools/list: {exc.__class__.__name__}: {exc}".rstrip(": "))
    return Probe(
        True, f"tools/list answered ({len(listed.tools)} tools)", triple((listed.meta or {}).get(CONTRACT_META_KEY))
    )
