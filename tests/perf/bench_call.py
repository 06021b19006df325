"""Per-call cost of Bee's host seam against the bare SDK, side by side in one run (`./dev bench call`).

Three stdio servers stay up together and are called in interleaved batches, so all of them see the same machine
noise:

- ``sdk``: the bare SDK (tests/perf/minimal_server.py): the SDK's own stdio, no validation, no limits;
- ``seam``: Bee's host seam with a no-op tool (tests/perf/noop_host.py): catalog, argument validation, the call
  object, the worker thread, the result guard and the capped transport — what every Bee tool pays;
- ``core``: the real `bee mcp serve` answering its cheapest useful call (a packet indexing one file).

For each: the median round trip through the official client, and the server's CPU time per call (user + system,
from /proc), which a loaded machine disturbs far less than wall time. Writes tests/perf/reports/call.json.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).parent))
from _report import median, verdict, write_report

HERE = Path(__file__).parent
BEE = Path(sys.executable).parent / "bee"
ROUNDS = 20
BATCH = 100
WARMUP = 50


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def find_pid(marker: str) -> int:
    """The pid of the (newest) process whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmdline:
                found.append(int(entry.name))
    assert found, f"no process runs {marker}"
    return max(found)


async def main_async(checkout: Path) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    manifest = json.dumps({"selections": [{"id": "r", "path": "README.md", "representation": "index"}]})
    servers = {
        "sdk": (StdioServerParameters(command=sys.executable, args=[str(HERE / "minimal_server.py")]), "echo", {}),
        "seam": (StdioServerParameters(command=sys.executable, args=[str(HERE / "noop_host.py")]), "echo", {}),
        "core": (
            # Cold: the host in the process the client spawns (through a warm host: bench_warm.py).
            StdioServerParameters(
                command=str(BEE), args=["mcp", "serve", "--checkout", str(checkout)], env={"BEE_WARM": "0"}
            ),
            "bee_context_packet",
            {"manifestJson": manifest, "budgetBytes": 4096},
        ),
    }
    markers = {"sdk": "minimal_server.py", "seam": "noop_host.py", "core": str(checkout)}
    latencies: dict[str, list[float]] = {name: [] for name in servers}
    cpu: dict[str, float] = dict.fromkeys(servers, 0.0)
    async with AsyncExitStack() as stack:
        clients = {}
        for name, (params, tool, arguments) in servers.items():
            client = await stack.enter_async_context(Client(params, mode="legacy", read_timeout_seconds=60))
            await client.list_tools()
            for _ in range(WARMUP):
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, result
            clients[name] = client
        pids = {name: find_pid(marker) for name, marker in markers.items()}
        for _ in range(ROUNDS):
            for name, (_, tool, arguments) in servers.items():
                client = clients[name]
                before = cpu_seconds(pids[name])
                for _ in range(BATCH):
                    started = time.perf_counter()
                    await client.call_tool(tool, arguments)
                    latencies[name].append(time.perf_counter() - started)
                cpu[name] += cpu_seconds(pids[name]) - before
    calls = ROUNDS * BATCH
    return {
        name: {"medianMs": median(latencies[name]) * 1000, "cpuMsPerCall": cpu[name] / calls * 1000, "calls": calls}
        for name in servers
    }


def main() -> None:
    checkout = Path(tempfile.mkdtemp(prefix="bee-bench-call-"))
    (checkout / "README.md").write_text("# A checkout\n\nWith a readme.\n")
    measured = anyio.run(main_async, checkout)
    sdk, seam, core = measured["sdk"], measured["seam"], measured["core"]
    report = {
        **measured,
        "seamRatio": seam["medianMs"] / sdk["medianMs"],
        "seamCpuRatio": seam["cpuMsPerCall"] / sdk["cpuMsPerCall"],
        "coreRatio": core["medianMs"] / sdk["medianMs"],
        "coreCpuRatio": core["cpuMsPerCall"] / sdk["cpuMsPerCall"],
    }
    path = write_report("call", report)
    print(json.dumps(report, indent=2))
    print()
    for name in ("sdk", "seam", "core"):
        row = measured[name]
        print(f"{name:5s} median {row['medianMs']:.3f} ms   server cpu {row['cpuMsPerCall']:.3f} ms/call")
    print(f"seam vs bare SDK, round trip: {verdict(report['seamRatio'], 1.3, higher_is_better=False)}")
    print(f"seam vs bare SDK, server cpu: {report['seamCpuRatio']:.2f}x")
    print(f"core packet vs bare SDK echo, round trip: {report['coreRatio']:.2f}x")
    print(f"report: {path}")


if __name__ == "__main__":
    main()
