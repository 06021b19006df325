"""The design host's diff and capture against peers, side by side in one run (`./dev bench design`).

Diff: Bee's diff (bee_design.visual.diff on pybind11-pixelmatch's compiled kernel) against pybind11-pixelmatch
called directly, and against Bee's diff before the kernel (the numpy one, from the commit _baseline.BASELINE, when
this checkout has it), on 1440×900 screenshots that Chromium takes here of a generated page (text columns, cards,
buttons): the same screenshot twice, a change of one card's text and one button's colour, and the whole page moved
down 1 pixel. Two measures of Bee: `count` is count_differing, the pixels over threshold 0.1 with anti-aliased
pixels left out (pixelmatch's defaults, the count pixelmatch returns: they must agree); `assess` is everything a
report finding takes on top of that — the differing and anti-aliased pixels by position, their boxes and the shift
search. Timed interleaved, median of RUNS runs each, as this thread's CPU time (the machine is shared: its wall
clock measures the scheduler as much as the code; wall-clock medians are in the report too). Targets: count ≤ 1.2×
the compiled peer on every pair. Decoding one screenshot (bee_design.visual.images) is measured on its own.

Capture: `bee design capture`'s engine (one browser, one page, every URL at every viewport, deterministic settling
and the font probe) against bare Playwright driving the same Chromium (one browser, goto and screenshot, nothing
else), on the same two pages at four viewports. Target: ≤ 0.5 s per viewport with one browser.

Writes tests/perf/reports/design.json.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.perf._baseline import export
from tests.perf._report import median, verdict, write_report

RUNS = int(os.environ.get("BEE_BENCH_RUNS", "30"))
#: What Bee's count may cost, against pybind11-pixelmatch's.
COUNT_TARGET = 1.2
VIEWPORTS = ("desktop=1440x900", "laptop=1280x800", "tablet=768x1024", "mobile=390x844")

_PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>
body {{ font-family: "DejaVu Sans", sans-serif; margin: 0; padding-top: {top}px; background: #fbfaf7; color: #1d2433; }}
header {{ background: #1d2433; color: white; padding: 18px 40px; font-size: 26px; }}
.grid {{ display: grid; grid-template-columns: repeat(3, 1fr); gap: 24px; padding: 24px 40px; }}
.card {{ background: white; border-radius: 8px; padding: 16px; box-shadow: 0 1px 4px rgba(0,0,0,.15); }}
.card h2 {{ font-size: 18px; margin: 0 0 8px; }} .card p {{ font-size: 14px; line-height: 1.45; margin: 0 0 12px; }}
button {{ background: {brand}; color: white; border: 0; border-radius: 6px; padding: 8px 18px; font-size: 14px; }}
</style></head><body><header>Bee bakery — fresh every morning</header><div class="grid">{cards}</div></body></html>"""

_TEXT = (
    "Sourdough, rye and spelt loaves from our own starter, baked before dawn and sold until they run out. "
    "Ask for today's seeded special; we slice on request and keep a loaf aside if you call ahead."
)


def page(top: int = 0, brand: str = "#2f6fdb", first_title: str = "Country loaf") -> str:
    cards = []
    for n in range(9):
        title = first_title if n == 0 else f"Loaf number {n + 1}"
        colour = brand if n == 4 else "#2f6fdb"
        cards.append(
            f'<div class="card"><h2>{title}</h2><p>{_TEXT}</p><p>{_TEXT[:90]}</p>'
            f'<button style="background:{colour}">Add to basket</button></div>'
        )
    return _PAGE.format(top=top, brand=brand, cards="".join(cards))


def screenshots(folder: Path) -> dict[str, Any]:
    """1440×900 captures of the page and its variants, by Bee's capture (deterministic settings): the PNG files."""
    from bee_design.capture.runner import capture
    from bee_design.capture.settings import Settings, browser_executable
    from bee_design.capture.targets import Target, parse_viewport
    from tests.design.helpers import static_server

    site = folder / "site"
    site.mkdir()
    variants = {
        "base": page(),
        "changed": page(brand="#c0392b", first_title="Country loaf, now with seeds"),
        "shifted": page(top=1),
    }
    for name, html in variants.items():
        (site / f"{name}.html").write_text(html)
    with static_server(site) as url:
        targets = [Target(name, f"{url}{name}.html") for name in variants]
        evidence = capture(
            targets, Settings(browser_executable(), (parse_viewport("desktop=1440x900"),)), folder / "ev"
        )
    return {shot.name: (folder / "ev" / shot.file).read_bytes() for shot in evidence.captures}


def baseline_visual(folder: Path) -> tuple[Any, Any, Any] | None:
    """The numpy diff, shift search and boxes before the kernel, importable beside today's (None without them)."""
    import importlib

    packages = export(folder)
    if packages is None:
        return None
    old, target = packages / "bee-design" / "src" / "bee_design" / "visual", folder / "baseline_visual"
    target.mkdir()
    (target / "__init__.py").write_text("")
    for name in ("diff", "shift", "boxes"):
        text = (old / f"{name}.py").read_text()
        (target / f"{name}.py").write_text(text.replace("bee_design.visual.diff", "baseline_visual.diff"))
    sys.path.insert(0, str(folder))  # the old modules, importable under a name of their own beside today's
    diff, shift, boxes = (importlib.import_module(f"baseline_visual.{name}") for name in ("diff", "shift", "boxes"))
    return diff, shift, boxes


def assess(diff_module: Any, shift_module: Any, boxes_module: Any, first: Any, second: Any, *, new: bool) -> Any:
    """What one report finding takes: the counted and anti-aliased pixels, their boxes and the shift search."""
    import numpy as np

    diff = diff_module.compare(first, second, threshold=0.1) if new else diff_module.compare(first, second)
    over = diff.over(0.1)
    aa = diff.antialiased(over)
    counted = over[~aa]
    found = boxes_module.boxes(diff.width, diff.height, diff.positions[counted])
    shift = shift_module.detect_shift(diff, counted, 0.1)
    return (
        int(counted.size),
        int(np.count_nonzero(aa)),
        found,
        None if shift is None else (shift.dx, shift.dy, float(shift.explained)),
    )


def timed(function: Any, cpu: list[float], wall: list[float]) -> None:
    started, started_cpu = time.perf_counter(), time.thread_time()
    function()
    cpu.append(time.thread_time() - started_cpu)
    wall.append(time.perf_counter() - started)


def bench_pair(name: str, first: Any, second: Any, before: tuple[Any, Any, Any] | None) -> dict[str, Any]:
    """One pair of screenshots: the peer, Bee's count and assessment, and (with ``before``) the numpy diff's."""
    from pybind11_pixelmatch import Options, pixelmatch

    from bee_design.visual import boxes, diff, shift

    options = Options()
    options.threshold = 0.1
    options.includeAA = False
    measures = {
        "pixelmatch": lambda: pixelmatch(first, second, options=options),
        "count": lambda: diff.count_differing(first, second, 0.1),
        "assess": lambda: assess(diff, shift, boxes, first, second, new=True),
    }
    peer, ours = pixelmatch(first, second, options=options), diff.count_differing(first, second, 0.1)
    assert ours == peer, (name, ours, peer)
    assessed = assess(diff, shift, boxes, first, second, new=True)
    assert assessed[0] == peer, (name, assessed, peer)
    if before is not None:
        old_diff, old_shift, old_boxes = before
        measures["countBefore"] = lambda: old_diff.count_differing(first, second, 0.1)
        measures["assessBefore"] = lambda: assess(old_diff, old_shift, old_boxes, first, second, new=False)
        assert old_diff.count_differing(first, second, 0.1) == peer, name
        assert assess(old_diff, old_shift, old_boxes, first, second, new=False) == assessed, name
    cpu: dict[str, list[float]] = {key: [] for key in measures}
    wall: dict[str, list[float]] = {key: [] for key in measures}
    for _ in range(RUNS):
        for key, function in measures.items():
            timed(function, cpu[key], wall[key])
    ms = {key: round(median(values) * 1000, 2) for key, values in cpu.items()}
    row: dict[str, Any] = {
        "pair": name,
        "differingPixels": peer,
        "antialiasedPixels": assessed[1],
        "cpuMs": ms,
        "wallMs": {key: round(median(values) * 1000, 2) for key, values in wall.items()},
        "countRatio": round(ms["count"] / ms["pixelmatch"], 2),
        "assessRatio": round(ms["assess"] / ms["pixelmatch"], 2),
        "countTargetMet": ms["count"] <= COUNT_TARGET * ms["pixelmatch"],
    }
    was = f"  before: count {ms['countBefore']:.2f}, assess {ms['assessBefore']:.2f}" if before else ""
    print(
        f"diff {name:<13} {peer:>6} px  pixelmatch {ms['pixelmatch']:6.2f} ms  bee count {ms['count']:6.2f} "
        f"({verdict(row['countRatio'], COUNT_TARGET, higher_is_better=False)})  assess {ms['assess']:6.2f} "
        f"({row['assessRatio']:.2f}x){was}"
    )
    return row


def bench_diff(pngs: dict[str, bytes], folder: Path) -> dict[str, Any]:
    from bee_design.visual.images import decode_rgba

    before = baseline_visual(folder)
    shots = {name: decode_rgba(data, name) for name, data in pngs.items()}
    decode_times: list[float] = []
    for _ in range(RUNS):
        timed(lambda: decode_rgba(pngs["shifted"], "shifted"), decode_times, [])
    rows = [
        bench_pair(name, first, second, before)
        for name, (first, second) in {
            "identical": (shots["base"], shots["base"].copy()),
            "changed": (shots["base"], shots["changed"]),
            "shifted 1 px": (shots["base"], shots["shifted"]),
        }.items()
    ]
    decode_ms = round(median(decode_times) * 1000, 2)
    print(f"decode one 1440×900 screenshot (bee_design.visual.images): {decode_ms:.2f} ms")
    return {"pairs": rows, "decodeMs": decode_ms, "baseline": None if before is None else "numpy diff"}


def bench_capture(folder: Path) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from bee_design.capture.runner import capture
    from bee_design.capture.settings import Settings, browser_executable
    from bee_design.capture.targets import Target, parse_viewport
    from tests.design.helpers import SHOP, static_server

    viewports = tuple(parse_viewport(v) for v in VIEWPORTS)
    with static_server(SHOP) as url:
        pages = [Target("home", url), Target("button", url + "components/button.html")]
        started = time.perf_counter()
        evidence = capture(pages, Settings(browser_executable(), viewports), folder / "capture")
        bee_total = time.perf_counter() - started
        per_viewport = [shot.seconds for shot in evidence.captures]

        started = time.perf_counter()
        bare: list[float] = []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=browser_executable(), args=["--disable-gpu"])
            context = browser.new_context()
            tab = context.new_page()
            for target in pages:
                for viewport in viewports:
                    shot_started = time.perf_counter()
                    tab.set_viewport_size({"width": viewport.width, "height": viewport.height})
                    tab.goto(target.url, wait_until="load")
                    tab.screenshot(type="png")
                    bare.append(time.perf_counter() - shot_started)
            browser.close()
        bare_total = time.perf_counter() - started
    count = len(per_viewport)
    result = {
        "captures": count,
        "viewports": list(VIEWPORTS),
        "beeMedianPerViewportS": round(median(per_viewport), 3),
        "beeMaxPerViewportS": round(max(per_viewport), 3),
        "beeRunS": round(bee_total, 2),
        "bareMedianPerViewportS": round(median(bare), 3),
        "bareRunS": round(bare_total, 2),
        "targetMet": median(per_viewport) <= 0.5,
    }
    print(
        f"capture {count} shots: bee {result['beeMedianPerViewportS']} s/viewport (max {result['beeMaxPerViewportS']}, "
        f"run {result['beeRunS']} s incl. launch)  bare Playwright {result['bareMedianPerViewportS']} s/viewport "
        f"(run {result['bareRunS']} s)  target <= 0.5 s: {'met' if result['targetMet'] else 'NOT met'}"
    )
    return result


def main() -> None:
    os.environ.setdefault("PYTHONHASHSEED", "0")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        diff_result = bench_diff(screenshots(folder), folder)
        capture_result = bench_capture(folder)
    path = write_report("design", {"diff": diff_result, "capture": capture_result, "runs": RUNS})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
