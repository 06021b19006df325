"""Health checks: ``GET /health`` over HTTP, an MCP handshake over a child's stdio, or only that it runs.

Each check answers a :class:`Probe`: whether the replica is healthy, a short detail for people, and the version
triple the replica reported in the same answer (for the contract check).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import httpx

from bee_supervisor.contract import CONTRACT_META_KEY, VersionInfo, triple

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
