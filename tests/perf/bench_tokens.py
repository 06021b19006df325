"""Token economy of the core host's tool listing, in both views (not a test; `./dev bench tokens`).

Starts a real `bee mcp serve`, once with the whole catalog and once with `--discovery`, does the 2025-11-25
handshake by hand, asks tools/list and counts o200k tokens (quicktok, offline) of exactly what came back on the
wire: the JSON-RPC response line, and the tools array alone. It also counts, per tool, the part a client hands a
model (name, description, inputSchema). Targets: the whole core catalog ≤ 6,000 tokens, the discovery listing
≤ 15% of the full one.

Writes tests/perf/reports/tokens.json and prints the verdicts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bee_core.representation.tokens import count_tokens
from tests.perf._report import write_report

BEE = Path(sys.executable).parent / "bee"
CATALOG_TARGET = 6000
DISCOVERY_SHARE_TARGET = 0.15


def tools_list_line(*flags: str) -> str:
    """The raw tools/list response line of `bee mcp serve` (with ``flags``) in an empty checkout."""
    frames = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    with tempfile.TemporaryDirectory(prefix="bee-bench-tokens-") as checkout:
        process = subprocess.Popen(
            [str(BEE), "mcp", "serve", *flags],
            cwd=checkout,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "BEE_WARM": "0"},  # a host of its own, in this throwaway checkout
        )
        assert process.stdin and process.stdout
        process.stdin.write(b"".join(json.dumps(frame).encode() + b"\n" for frame in frames))
        process.stdin.flush()
        while True:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"bee mcp serve {flags} exited before answering tools/list")
            if json.loads(line).get("id") == 2:
                break
        process.stdin.close()
        process.wait(timeout=10)
        process.stdout.close()
    return line.decode("utf-8").rstrip("\n")


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def measure(line: str) -> dict[str, Any]:
    tools = json.loads(line)["result"]["tools"]
    per_tool = {
        tool["name"]: {
            "tokens": count_tokens(compact(tool)),
            "modelFacingTokens": count_tokens(
                compact({key: tool[key] for key in ("name", "description", "inputSchema")})
            ),
        }
        for tool in tools
    }
    return {
        "tools": len(tools),
        "responseBytes": len(line.encode("utf-8")),
        "responseTokens": count_tokens(line),
        "toolsTokens": count_tokens(compact(tools)),
        "modelFacingTokens": sum(entry["modelFacingTokens"] for entry in per_tool.values()),
        "perTool": per_tool,
    }


def main() -> None:
    full, discovery = measure(tools_list_line()), measure(tools_list_line("--discovery"))
    share = discovery["responseTokens"] / full["responseTokens"]
    report = {
        "full": full,
        "discovery": discovery,
        "discoveryShare": share,
        "targets": {"catalogTokens": CATALOG_TARGET, "discoveryShare": DISCOVERY_SHARE_TARGET},
    }
    path = write_report("tokens", report)
    for name, measured in (("full", full), ("discovery", discovery)):
        print(
            f"{name:<10} {measured['tools']:>2} tools  {measured['responseTokens']:>5} tokens "
            f"({measured['responseBytes']} bytes; tools array {measured['toolsTokens']}, "
            f"model-facing {measured['modelFacingTokens']})"
        )
    for tool, entry in sorted(full["perTool"].items(), key=lambda item: -item[1]["tokens"]):
        print(f"  {tool:<28} {entry['tokens']:>4}")
    met = "met" if full["responseTokens"] <= CATALOG_TARGET else "NOT met"
    print(f"full listing {full['responseTokens']} tokens (target <= {CATALOG_TARGET}: {met})")
    met = "met" if share <= DISCOVERY_SHARE_TARGET else "NOT met"
    print(f"discovery listing {share:.1%} of the full one (target <= {DISCOVERY_SHARE_TARGET:.0%}: {met})")
    print(f"report: {path}")


if __name__ == "__main__":
    main()
