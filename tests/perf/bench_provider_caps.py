"""Hostile skill providers against the real `bee mcp serve` (not a test; `./dev bench provider_caps`).

For each case, a hostile provider on 127.0.0.1 (tests/harness/hostile_provider.py) is added with
`bee skill bridge add`, a fresh `bee mcp serve` is started, warmed with one call the provider answers correctly,
and then asked the call the provider answers badly, ``ROUNDS`` times. Side by side with a provider that serves a
100 KiB skill correctly, the reference:

- the time from the tool call to its answer, through the official client (median of the rounds);
- the provider's side: seconds from the first byte of its answer to the host closing the connection, and how many
  bytes it had written by then (socket buffers included);
- the host's peak resident memory (VmHWM) after the warm-up call and after the rounds.

Writes tests/perf/reports/provider_caps.json and prints a table.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp_types import TextContent

from tests.core.skills_helpers import skill_md
from tests.harness.hostile_provider import HostileProvider
from tests.perf._report import median, write_report

BEE = Path(sys.executable).parent / "bee"
ROUNDS = 3
GOOD = skill_md("git-workflow", "Branch and commit the way this team does.")
REFERENCE = skill_md("git-workflow", "A large but honest skill.", body="x" * (100 * 1024))

#: name -> (the skill served, how the provider misbehaves, the call that meets it, the warm-up call).
SEARCH = ("bee_skill_search", {"query": "git workflow"})
GET = ("bee_skill_get", {"path": "evil/git-workflow"})
CASES: dict[str, tuple[str, dict[str, Any], tuple[str, dict[str, Any]], tuple[str, dict[str, Any]]]] = {
    "reference: 100 KiB body, served": (REFERENCE, {}, GET, SEARCH),
    "200 MB body (JSON)": (GOOD, {"resources/read": {"how": "huge", "bytes": 200_000_000}}, GET, SEARCH),
    "200 MB body (SSE)": (GOOD, {"resources/read": {"how": "huge", "bytes": 200_000_000, "sse": True}}, GET, SEARCH),
    "150 MB listing (JSON)": (GOOD, {"skills/list": {"how": "huge", "bytes": 150_000_000}}, SEARCH, GET),
    "150 MB listing (SSE)": (GOOD, {"skills/list": {"how": "huge", "bytes": 150_000_000, "sse": True}}, SEARCH, GET),
    "HTTP 500 with a 200 MB body": (GOOD, {"resources/read": {"how": "refuse", "bytes": 200_000_000}}, GET, SEARCH),
    "50 MB behind gzip": (GOOD, {"resources/read": {"how": "gzip", "bytes": 50_000_000}}, GET, SEARCH),
    "endless drip (2 s provider timeout)": (GOOD, {"resources/read": {"how": "drip", "seconds": 0.5}}, GET, SEARCH),
}


def peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmHWM for {pid}")


def host_pid(checkout: Path) -> int:
    import os

    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if b"serve" in argv and Path(os.readlink(entry / "cwd")) == checkout:
                    return int(entry.name)
            except OSError:
                continue
    raise RuntimeError("no bee mcp serve found")


async def measure(checkout: Path, server: HostileProvider, call: Any, warm: Any) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=str(BEE),
        args=["mcp", "serve"],
        cwd=checkout,
        env={"BEE_SKILL_PROVIDER_TIMEOUT_SECONDS": "2", "BEE_WARM": "0"},
    )
    async with Client(params, mode="2026-07-28", read_timeout_seconds=120) as client:
        pid = host_pid(checkout)
        await client.call_tool(*warm)
        warm_kib = peak_kib(pid)
        seconds, codes = [], []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            result = await client.call_tool(*call)
            seconds.append(time.perf_counter() - started)
            first = result.content[0]
            assert isinstance(first, TextContent)
            codes.append(json.loads(first.text).get("code", "ok") if result.is_error else "ok")
        return {
            "callSeconds": median(seconds),
            "codes": sorted(set(codes)),
            "warmKiB": warm_kib,
            "peakKiB": peak_kib(pid),
        }


def run_case(name: str, workdir: Path) -> dict[str, Any]:
    body, misbehave, call, warm = CASES[name]
    checkout = workdir / "checkout"
    checkout.mkdir()
    spec = {"skills": [{"path": "git-workflow", "body": body}], "misbehave": misbehave}
    with HostileProvider(spec, workdir) as server:
        subprocess.run([str(BEE), "init"], cwd=checkout, check=True, capture_output=True)
        add = [str(BEE), "skill", "bridge", "add", "evil", "--mcp", server.url]
        subprocess.run(add, cwd=checkout, check=True, capture_output=True)
        result = anyio.run(measure, checkout.resolve(), server, call, warm)
        time.sleep(1.0)  # the provider logs a cut connection at its next write
        hostile = [a for a in server.answers() if a["how"] != "normal"]
    if hostile:
        result["providerSecondsToCut"] = median([a["seconds"] for a in hostile])
        result["providerBytesWritten"] = max(a["sent"] for a in hostile)
        result["cut"] = all(a["cut"] for a in hostile)
    return result


def main() -> None:
    results = {}
    for name in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            results[name] = run_case(name, Path(tmp))
    print(f"{'case':40} {'codes':20} {'call s':>7} {'cut s':>6} {'written MB':>10} {'warm MiB':>8} {'peak MiB':>8}")
    for name, r in results.items():
        written = f"{r['providerBytesWritten'] / 1e6:.1f}" if "providerBytesWritten" in r else "-"
        cut = f"{r['providerSecondsToCut']:.3f}" if "providerSecondsToCut" in r else "-"
        print(
            f"{name:40} {','.join(r['codes']):20} {r['callSeconds']:7.3f} {cut:>6} {written:>10} "
            f"{r['warmKiB'] / 1024:8.1f} {r['peakKiB'] / 1024:8.1f}"
        )
    print(write_report("provider_caps", {"rounds": ROUNDS, "cases": results}))


if __name__ == "__main__":
    main()
