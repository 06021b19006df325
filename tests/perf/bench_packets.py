"""Source packets at tree-sitter speed, side by side in one run (not a test; `./dev bench packets`).

Corpus: 132 real files (the Python sources of installed packages, 4–40 KB each). The floor is raw tree-sitter:
read each file, parse it, and walk its declarations (the top level and class bodies, reading each name) — the least
any outline costs. Against it, in alternating rounds:

- ``inProcess``: Bee's outline path called directly (read, confine, hash, parse, extract, measure), cache cold;
- ``mcp16``: `bee mcp serve` over stdio, 16 outlines a packet;
- ``mcp1``: the same host, one outline a call.

A first, uncounted round warms every contender up; every round rewrites the corpus with a fresh last line first,
so no contender is served from a cache. Then the cached packet: the same 16 outlines (a result of about 74 KB)
asked for again and again, which the host answers from its content cache after reading and hashing every file.

The cached packet is timed in alternation with a bare-SDK no-op call (tests/perf/minimal_server.py), the
yardstick that says how slow the machine is right now. Calls go through a raw JSON-RPC client (a pipe, one line each
way, orjson), so what is measured is the host and its transport; the official Python client is timed on the cached
packet too, because it re-validates every result against the tool's outputSchema with jsonschema, a cost of its
own that grows with the result. Writes
tests/perf/reports/packets.json.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import orjson

from tests.perf._report import median, verdict, write_report
from tests.perf.bench_call import cpu_seconds

BEE = Path(sys.executable).parent / "bee"
MINIMAL = Path(__file__).parent / "minimal_server.py"
PY_PACKAGES = ("mcp", "pydantic", "starlette", "jsonschema", "click", "anyio", "httpx")
FILES = 132
ROUNDS = 9
PER_PACKET = 16
CACHED_CALLS = 300
TARGETS = {"mcp16": 0.8, "cachedMs": 5.0}


def corpus() -> tuple[Path, list[str]]:
    """132 real Python files of 4–40 KB, copied into a fresh checkout."""
    root = Path(tempfile.mkdtemp(prefix="bee-bench-packets-")) / "corpus"
    files: list[str] = []
    for name in PY_PACKAGES:
        package = Path(importlib.import_module(name).__file__ or "").parent
        for source in sorted(package.rglob("*.py")):
            if not 4096 <= source.stat().st_size <= 40960:
                continue
            relative = Path(name) / source.relative_to(package)
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_bytes(source.read_bytes())
            files.append(relative.as_posix())
            if len(files) == FILES:
                (root / "README.md").write_text("# corpus\n")
                return root, files
    raise RuntimeError("not enough source files installed for the corpus")


def refresh(root: Path, files: list[str], tag: str) -> None:
    """Give every file new content (a last comment line naming ``tag``), so no cache can answer for it."""
    for f in files:
        path = root / f
        data = path.read_bytes()
        cut = data.rfind(b"\n# bench ")
        path.write_bytes((data if cut < 0 else data[:cut]) + f"\n# bench {tag}\n".encode())


def floor(root: Path, files: list[str]) -> float:
    """Raw tree-sitter: read, parse, and walk the declarations of every file; seconds."""
    from bee_core.packet.languages import parser_for

    parser = parser_for("python")
    started = time.perf_counter()
    for f in files:
        data = (root / f).read_bytes()
        tree = parser.parse(data)
        pending = [tree.root_node]
        names = []
        while pending:
            for node in pending.pop().named_children:
                child = node.child_by_field_name("definition") or node if node.type == "decorated_definition" else node
                if child.type in ("function_definition", "class_definition"):
                    name = child.child_by_field_name("name")
                    names.append(data[name.start_byte : name.end_byte] if name is not None else b"")
                    if child.type == "class_definition":
                        body = child.child_by_field_name("body")
                        if body is not None:
                            pending.append(body)
    return time.perf_counter() - started


def in_process(root: Path, files: list[str]) -> float:
    from bee_core.packet.cache import ContentCache
    from bee_core.packet.items import build_item
    from bee_core.packet.manifest import Selection
    from bee_hostkit import ConfinedRoot

    checkout, cache = ConfinedRoot(root), ContentCache()
    started = time.perf_counter()
    for f in files:
        build_item(checkout, Selection(id="x", path=f, representation="outline", required=True), cache)
    return time.perf_counter() - started


class RawClient:
    """A JSON-RPC client over the host's stdio pipes: one line out, one line back, nothing validated."""

    def __init__(self, root: Path, argv: list[str] | None = None) -> None:
        self.process = subprocess.Popen(
            argv or [str(BEE), "mcp", "serve", "--checkout", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(orjson.dumps(message) + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.process.stdout is not None
        answer = orjson.loads(self.process.stdout.readline())
        assert answer.get("id") == self.next_id and "result" in answer, answer
        return answer["result"]

    def packet(self, selections: list[dict[str, Any]]) -> dict[str, Any]:
        manifest = json.dumps({"selections": selections})
        result = self.request(
            "tools/call", {"name": "bee_context_packet", "arguments": {"manifestJson": manifest, "budgetBytes": 262144}}
        )
        structured: dict[str, Any] = result["structuredContent"]
        assert structured["status"] == "complete", structured["status"]
        return structured

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)


def outlines(files: list[str]) -> list[dict[str, Any]]:
    return [{"id": f"s{i}", "path": f, "representation": "outline"} for i, f in enumerate(files)]


def over_mcp(client: RawClient, files: list[str], per_call: int) -> float:
    started = time.perf_counter()
    for start in range(0, len(files), per_call):
        client.packet(outlines(files[start : start + per_call]))
    return time.perf_counter() - started


def throughput(root: Path, files: list[str], client: RawClient) -> dict[str, Any]:
    total = sum((root / f).stat().st_size for f in files)
    runs: dict[str, list[float]] = {"floor": [], "inProcess": [], "mcp16": [], "mcp1": []}
    # Round 0 is a warm-up, not counted: each contender's first pass pays its imports and grammar loading once.
    for round_number in range(ROUNDS + 1):
        for name, seconds in runs.items():
            refresh(root, files, f"{round_number}-{name}")
            if name == "floor":
                took = floor(root, files)
            elif name == "inProcess":
                took = in_process(root, files)
            else:
                took = over_mcp(client, files, PER_PACKET if name == "mcp16" else 1)
            if round_number:
                seconds.append(took)
    mb_s = {name: total / median(seconds) / 1e6 for name, seconds in runs.items()}
    return {
        "files": len(files),
        "bytes": total,
        "MBps": mb_s,
        "ratio": {name: mb_s[name] / mb_s["floor"] for name in runs if name != "floor"},
    }


def cached_packet(root: Path, files: list[str], client: RawClient) -> dict[str, Any]:
    """The 16 outlines whose packet is closest to 74 KB, asked for over and over."""
    best: tuple[int, list[str]] = (10**9, [])
    for start in range(0, len(files) - PER_PACKET, 4):
        chosen = files[start : start + PER_PACKET]
        size = client.packet(outlines(chosen))["resultBytes"]
        if abs(size - 74_000) < abs(best[0] - 74_000):
            best = (size, chosen)
    size, chosen = best
    selections = outlines(chosen)
    # The yardstick, called in alternation so both see the same load: the bare SDK answering a no-op tool.
    sdk = RawClient(root, [sys.executable, str(MINIMAL)])
    raw, echo, cpu = [], [], 0.0
    for _ in range(CACHED_CALLS):
        before = cpu_seconds(client.process.pid)
        started = time.perf_counter()
        client.packet(selections)
        raw.append(time.perf_counter() - started)
        cpu += cpu_seconds(client.process.pid) - before
        started = time.perf_counter()
        sdk.request("tools/call", {"name": "echo", "arguments": {}})
        echo.append(time.perf_counter() - started)
    sdk.close()
    cpu /= CACHED_CALLS
    official = anyio.run(official_client_calls, root, selections, CACHED_CALLS // 3)
    return {
        "selections": len(selections),
        "resultBytes": size,
        "rawClientMedianMs": median(raw) * 1000,
        "sdkEchoMedianMs": median(echo) * 1000,
        "inSdkEchoCalls": median(raw) / median(echo),
        "serverCpuMsPerCall": cpu * 1000,
        "officialClientMedianMs": median(official) * 1000,
    }


async def official_client_calls(root: Path, selections: list[dict[str, Any]], calls: int) -> list[float]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=str(BEE), args=["mcp", "serve", "--checkout", str(root)], env={"BEE_WARM": "0"}
    )
    arguments = {"manifestJson": json.dumps({"selections": selections}), "budgetBytes": 262144}
    times = []
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        await client.list_tools()
        for _ in range(10):
            await client.call_tool("bee_context_packet", arguments)
        for _ in range(calls):
            started = time.perf_counter()
            result = await client.call_tool("bee_context_packet", arguments)
            times.append(time.perf_counter() - started)
            assert not result.is_error
    return times


def main() -> None:
    root, files = corpus()
    load = os.getloadavg()
    client = RawClient(root)
    try:
        report: dict[str, Any] = {
            "outlines": throughput(root, files, client),
            "cachedPacket": cached_packet(root, files, client),
        }
    finally:
        client.close()
    report["loadAverage"] = [*load, *os.getloadavg()]
    path = write_report("packets", report)
    print(json.dumps(report, indent=2))
    print()
    out, cached = report["outlines"], report["cachedPacket"]
    for name, ratio in out["ratio"].items():
        target = TARGETS.get(name)
        shown = verdict(ratio, target, higher_is_better=True) if target else f"{ratio:.2f}x"
        print(f"outlines {name:9s} {out['MBps'][name]:6.2f} MB/s vs floor {out['MBps']['floor']:.2f} MB/s: {shown}")
    met = "met" if cached["rawClientMedianMs"] <= TARGETS["cachedMs"] else "NOT met"
    print(
        f"cached packet ({cached['resultBytes']} bytes): {cached['rawClientMedianMs']:.2f} ms a call "
        f"(target <= {TARGETS['cachedMs']} ms: {met}), "
        f"server cpu {cached['serverCpuMsPerCall']:.2f} ms, official client {cached['officialClientMedianMs']:.2f} ms; "
        f"{cached['inSdkEchoCalls']:.1f}x a bare-SDK no-op call ({cached['sdkEchoMedianMs']:.2f} ms) in the same run"
    )
    print(f"load average before and after: {report['loadAverage']}")
    print(f"report: {path}")


if __name__ == "__main__":
    main()
