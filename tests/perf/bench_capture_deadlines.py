"""How far past its --timeout a stalled capture ends (`./dev bench capture_deadlines`).

`bee design capture`'s engine, in process, on the misbehaving pages of tests/design/misbehaving.py (on 127.0.0.1):
a script that keeps the main thread busy after load, a web font that never arrives after load, one that never
arrives before load, a document that never answers. Each with a 3-second timeout, several runs. Measured from the
moment the stalled page's capture starts (the progress report for it) to the moment the error reaches the caller:
the deadline itself plus what ending costs — abandoning the call, SIGKILL to the browser's process group and its
crash handler, waiting until none of them is left, and collecting the calls given up on. Target: the error within
2 s of the deadline.

Writes tests/perf/reports/capture_deadlines.json.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from tests.perf._report import median, write_report

RUNS = 5
TIMEOUT = 3.0
TARGET_OVERRUN_S = 2.0
CASES = {
    "busy main thread after load": "/spin.html",
    "font never arrives after load": "/font-after-load.html",
    "font never arrives before load": "/font-before-load.html",
    "document never answers": "/never.html",
}


def one(url: str, out: Path) -> tuple[float, float, str]:
    """(seconds from the page's start to the error, seconds of the whole call, the step named)."""
    from bee_contracts import BeeError
    from bee_design.capture.runner import capture
    from bee_design.capture.settings import Settings, browser_executable
    from bee_design.capture.targets import Target, parse_viewport

    started: list[float] = []

    def progress(done: int, total: int, label: str) -> None:
        started.append(time.perf_counter())

    settings = Settings(browser_executable(), (parse_viewport("desktop=800x600"),), timeout_seconds=TIMEOUT)
    call_started = time.perf_counter()
    try:
        capture([Target("page", url)], settings, out, progress=progress)
    except BeeError as exc:
        ended, error = time.perf_counter(), exc
    else:
        raise AssertionError(f"{url} was captured; it should have stalled")
    if error.code != "deadline_exceeded":
        raise AssertionError(error.message)
    return ended - started[0], ended - call_started, str((error.details or {}).get("step"))


def main() -> None:
    from tests.design.misbehaving import misbehaving

    rows: list[dict[str, Any]] = []
    with misbehaving() as (site, _), tempfile.TemporaryDirectory() as scratch:
        for case, path in CASES.items():
            to_error, calls, steps = [], [], set()
            for run in range(RUNS):
                seconds, call, step = one(site.base + path, Path(scratch) / f"{run}-{path.strip('/')}")
                to_error.append(seconds)
                calls.append(call)
                steps.add(step)
            overrun = [s - TIMEOUT for s in to_error]
            row: dict[str, Any] = {
                "case": case,
                "steps": sorted(steps),
                "timeoutS": TIMEOUT,
                "medianOverrunS": round(median(overrun), 3),
                "maxOverrunS": round(max(overrun), 3),
                "medianCallS": round(median(calls), 2),
                "targetMet": max(overrun) <= TARGET_OVERRUN_S,
            }
            rows.append(row)
            print(
                f"{case:<32} stalled {'/'.join(row['steps'])}: error {row['medianOverrunS']} s after the deadline "
                f"(max {row['maxOverrunS']}), whole call {row['medianCallS']} s with launch; "
                f"target <= {TARGET_OVERRUN_S} s: {'met' if row['targetMet'] else 'NOT met'}"
            )
    report = write_report("capture_deadlines", {"cases": rows, "runs": RUNS})
    print(f"wrote {report}")


if __name__ == "__main__":
    main()
