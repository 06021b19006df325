"""The design host's diff and capture against peers, side by side in one run (`./dev bench design`).

Diff: Bee's numpy diff (bee_design.visual.diff) against pybind11-pixelmatch, the compiled C++ port of pixelmatch,
on 1440×900 screenshots that Chromium takes here of a generated page (text columns, cards, buttons): the same
screenshot twice, a change of one card's text and one button's colour, and the whole page moved down 1 pixel.
Both count the pixels over threshold 0.1 with anti-aliased pixels left out (pixelmatch's defaults); the counts
must agree. Timed interleaved, median of 30 runs each. Targets: ≤ 30 ms and ≤ 1.5× the compiled peer.

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

sys.path.insert(0, str(Path(__file__).parent))
from _report import median, verdict, write_report

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

RUNS = 30
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
    """1440×900 captures of the page and its variants, by Bee's capture (deterministic settings)."""
    import numpy as np
    from PIL import Image

    from bee_design.capture.runner import Target, capture, parse_viewport
    from bee_design.capture.settings import Settings, browser_executable
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
    shots = {}
    for shot in evidence.captures:
        with Image.open(folder / "ev" / shot.file, formats=["PNG"]) as image:
            shots[shot.name] = np.asarray(image.convert("RGBA")).copy()
    return shots


def bench_diff(shots: dict[str, Any]) -> list[dict[str, Any]]:
    from pybind11_pixelmatch import Options, pixelmatch

    from bee_design.visual.diff import count_differing

    options = Options()
    options.threshold = 0.1
    options.includeAA = False
    rows = []
    for name, (first, second) in {
        "identical": (shots["base"], shots["base"].copy()),
        "changed": (shots["base"], shots["changed"]),
        "shifted 1 px": (shots["base"], shots["shifted"]),
    }.items():
        ours, theirs = count_differing(first, second, 0.1), pixelmatch(first, second, options=options)
        assert ours == theirs, (name, ours, theirs)
        bee_times, peer_times = [], []
        for _ in range(RUNS):
            started = time.perf_counter()
            count_differing(first, second, 0.1)
            bee_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            pixelmatch(first, second, options=options)
            peer_times.append(time.perf_counter() - started)
        bee_ms, peer_ms = median(bee_times) * 1000, median(peer_times) * 1000
        rows.append(
            {
                "pair": name,
                "differingPixels": ours,
                "beeMs": round(bee_ms, 2),
                "pixelmatchMs": round(peer_ms, 2),
                "beeBestMs": round(min(bee_times) * 1000, 2),
                "pixelmatchBestMs": round(min(peer_times) * 1000, 2),
                "ratio": round(bee_ms / peer_ms, 2) if peer_ms else None,
                "under30ms": bee_ms <= 30,
            }
        )
        print(
            f"diff {name:<13} {ours:>7} px  bee {bee_ms:7.2f} ms (best {min(bee_times) * 1000:.2f})  "
            f"pixelmatch {peer_ms:7.2f} ms (best {min(peer_times) * 1000:.2f})  "
            f"{verdict(bee_ms / peer_ms if peer_ms else 0, 1.5, higher_is_better=False)}"
        )
    return rows


def bench_capture(folder: Path) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from bee_design.capture.runner import Target, capture, parse_viewport
    from bee_design.capture.settings import Settings, browser_executable
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
        shots = screenshots(folder)
        diff_rows = bench_diff(shots)
        capture_result = bench_capture(folder)
    path = write_report("design", {"diff": diff_rows, "capture": capture_result, "runs": RUNS})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
