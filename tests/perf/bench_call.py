"""Per-call cost of Bee's host seam against the bare SDK, side by side in one run (`./dev bench call`).

Three stdio servers stay up together and four kinds of call are made in interleaved batches, so all of them see
the same machine noise:

- ``sdk``: the bare SDK (tests/perf/minimal_server.py): the SDK's own stdio, no validation, no limits;
- ``seam``: Bee's host seam with a no-op tool (tests/perf/noop_host.py): catalog, argument validation, the call
  object, the worker thread, the result guard and the capped transport — what every Bee tool pays;
- ``encode``: the real `bee mcp serve` answering ``bee_representation_encode`` on ``{"a":1}``;
- ``core``: the same host answering its cheapest packet (a packet indexing one file).

For each: the median round trip through the official client, and the server's CPU time per call (user + system,
from /proc), which a loaded machine disturbs far less than wall time; every ratio is against the bare SDK, the
target is 1.2x. Writes tests/perf/reports/call.json.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio

from tests.perf._report import median, verdict, write_report

HERE = Path(__file__).parent
BEE = Path(sys.executable).parent / "bee"
ROUNDS = 20
BATCH = 100
WARMUP = 50
TARGET = 1.2


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far."""
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
        "sdk": StdioServerParameters(command=sys.executable, args=[str(HERE / "minimal_server.py")]),
        "seam": StdioServerParameters(command=sys.executable, args=[str(HERE / "noop_host.py")]),
        # Cold: the host in the process the client spawns (through a warm host: bench_warm.py).
        "core": StdioServerParameters(
            command=str(BEE), args=["mcp", "serve", "--checkout", str(checkout)], env={"BEE_WARM": "0"}
        ),
    }
    markers = {"sdk": "minimal_server.py", "seam": "noop_host.py", "core": str(checkout)}
    # contender: (server, tool, arguments)
    contenders: dict[str, tuple[str, str, dict[str, Any]]] = {
        "sdk": ("sdk", "echo", {}),
        "seam": ("seam", "echo", {}),
        "encode": ("core", "bee_representation_encode", {"json": '{"a":1}'}),
        "core": ("core", "bee_context_packet", {"manifestJson": manifest, "budgetBytes": 4096}),
    }
    latencies: dict[str, list[float]] = {name: [] for name in contenders}
    cpu: dict[str, float] = dict.fromkeys(contenders, 0.0)
    async with AsyncExitStack() as stack:
        clients = {}
        for name, params in servers.items():
            client = await stack.enter_async_context(Client(params, mode="legacy", read_timeout_seconds=60))
            await client.list_tools()
            clients[name] = client
        for server, tool, arguments in contenders.values():
            for _ in range(WARMUP):
                result = await clients[server].call_tool(tool, arguments)
                assert not result.is_error, result
        pids = {name: find_pid(marker) for name, marker in markers.items()}
        for _ in range(ROUNDS):
            for name, (server, tool, arguments) in contenders.items():
                client = clients[server]
                before = cpu_seconds(pids[server])
                for _ in range(BATCH):
                    started = time.perf_counter()
                    await client.call_tool(tool, arguments)
                    latencies[name].append(time.perf_counter() - started)
                cpu[name] += cpu_seconds(pids[server]) - before
    calls = ROUNDS * BATCH
    return {
        name: {"medianMs": median(latencies[name]) * 1000, "cpuMsPerCall": cpu[name] / calls * 1000, "calls": calls}
        for name in contenders
    }


def main() -> None:
    checkout = Path(tempfile.mkdtemp(prefix="bee-bench-call-"))
    (checkout / "README.md").write_text("# A checkout\n\nWith a readme.\n")
    load = os.getloadavg()
    measured = anyio.run(main_async, checkout)
    sdk = measured["sdk"]
    report: dict[str, Any] = {"loadAverage": [*load, *os.getloadavg()], **measured}
    for name in ("seam", "encode", "core"):
        report[f"{name}Ratio"] = measured[name]["medianMs"] / sdk["medianMs"]
        report[f"{name}CpuRatio"] = measured[name]["cpuMsPerCall"] / sdk["cpuMsPerCall"]
    path = write_report("call", report)
    print(json.dumps(report, indent=2))
    print()
    for name, row in measured.items():
        print(f"{name:6s} median {row['medianMs']:.3f} ms   server cpu {row['cpuMsPerCall']:.3f} ms/call")
    for name in ("seam", "encode", "core"):
        print(f"{name:6s} vs bare SDK, round trip: {verdict(report[f'{name}Ratio'], TARGET, higher_is_better=False)}")
        print(f"{name:6s} vs bare SDK, server cpu: {report[f'{name}CpuRatio']:.2f}x")
    print(f"load average before and after: {report['loadAverage']}")
    print(f"report: {path}")


if __name__ == "__main__":
    main()
