"""Design import: reference scanning on hostile input, and reading a folder, before and after (`./dev bench import`).

Scanning: Bee's scanners (bee_design.bundle.references: the linear HTML tokenizer of bee_design.bundle.markup and
the one-pass CSS pattern) on 1 MiB of each hostile input, against what they replaced — Python's html.parser and the
former url()/@import/comment patterns — on 2, 4 and 8 KiB of the same input (beyond that the old ones take minutes
or hours: their cost grows with the square of the size; where it does not, on the whole mebibyte too). Median of 5
runs (3 for the old scanners).

Reading: a folder of 2,000 small files read as `bee design import` reads it (ConfinedRoot.walk, then each file
opened again from its directory's fd without following a symlink and checked against what the walk met), against
the former os.walk + lstat + read_bytes, which followed a symlink swapped in after the walk. Median of 5 runs.

Writes tests/perf/reports/design_import.json.
"""

from __future__ import annotations

import os
import random
import re
import tempfile
import time
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from tests.perf._report import median, write_report

RUNS = 5
OLD_RUNS = 3
MIB = 1024 * 1024
OLD_SIZES = (2 * 1024, 4 * 1024, 8 * 1024)

HOSTILE = {
    "url(": ("css", "url("),
    'url("': ("css", 'url("'),
    "/*": ("css", "/*"),
    "<a ": ("html", "<a "),
    "<img src=": ("html", "<img src="),
    "<!--": ("html", "<!--"),
    "<a b='": ("html", "<a b='"),
    "<p style='url(": ("html", "<p style='url("),
    "<img src=x> (dense, well-formed tags)": ("html", "<img src=x>"),
}

# What the scanners were before (the patterns, and html.parser underneath), to measure against.
_OLD_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_OLD_IMPORT = re.compile(r"""@import\s+(?:url\(\s*)?(?:"([^"]*)"|'([^']*)'|([^\s;'")]+))""", re.I)
_OLD_URL = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^\s'")]*))\s*\)""", re.I)


def old_css(text: str) -> int:
    text = _OLD_COMMENT.sub(" ", text)
    spans = [m.span() for m in _OLD_IMPORT.finditer(text)]
    return len(spans) + sum(1 for m in _OLD_URL.finditer(text) if not any(a <= m.start() < b for a, b in spans))


class _OldCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.count = 0
        self.in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.count += 1
        values = {name: value for name, value in attrs if value}
        if values.get("style"):
            self.count += old_css(values["style"])
        self.in_style = tag == "style"

    def handle_data(self, data: str) -> None:
        if self.in_style:
            self.count += old_css(data)


def old_html(text: str) -> int:
    collector = _OldCollector()
    collector.feed(text)
    collector.close()
    return collector.count


def timed(fn: Callable[[str], Any], text: str, runs_wanted: int = RUNS) -> float:
    runs = []
    for _ in range(runs_wanted):
        started = time.perf_counter()
        fn(text)
        runs.append(time.perf_counter() - started)
    return median(runs)


def scanning() -> dict[str, Any]:
    from bee_design.bundle.references import css_references, html_references

    results: dict[str, Any] = {}
    inputs = {name: (kind, unit * (MIB // len(unit))) for name, (kind, unit) in HOSTILE.items()}
    noise = random.Random(16).randbytes(MIB).decode("utf-8", errors="replace")
    inputs["random bytes (HTML)"] = ("html", noise)
    inputs["random bytes (CSS)"] = ("css", noise)
    for name, (kind, text) in inputs.items():
        new, old = (css_references, old_css) if kind == "css" else (html_references, old_html)
        row = {"scanner": kind, "bee_1MiB_s": round(timed(new, text), 4)}
        old_runs = {f"{size // 1024} KiB": timed(old, text[:size], OLD_RUNS) for size in OLD_SIZES}
        if old_runs["8 KiB"] < 0.05:  # no sign of the square: the old scanner can take the whole mebibyte too
            old_runs["1024 KiB"] = timed(old, text, OLD_RUNS)
        row["old_s_by_size"] = {size: round(seconds, 4) for size, seconds in old_runs.items()}
        results[name] = row
        print(f"{name:42} bee 1 MiB {row['bee_1MiB_s']:.3f} s   old {row['old_s_by_size']}", flush=True)
    return results


def old_read(folder: Path) -> int:
    total = 0
    for directory, _, names in os.walk(folder):
        for name in names:
            path = Path(directory) / name
            path.lstat()
            total += len(path.read_bytes())
    return total


def reading() -> dict[str, Any]:
    from bee_design.bundle.reading import read_folder

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "bundle"
        for n in range(2000):
            path = folder / f"d{n % 20}" / f"e{n % 7}" / f"f{n}.css"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f".c{n} {{ margin: {n}px }}\n")
        read_folder(folder)  # warm the page cache for both
        runs_bee, runs_old = [], []
        for _ in range(RUNS):
            started = time.perf_counter()
            read_folder(folder)
            runs_bee.append(time.perf_counter() - started)
            started = time.perf_counter()
            old_read(folder)
            runs_old.append(time.perf_counter() - started)
    result = {
        "files": 2000,
        "bee_s": round(median(runs_bee), 4),
        "old_s": round(median(runs_old), 4),
        "ratio": round(median(runs_bee) / median(runs_old), 2),
    }
    print(f"reading 2,000 files: bee {result['bee_s']:.3f} s, old {result['old_s']:.3f} s ({result['ratio']}x)")
    return result


def main() -> None:
    report = {"runs": RUNS, "scanning": scanning(), "reading": reading(), "load_average": os.getloadavg()}
    print("wrote", write_report("design_import", report))


if __name__ == "__main__":
    main()
