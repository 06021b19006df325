"""`bee doctor`: spawn each installed stdio host once per protocol era, cold and warm, and check it against the
contracts.

Cold, the host serves in the process doctor starts (``BEE_WARM=0``); warm, that process is the front end an editor
gets, relaying to a warm host of the warm supervisor (started if none runs). A warm check in which the front end
fell back to serving cold fails, with the reason it printed.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from bee_contracts import launch, load_catalog, version_info
from bee_contracts.hosts import HostEntry, installed_hosts
from bee_contracts.wire import CONTRACT_META_KEY

ERAS = ("legacy", "2026-07-28")
MODES = ("cold", "warm")
#: What the front end prints when it serves cold because no warm host could be had (bee_cli.frontend).
_DECLINED = "serving in this process"


@dataclass
class Check:
    host: str
    era: str
    ok: bool
    #: The view checked: "" for the host's own catalog, else the catalog of the view (such as "discovery").
    view: str = ""
    #: ``cold`` (served in the process started) or ``warm`` (through the front end and a warm host).
    mode: str = "cold"
    protocol: str = ""
    tools: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)


async def check_host(
    spec: HostEntry,
    checkout: Path,
    era: str,
    timeout: float = 60.0,
    *,
    view: str = "",
    extra: tuple[str, ...] = (),
    mode: str = "cold",
) -> Check:
    """Spawn ``spec`` (in ``view``, started with ``extra`` arguments) in ``checkout``, cold or warm (``mode``), and
    compare what it serves with the installed contracts: the version triple, and tools/list against the view's
    catalog."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    expected = version_info()
    catalog = [tool.to_wire() for tool in load_catalog(view or spec.name)]
    # In the checkout, as an editor starts it, and as safely: nothing of the checkout on the import path.
    command, *argv = launch.bee(*spec.argv(checkout), *extra)
    env = {**os.environ, "BEE_WARM": "0" if mode == "cold" else "1"}
    params = StdioServerParameters(command=command, args=argv, cwd=checkout, env=env)
    check = Check(spec.name, era, ok=False, view=view, mode=mode)
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as errlog:
        try:
            with anyio.fail_after(timeout):
                async with Client(stdio_client(params, errlog=errlog), mode=era) as client:
                    listed = await client.list_tools()
                    check.protocol = client.protocol_version
                    check.tools = len(listed.tools)
                    served = [tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in listed.tools]
                    stamp: dict[str, Any] = (listed.meta or {}).get(CONTRACT_META_KEY) or {}
        except Exception as exc:  # any failure to start or answer is the finding
            check.problems.append(f"did not answer: {exc.__class__.__name__}: {exc}")
            return check
        errlog.seek(0)
        declined = [line for line in errlog.read().splitlines() if _DECLINED in line]
    check.seconds = time.perf_counter() - started
    if mode == "warm" and declined:
        check.problems.append(f"the warm path was not taken: {declined[0]}")
    for key in ("version", "contractVersion", "contractDigest"):
        if stamp.get(key) != expected[key]:
            check.problems.append(f"{key} is {stamp.get(key)!r}, expected {expected[key]!r}")
    if served != catalog:
        check.problems.append("tools/list differs from the contract catalog")
    check.ok = not check.problems
    return check


async def run_checks(checkout: Path) -> list[Check]:
    """Check every installed stdio host (from the ``bee.hosts`` registry), in each of its views, in both eras,
    cold and then warm."""
    checks = []
    for mode in MODES:
        for spec in installed_hosts():
            if spec.transport != "stdio":
                continue
            for view, extra in [("", ()), *spec.views]:
                for era in ERAS:
                    checks.append(await check_host(spec, checkout, era, view=view, extra=extra, mode=mode))
    return checks
