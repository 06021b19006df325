"""Core host benchmark, side by side in one run (not a test; `./dev bench core`).

1. Cold start: spawn until the first tools/list answer, `bee mcp serve` vs a minimal server on the same SDK.
2. Outline throughput: Bee's outline path (read, hash, parse, extract) vs raw tree-sitter (read, parse) on the
   same real third-party sources (installed packages' Python code).
3. Repeated packet: the same packet built twice, first with a cold outline cache, then warm.

Writes tests/perf/reports/core.json and prints the ratios.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TypedDict, cast

from bee_contracts.shapes.core import ContextPacketArgs
from tests.perf._report import median, verdict, write_report

BEE = Path(sys.executable).parent / "bee"
MINIMAL = Path(__file__).parent / "minimal_server.py"
COLD_RUNS = 12
PY_PACKAGES = ("mcp", "pydantic", "starlette", "jsonschema", "click", "hypothesis", "anyio", "httpx")


def first_tools_list_seconds(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    """Spawn (with ``env``, default this process's), do the legacy handshake by hand and time until the tools/list
    answer arrives."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
    frames = [
        init,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    payload = b"".join(json.dumps(f).encode() + b"\n" for f in frames)
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert process.stdin and process.stdout
    process.stdin.write(payload)
    process.stdin.flush()
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"{argv} exited before answering tools/list")
        if json.loads(line).get("id") == 2:
            elapsed = time.perf_counter() - started
            break
    process.stdin.close()
    process.wait(timeout=10)
    process.stdout.close()
    return elapsed


def cold_start(checkout: Path) -> dict[str, float]:
    bee, minimal = [], []
    for _ in range(COLD_RUNS):  # alternate so both see the same machine noise
        # Cold: the host in the process spawned (the warm path is bench_warm.py's).
        bee.append(first_tools_list_seconds([str(BEE), "mcp", "serve"], checkout, env={**os.environ, "BEE_WARM": "0"}))
        minimal.append(first_tools_list_seconds([sys.executable, str(MINIMAL)], checkout))
    return {"beeSeconds": median(bee), "minimalSeconds": median(minimal), "ratio": median(bee) / median(minimal)}


def corpus() -> tuple[Path, list[str]]:
    """A real third-party codebase: the Python sources of installed packages, copied into one checkout."""
    import importlib

    root = Path(tempfile.mkdtemp(prefix="bee-bench-")) / "corpus"
    files: list[str] = []
    for name in PY_PACKAGES:
        module_file = importlib.import_module(name).__file__
        assert module_file is not None
        package = Path(module_file).parent
        for source in sorted(package.rglob("*.py")):
            relative = Path(name) / source.relative_to(package)
            target = root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
            files.append(relative.as_posix())
    return root, files


def outline_throughput(root: Path, files: list[str]) -> dict[str, float]:
    from bee_core.packet.cache import ContentCache
    from bee_core.packet.items import build_item
    from bee_core.packet.languages import parser_for
    from bee_core.packet.manifest import Selection
    from bee_hostkit import ConfinedRoot

    checkout = ConfinedRoot(root)
    total = sum((root / f).stat().st_size for f in files)
    parser = parser_for("python")

    def raw() -> float:
        started = time.perf_counter()
        for f in files:
            parser.parse((root / f).read_bytes())
        return time.perf_counter() - started

    def bee() -> float:
        cache = ContentCache()  # cold every run: this measures parsing, not the cache
        started = time.perf_counter()
        for f in files:
            build_item(checkout, Selection(id="x", path=f, representation="outline", required=True), cache)
        return time.perf_counter() - started

    raw_runs, bee_runs = [], []
    for _ in range(5):
        raw_runs.append(raw())
        bee_runs.append(bee())
    raw_mb_s = total / median(raw_runs) / 1e6
    bee_mb_s = total / median(bee_runs) / 1e6
    return {
        "files": len(files),
        "bytes": total,
        "rawTreeSitterMBps": raw_mb_s,
        "beeOutlineMBps": bee_mb_s,
        "ratio": bee_mb_s / raw_mb_s,
    }


class RepeatedPacket(TypedDict):
    """The report's ``repeatedPacket``: the same context packet asked for again, first and repeat times."""

    selections: int
    sourceBytes: int
    firstMs: float
    repeatMs: float
    speedup: float
    status: str
    resultBytes: int


def repeated_packet(root: Path, files: list[str]) -> RepeatedPacket:
    from bee_core.context import CoreContext
    from bee_core.handlers.context_packet import bee_context_packet
    from bee_hostkit import Call, Deadline

    biggest = sorted(files, key=lambda f: (root / f).stat().st_size, reverse=True)[:24]
    manifest = json.dumps(
        {
            "selections": [
                {"id": f"s{i}", "path": f, "representation": "outline", "required": False}
                for i, f in enumerate(biggest)
            ]
        }
    )
    args = {"manifestJson": manifest, "budgetBytes": 262144}
    firsts, repeats = [], []
    for _ in range(5):
        ctx = CoreContext.open(root)
        started = time.perf_counter()
        first = bee_context_packet(ctx, Call("bee_context_packet", cast(ContextPacketArgs, args), Deadline(60)))
        firsts.append(time.perf_counter() - started)
        for _ in range(5):
            started = time.perf_counter()
            again = bee_context_packet(ctx, Call("bee_context_packet", cast(ContextPacketArgs, args), Deadline(60)))
            repeats.append(time.perf_counter() - started)
        assert again == first
    source_bytes = sum((root / f).stat().st_size for f in biggest)
    return {
        "selections": len(biggest),
        "sourceBytes": source_bytes,
        "firstMs": median(firsts) * 1000,
        "repeatMs": median(repeats) * 1000,
        "speedup": median(firsts) / median(repeats),
        "status": first["status"],
        "resultBytes": first["resultBytes"],
    }


def main() -> None:
    root, files = corpus()
    (root / "README.md").write_text("# corpus\n")
    cold, out, rep = cold_start(root), outline_throughput(root, files), repeated_packet(root, files)
    report = {"coldStart": cold, "outline": out, "repeatedPacket": rep}
    path = write_report("core", report)
    print(json.dumps(report, indent=2))
    print()
    print(f"cold start  bee {cold['beeSeconds']:.3f}s vs minimal {cold['minimalSeconds']:.3f}s: ", end="")
    print(verdict(cold["ratio"], 1.1, higher_is_better=False))
    print(
        f"outline     bee {out['beeOutlineMBps']:.1f} MB/s vs raw tree-sitter {out['rawTreeSitterMBps']:.1f} MB/s: ",
        end="",
    )
    print(verdict(out["ratio"], 0.8, higher_is_better=True))
    print(f"repeat      first {rep['firstMs']:.1f}ms vs repeat {rep['repeatMs']:.2f}ms: ", end="")
    print(verdict(rep["speedup"], 20, higher_is_better=True))
    print(f"report: {path}")


if __name__ == "__main__":
    main()
