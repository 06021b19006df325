"""Every package has a real __init__.py with a sorted __all__ of public names that all resolve.

Sorted as ruff's RUF022 sorts it (isort style): constants, then classes, then everything else, each alphabetical.
"""

import importlib
import pkgutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "packages").glob("*/src/*"))


def packages() -> list[str]:
    found = []
    for top in SOURCES:
        if not (top / "__init__.py").is_file():
            found.append(top.name)  # reported below as missing
            continue
        found.append(top.name)
        module = importlib.import_module(top.name)
        found += [info.name for info in pkgutil.walk_packages(module.__path__, f"{top.name}.") if info.ispkg]
    return found


def isort_style(name: str) -> tuple[int, str]:
    if name.isupper():
        return 0, name
    return (1 if name[0].isupper() else 2), name


@pytest.mark.parametrize("name", packages())
def test_the_package_has_an_init_with_a_sorted_all_that_resolves(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__file__ and module.__file__.endswith("__init__.py"), f"{name} has no __init__.py"
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, list), f"{name}.__all__ is missing"
    assert exported == sorted(exported, key=isort_style), f"{name}.__all__ is not sorted"
    assert len(set(exported)) == len(exported), f"{name}.__all__ repeats a name"
    for public in exported:
        assert getattr(module, public) is not None, f"{name}.{public} does not resolve"
