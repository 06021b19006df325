"""Where the suite's CPU goes: a pytest plugin that records, for every test, the CPU time of the test process and
of the child processes it started and reaped (servers, CLIs, browsers), setup and teardown included.

    python -m pytest -p tests.harness.cpu_report -n 3 ...      # writes .cpu-report/<worker>.jsonl
    python -m tests.harness.cpu_report                          # the modules that cost most, summed

On 2 cores the suite's wall time cannot fall below half its CPU time, so this, not `--durations`, says what to make
cheaper. A module-scoped fixture's teardown is counted on the module's last test; a child still running when a test
ends is counted when it is reaped.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

REPORT_DIR = Path(".cpu-report")


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, None]:
    own, children = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    yield
    record = {
        "test": item.nodeid,
        "own": round(_cpu(resource.RUSAGE_SELF) - own, 3),
        "children": round(_cpu(resource.RUSAGE_CHILDREN) - children, 3),
    }
    REPORT_DIR.mkdir(exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with (REPORT_DIR / f"{worker}.jsonl").open("a") as report:
        report.write(json.dumps(record) + "\n")


def main() -> None:
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for path in REPORT_DIR.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            cost = modules[record["test"].split("::")[0]]
            cost[0] += record["own"]
            cost[1] += record["children"]
            cost[2] += 1
    total = sum(own + children for own, children, _ in modules.values())
    print(f"{'own s':>8} {'children s':>10} {'tests':>6}  module   (all: {total:.0f} s of CPU)")
    ranked = sorted(modules.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))
    for module, (own, children, count) in ranked[: int(sys.argv[1]) if len(sys.argv) > 1 else 40]:
        print(f"{own:8.1f} {children:10.1f} {int(count):6d}  {module}")


if __name__ == "__main__":
    main()
