"""No module in ``packages/`` is part of an import circle, lazy imports inside functions and imports made only for
type checking included.

A circle means two modules each need the other to be understood (the board's pages and its app once did; the store
once imported the tools that call it; a capture's page once took its type from the runner that calls it). An import
under ``TYPE_CHECKING`` never runs, but a reader still needs the other module to understand this one, so it counts.
Importing ``a.b.c`` is an edge to ``a.b.c`` alone, not to the packages ``a`` and ``a.b`` it passes through.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from bee_tracker.board.graph import components

PACKAGES = Path(__file__).parents[2] / "packages"


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in PACKAGES.glob("*/src/**/*.py"):
        src = next(p for p in path.parents if p.name == "src")
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _imports(node)


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names if alias.name in known)
        return
    base = node.module or ""
    if node.level:
        here = module.split(".") if is_package else module.split(".")[:-1]
        here = here[: len(here) - (node.level - 1)]
        base = ".".join([*here, base] if base else here)
    for alias in node.names:
        if f"{base}.{alias.name}" in known:
            yield f"{base}.{alias.name}"
        elif base in known:
            yield base


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        graph[module] = {t for node in _imports(tree) for t in _targets(module, is_package, node, known)} - {module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (the board's own Tarjan, iterative)."""
    return [c for c in components({m: sorted(t) for m, t in graph.items()}) if len(c) > 1]


def test_the_checker_finds_a_circle_a_lazy_one_and_one_for_type_checking() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x\ndef f():\n    import y\n")
    assert [n.names[0].name for n in _imports(tree) if isinstance(n, ast.Import)] == ["x", "y"]


def test_no_module_in_packages_is_in_an_import_circle() -> None:
    graph = import_graph()
    assert "bee_tracker.board.pages" in graph and "bee_tracker.board.base" in graph["bee_tracker.board.pages"]
    assert circles(graph) == [], "modules that import each other, directly or through others"


def test_the_tracker_store_is_a_leaf_that_knows_none_of_its_callers() -> None:
    """The store offers read and write; the tools, the host, the board and the CLI call it, never the reverse."""
    graph = import_graph()
    store = {module for module in graph if module.startswith("bee_tracker.store")}
    callers = {
        f"{module} imports {target}"
        for module in store
        for target in graph[module]
        if target.startswith("bee_tracker") and not target.startswith(("bee_tracker.store", "bee_tracker.model"))
    }
    assert callers == set()
