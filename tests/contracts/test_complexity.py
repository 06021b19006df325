"""No function in the packages is more complex than the house allows: cyclomatic complexity 24, as radon counts it.

ruff's C90 enforces the same cap as it lints (pyproject.toml); radon counts more of what makes code branch (each
boolean operator, each comprehension's condition), so it is the stricter of the two and the one this test keeps.
"""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_visit

PACKAGES = Path(__file__).parents[2] / "packages"
#: The largest cyclomatic complexity a function may have.
CAP = 24


def test_no_function_is_more_complex_than_the_cap() -> None:
    over = []
    for path in sorted(PACKAGES.glob("*/src/**/*.py")):
        for block in cc_visit(path.read_text(encoding="utf-8")):
            if block.complexity > CAP:
                over.append(f"{path.relative_to(PACKAGES)}:{block.lineno} {block.fullname} ({block.complexity})")
    assert not over, f"over the complexity cap of {CAP}; split them: {over}"


def test_the_check_sees_a_function_over_the_cap() -> None:
    branches = "\n".join(f"    if x == {n}:\n        return {n}" for n in range(CAP + 1))
    [block] = cc_visit(f"def f(x):\n{branches}\n    return -1\n")
    assert block.complexity > CAP
