"""Shared bits of the benchmarks: medians, machine facts and the JSON report."""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPORTS = Path(__file__).parent / "reports"


def median(values: list[float]) -> float:
    return statistics.median(values)


def machine() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def write_report(name: str, report: dict[str, Any]) -> Path:
    REPORTS.mkdir(exist_ok=True)
    path = REPORTS / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **report}, indent=2) + "\n")
    return path


def verdict(ratio: float, target: float, higher_is_better: bool) -> str:
    met = ratio >= target if higher_is_better else ratio <= target
    sign = ">=" if higher_is_better else "<="
    return f"{ratio:.2f}x (target {sign} {target}x: {'met' if met else 'NOT met'})"
