"""Shared test helpers: the anyio backend, sample checkouts, and real host processes behind the official client."""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"

#: The two protocol eras every host serves: the 2025-11-25 handshake and 2026-07-28 per-request envelopes.
ERAS = ("legacy", "2026-07-28")


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


def bee_executable() -> Path:
    """The installed `bee` console script, exactly what an editor launches."""
    exe = Path(sys.executable).parent / "bee"
    assert exe.exists(), f"the bee script is not installed next to {sys.executable}; run ./dev test"
    return exe


def make_checkout(target: Path) -> Path:
    """Copy the sample checkout into ``target`` and return it."""
    shutil.copytree(FIXTURES / "checkout", target)
    return target


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return make_checkout(tmp_path / "checkout")


@asynccontextmanager
async def core_client(checkout: Path, era: str, *extra: str, env: dict[str, str] | None = None) -> AsyncIterator[Any]:
    """A real `bee mcp serve` subprocess in ``checkout``, spoken to by the official MCP client in ``era``."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=str(bee_executable()), args=["mcp", "serve", *extra], cwd=checkout, env=env or None
    )
    async with Client(params, mode=era, read_timeout_seconds=60) as client:
        yield client
