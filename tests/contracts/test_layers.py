"""bee-hostkit by layer: the stdio side imports nothing of the HTTP layer or of what only its extra brings.

A stdio host (bee-core, bee-design) installs bee-hostkit without its ``http`` extra (``./dev wheels`` checks that
install), so no module it may import needs the extra: not the transport-free root, not ``bee_hostkit.stdio``, not
the stdio hosts. Imports made only for type checking do not count (they never run); imports inside functions do.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGES = Path(__file__).parents[2] / "packages"
HOSTKIT = PACKAGES / "bee-hostkit/src/bee_hostkit"
#: What only the http extra brings or needs. The SDK requires uvicorn and starlette too, but the stdio side must
#: not lean on them: the extra, not the SDK, is what pins them.
HTTP_ONLY = ("uvicorn", "httptools", "starlette", "bee_hostkit.http")


def _type_checking(node: ast.If) -> bool:
    return getattr(node.test, "id", None) == "TYPE_CHECKING" or getattr(node.test, "attr", None) == "TYPE_CHECKING"


def imported(tree: ast.AST) -> Iterator[str]:
    """Every module a tree imports when it runs (lazily included), as written (``from a import b``: ``a`` and
    ``a.b``)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking(node):
            yield from imported(ast.Module(body=node.orelse, type_ignores=[]))
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)
        yield from imported(node)


def _http_only(name: str) -> bool:
    return any(name == top or name.startswith(f"{top}.") for top in HTTP_ONLY)


def http_imports(source: Path) -> dict[str, list[str]]:
    """Each module under ``source``, bee-hostkit's HTTP layer aside, that imports something of :data:`HTTP_ONLY`."""
    found: dict[str, list[str]] = {}
    for path in sorted(source.rglob("*.py")):
        if path.is_relative_to(HOSTKIT / "http"):
            continue
        names = sorted({name for name in imported(ast.parse(path.read_text())) if _http_only(name)})
        if names:
            found[str(path.relative_to(PACKAGES))] = names
    return found


def test_the_checker_sees_a_lazy_import_and_not_a_type_checking_one() -> None:
    tree = ast.parse("if TYPE_CHECKING:\n    import uvicorn\ndef f():\n    from starlette.types import Scope\n")
    assert [name for name in imported(tree) if _http_only(name)] == ["starlette.types", "starlette.types.Scope"]
    assert not _http_only("starlettes") and _http_only("bee_hostkit.http.edge") and not _http_only("bee_hostkit.host")


def test_the_stdio_side_needs_nothing_of_the_http_extra() -> None:
    for source in (HOSTKIT, PACKAGES / "bee-core/src/bee_core", PACKAGES / "bee-design/src/bee_design"):
        assert http_imports(source) == {}, f"{source.name} imports what only bee-hostkit[http] brings"
