"""`bee doctor`: spawn each installed stdio host once per protocol era and check it against the contracts."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from bee_contracts import load_catalog, version_info
from bee_contracts.hosts import HostEntry, installed_hosts

CONTRACT_META_KEY = "dev.bee/contract"  # mirrors bee_hostkit.CONTRACT_META_KEY without importing a host runtime
ERAS = ("legacy", "2026-07-28")


@dataclass
class Check:
    host: str
    era: str
    ok: bool
    #: The view checked: "" for the host's own catalog, else the catalog of the view (such as "discovery").
    view: str = ""
    protocol: str = ""
    tools: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)


async def check_host(
    spec: HostEntry, checkout: Path, era: str, timeout: float = 60.0, *, view: str = "", extra: tuple[str, ...] = ()
) -> Check:
    """Spawn ``spec`` (in ``view``, started with ``extra`` arguments) in ``checkout`` and compare what it serves
    with the installed contracts: the version triple, and tools/list against the view's catalog."""
    from mcp import Client, StdioServerParameters

    expected = version_info()
    catalog = [tool.to_wire() for tool in load_catalog(view or spec.name)]
    argv = ["-m", "bee_cli", *spec.argv(checkout), *extra]
    params = StdioServerParameters(command=sys.executable, args=argv, cwd=checkout)
    check = Check(spec.name, era, ok=False, view=view)
    started = time.perf_counter()
    try:
        with anyio.fail_after(timeout):
            async with Client(params, mode=era) as client:
                listed = await client.list_tools()
                check.protocol = client.protocol_version
                check.tools = len(listed.tools)
                served = [tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in listed.tools]
                stamp: dict[str, Any] = (listed.meta or {}).get(CONTRACT_META_KEY) or {}
    except Exception as exc:  # any failure to start or answer is the finding
        check.problems.append(f"did not answer: {exc.__class__.__name__}: {exc}")
        return check
    check.seconds = time.perf_counter() - started
    for key in ("version", "contractVersion", "contractDigest"):
        if stamp.get(key) != expected[key]:
            check.problems.append(f"{key} is {stamp.get(key)!r}, expected {expected[key]!r}")
    if served != catalog:
        check.problems.append("tools/list differs from the contract catalog")
    check.ok = not check.problems
    return check


async def run_checks(checkout: Path) -> list[Check]:
    """Check every installed stdio host (from the ``bee.hosts`` registry), in each of its views, in both eras."""
    checks = []
    for spec in installed_hosts():
        if spec.transport != "stdio":
            continue
        for view, extra in [("", ()), *spec.views]:
            for era in ERAS:
                checks.append(await check_host(spec, checkout, era, view=view, extra=extra))
    return checks
