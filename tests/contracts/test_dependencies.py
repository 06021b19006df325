"""No package imports another Bee package it does not declare as a dependency in its pyproject.toml.

Installed alone (`./dev wheels`), a distribution has only what it declares: an import of an undeclared Bee package
works in the workspace, where every package is installed, and fails for a user. Imports inside functions and under
``TYPE_CHECKING`` count, as they do for circles (:mod:`tests.contracts.test_import_cycles`).
"""

from __future__ import annotations

import re
import tomllib

from tests.contracts.test_import_cycles import PACKAGES, import_graph

_NAME = re.compile(r"[A-Za-z0-9._-]+")


def declared() -> dict[str, set[str]]:
    """Each Bee package (as imported: ``bee_core``) and the Bee packages its pyproject.toml depends on."""
    found: dict[str, set[str]] = {}
    for pyproject in sorted(PACKAGES.glob("*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        names = {match.group(0) for dep in project.get("dependencies", []) if (match := _NAME.match(dep))}
        found[project["name"].replace("-", "_")] = {n.replace("-", "_") for n in names if n.startswith("bee-")}
    return found


def undeclared(graph: dict[str, set[str]], depends: dict[str, set[str]]) -> list[str]:
    """Every import of ``graph`` from one Bee package into another that the first does not declare."""
    return sorted(
        f"{module} imports {target}"
        for module, targets in graph.items()
        for target in targets
        if (home := module.split(".")[0]) != (there := target.split(".")[0]) and there not in depends.get(home, set())
    )


def test_the_checker_finds_an_undeclared_import() -> None:
    graph = {"bee_a.x": {"bee_b.y", "bee_a.z"}, "bee_b.y": {"bee_c"}, "bee_a.z": set()}
    assert undeclared(graph, {"bee_a": {"bee_b"}, "bee_b": set()}) == ["bee_b.y imports bee_c"]


def test_every_package_declares_the_bee_packages_it_imports() -> None:
    depends = declared()
    assert set(depends) == {path.name for path in PACKAGES.glob("*/src/bee_*")}
    assert depends["bee_core"] == {"bee_contracts", "bee_hostkit"}
    assert undeclared(import_graph(), depends) == []
