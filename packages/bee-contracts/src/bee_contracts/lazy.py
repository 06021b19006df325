"""Lazy re-exports for a package's ``__init__``: its public names load on first use (PEP 562).

Importing any module of a package runs the package's ``__init__`` first, and the `bee` command imports every
installed package's CLI at start-up; so an ``__init__`` that re-exported its names eagerly would make every command
pay for every library behind them. With :func:`lazy_exports` the ``__init__`` lists its names in ``__all__`` and
maps each to the module that defines it; ``from package import Name`` imports that module then.
"""

from __future__ import annotations

import sys

# Annotations only (mypy reads this name as True): the `bee` front end imports the host packages' registries, and so
# their ``__init__``, and need not load typing for them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, resolving each name of ``exports`` from its module.

    ``exports`` maps a public name to the dotted module that defines it under the same name.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # later lookups are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted({*exports, *vars(sys.modules[package])})

    return __getattr__, __dir__
