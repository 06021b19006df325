"""Artifact benchmark, side by side with ripgrep in one run (not a test; `./dev bench artifacts`).

1. Corpus: ~200 MB of real text from this machine — the Python sources, stubs and docs of every installed
   package — repeated, each copy in another file order, split at line boundaries into 8 artifacts.
2. Ingestion: `bee artifact add` for each part (hash, classify, line index, fsync, atomic rename), against
   `sha256sum` of the same files as a floor.
3. Search, for an absent, a rare, a medium and two frequent literals, each on the same bytes (the stored copies):
   - ripgrep: `rg --count` over the 8 stored files — the strict peer: exact counts of matching lines, the same
     definition Bee uses, and ripgrep's fastest mode — and `rg --byte-offset` listing every matching line;
   - Bee's first query for a text (a host that has answered one earlier call, with an empty search cache)
     answering exact counts plus the first page of 20 lines, in process and through `bee mcp serve`;
   - a repeated query, the next page, a query narrowed to two of the artifacts, and a refined query (a longer
     text containing the first one);
   Through MCP, each host session first answers one unrelated call (its one-time set-up of argument validation
   is reported apart), then each text is searched twice: a first and a repeated query.
   Bee and ripgrep runs alternate so both see the same machine noise; medians are reported.

Writes tests/perf/reports/artifacts.json and prints the ratios (throughput ratio = ripgrep time / Bee time).
"""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from tests.perf._report import median, verdict, write_report

BEE = Path(sys.executable).parent / "bee"
TARGET_BYTES = 200 * 1000 * 1000
PARTS = 8
RUNS = 15
LITERALS = {
    "absent": "bee-benchmark-absent-literal",
    "rare": "Traceback (most recent call last)",
    "medium": "raise ValueError(",
    "frequent": "def ",
    "very frequent": "self.",
}
#: A longer text for each literal (a query refined after the first one).
REFINED = {
    "absent": "bee-benchmark-absent-literal-2",
    "rare": "Traceback (most recent call last):",
    "medium": 'raise ValueError(f"',
    "frequent": "def __init__(self",
    "very frequent": "self.assert",
}
SUFFIXES = {".py", ".pyi", ".md", ".rst", ".txt", ".toml", ".cfg"}


def real_text() -> list[bytes]:
    """Every UTF-8 text file of the installed packages (sources, stubs, docs), in a stable order."""
    found = []
    for root in site.getsitepackages():
        for path in sorted(Path(root).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file():
                data = path.read_bytes()
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError:
                    continue
                if b"\x00" not in data:
                    found.append(data if data.endswith(b"\n") else data + b"\n")
    return found


def build_corpus(directory: Path) -> list[Path]:
    """~200 MB in :data:`PARTS` files, cut at line boundaries; every part differs (content addressing dedupes)."""
    files = real_text()
    parts, size_each = [], TARGET_BYTES // PARTS
    for index in range(PARTS):
        path = directory / f"part{index}.log"
        written, rotation = 0, index * 7919
        with open(path, "wb") as out:
            out.write(f"# benchmark part {index}\n".encode())
            while written < size_each:
                data = files[rotation % len(files)]
                out.write(data)
                written += len(data)
                rotation += 1
        parts.append(path)
    return parts


def ingest(checkout: Path, parts: list[Path]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    subprocess.run([str(BEE), "init", "--checkout", str(checkout)], check=True, capture_output=True)
    started = time.perf_counter()
    records = []
    for part in parts:
        done = subprocess.run(
            [str(BEE), "artifact", "add", str(part), "--json", "--checkout", str(checkout)],
            check=True,
            capture_output=True,
        )
        records.append(json.loads(done.stdout))
    bee_seconds = time.perf_counter() - started
    started = time.perf_counter()
    subprocess.run(["sha256sum", *map(str, parts)], check=True, capture_output=True)
    sha_seconds = time.perf_counter() - started
    total = sum(r["sourceBytes"] for r in records)
    return {
        "artifacts": len(records),
        "bytes": total,
        "beeAddSeconds": bee_seconds,
        "beeAddMBps": total / bee_seconds / 1e6,
        "sha256sumMBps": total / sha_seconds / 1e6,
    }, records


def rg_seconds(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.PIPE, check=False)
    return time.perf_counter() - started


def in_process(checkout: Path, records: list[dict[str, Any]], blobs: list[Path]) -> dict[str, Any]:
    from bee_contracts.shapes.core import ArtifactSearchArgs, ArtifactSearchResult
    from bee_core.artifacts.ripgrep import executable
    from bee_core.artifacts.search import SearchCache
    from bee_core.context import CoreContext
    from bee_core.handlers.artifact_search import bee_artifact_search
    from bee_hostkit import Call, Deadline

    rg = executable()
    total = sum(r["sourceBytes"] for r in records)
    narrowed_ids = [records[3]["id"], records[6]["id"]]

    def ask(
        ctx: CoreContext, text: str, *, offset: int = 0, ids: list[str] | None = None
    ) -> tuple[float, ArtifactSearchResult]:
        args: ArtifactSearchArgs = {"text": text, "offset": offset, "limit": 20, "budgetBytes": 262144}
        if ids is not None:
            args["ids"] = ids
        started = time.perf_counter()
        result = bee_artifact_search(ctx, Call("bee_artifact_search", args, Deadline(60)))
        return time.perf_counter() - started, result

    host = CoreContext.open(checkout)  # a running host: it has listed and verified the artifacts once
    ask(host, "warm-up")
    measured: dict[str, Any] = {}
    for label, text in LITERALS.items():

        def peer(*options: str, text: str = text) -> list[str]:
            return [rg, "--no-config", "--fixed-strings", *options, "--regexp", text, "--", *map(str, blobs)]

        counts, listing, firsts, repeats, pages, narrowed, refined, refined_peer = [], [], [], [], [], [], [], []
        matching_lines = 0
        for _ in range(RUNS):
            counts.append(rg_seconds(peer("--count")))
            host.artifacts.search = SearchCache()  # this text was never searched: nothing cached
            ctx = host
            seconds, answer = ask(ctx, text)
            matching_lines = answer["totalMatches"]
            firsts.append(seconds)
            listing.append(rg_seconds(peer("--byte-offset")))
            repeats.append(ask(ctx, text)[0])
            pages.append(ask(ctx, text, offset=20)[0])
            narrowed.append(ask(ctx, text, ids=narrowed_ids)[0])
            refined_seconds, refined_answer = ask(ctx, REFINED[label])
            refined.append(refined_seconds)
            refined_peer.append(rg_seconds(peer("--count", text=REFINED[label])))
        rg_count = median(counts)
        measured[label] = {
            "text": text,
            "matchingLines": matching_lines,
            "rgCountMs": rg_count * 1000,
            "rgCountGBps": total / rg_count / 1e9,
            "rgListingMs": median(listing) * 1000,
            "beeFirstMs": median(firsts) * 1000,
            "beeFirstGBps": total / median(firsts) / 1e9,
            "firstRatio": rg_count / median(firsts),
            "firstRatioVsListing": median(listing) / median(firsts),
            "beeRepeatMs": median(repeats) * 1000,
            "repeatRatio": rg_count / median(repeats),
            "beeNextPageMs": median(pages) * 1000,
            "nextPageRatio": rg_count / median(pages),
            "beeNarrowedMs": median(narrowed) * 1000,
            "narrowedRatio": rg_count / median(narrowed),
            "refinedText": REFINED[label],
            "refinedMatchingLines": refined_answer["totalMatches"],
            "rgRefinedCountMs": median(refined_peer) * 1000,
            "beeRefinedMs": median(refined) * 1000,
            "refinedRatio": median(refined_peer) / median(refined),
        }
    return measured


async def through_mcp(checkout: Path, blobs: list[Path], first_id: str, sessions: int = 7) -> dict[str, Any]:
    """First and repeated queries as an agent sees them: the official client, a real `bee mcp serve`."""
    from mcp import Client, StdioServerParameters

    from bee_core.artifacts.ripgrep import executable

    rg = executable()
    warmups: list[float] = []
    firsts: dict[str, list[float]] = {label: [] for label in LITERALS}
    repeats: dict[str, list[float]] = {label: [] for label in LITERALS}
    counts: dict[str, list[float]] = {label: [] for label in LITERALS}
    # Cold: each session starts its own host, as the first-query timings assume (warm hosts: bench_warm.py).
    params = StdioServerParameters(command=str(BEE), args=["mcp", "serve"], cwd=checkout, env={"BEE_WARM": "0"})
    for _ in range(sessions):
        async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
            await client.list_tools()
            # A host's first call also sets up argument validation (imports jsonschema): timed apart, so that a
            # "first query" measures the first search for a text, not the host's start-up.
            started = time.perf_counter()
            await client.call_tool("bee_artifact_search", {"text": "warm-up", "ids": [first_id], "limit": 1})
            warmups.append(time.perf_counter() - started)
            for label, text in LITERALS.items():
                argv = [rg, "--no-config", "--fixed-strings", "--count", "--regexp", text, "--", *map(str, blobs)]
                counts[label].append(rg_seconds(argv))
                for bucket in (firsts, repeats):
                    started = time.perf_counter()
                    result = await client.call_tool("bee_artifact_search", {"text": text, "budgetBytes": 262144})
                    bucket[label].append(time.perf_counter() - started)
                    assert result.is_error is False, result.structured_content
    return {"hostFirstCallMs": median(warmups) * 1000} | {
        label: {
            "rgCountMs": median(counts[label]) * 1000,
            "beeFirstMs": median(firsts[label]) * 1000,
            "firstRatio": median(counts[label]) / median(firsts[label]),
            "beeRepeatMs": median(repeats[label]) * 1000,
            "repeatRatio": median(counts[label]) / median(repeats[label]),
        }
        for label in LITERALS
    }


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="bee-bench-artifacts-"))
    (work / "checkout").mkdir()
    parts = build_corpus(work)
    ingestion, records = ingest(work / "checkout", parts)
    for part in parts:
        part.unlink()  # from here on, only the stored copies exist (and are in the page cache)
    blobs = [
        work / "checkout" / ".bee" / "artifacts" / "blobs" / r["sourceSha256"].removeprefix("sha256:") for r in records
    ]
    for blob in blobs:  # warm the page cache for both sides
        with open(blob, "rb") as handle:
            while handle.read(1 << 24):
                pass
    report: dict[str, Any] = {
        "corpus": {
            "source": "text files (.py .pyi .md .rst .txt .toml .cfg) of the installed packages, repeated",
            "artifacts": len(records),
            "bytes": ingestion["bytes"],
        },
        "ingestion": ingestion,
        "search": in_process(work / "checkout", records, blobs),
        "searchThroughMcp": anyio.run(through_mcp, work / "checkout", blobs, records[0]["id"]),
        "ripgrep": subprocess.run(
            [str(Path(sys.executable).parent / "rg"), "--version"], capture_output=True, text=True, check=False
        ).stdout.splitlines()[0],
    }
    path = write_report("artifacts", report)
    print(json.dumps(report, indent=2))
    print()
    size = report["corpus"]["bytes"]
    print(f"corpus {size / 1e6:.0f} MB in {len(records)} artifacts; ingest {ingestion['beeAddMBps']:.0f} MB/s")
    for label, row in report["search"].items():
        print(f"{label:>13} ({row['matchingLines']} lines): rg --count {row['rgCountMs']:.1f} ms, ", end="")
        print(f"bee first {row['beeFirstMs']:.1f} ms: {verdict(row['firstRatio'], 0.8, higher_is_better=True)}")
        repeat = verdict(row["repeatRatio"], 1, higher_is_better=True)
        print(f"{'':>13} repeat {row['beeRepeatMs']:.2f} ms: {repeat}; ", end="")
        print(f"narrowed to 2 ids {verdict(row['narrowedRatio'], 1, higher_is_better=True)}; ", end="")
        print(f"refined text {row['refinedRatio']:.2f}x")
    for label, row in report["searchThroughMcp"].items():
        if not isinstance(row, dict):
            continue
        print(f"{label:>13} over MCP: first {verdict(row['firstRatio'], 0.8, higher_is_better=True)}, ", end="")
        print(f"repeat {verdict(row['repeatRatio'], 1, higher_is_better=True)}")
    print(f"report: {path}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
