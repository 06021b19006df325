"""The `bee` console script: the editors' stdio hosts go to a warm host, everything else to the click group.

`bee mcp serve …` and `bee design mcp …` are what editors start, once per window, and wait on: before anything heavy
is imported, :func:`main` hands them to the front end (:mod:`bee_cli.frontend`, stdlib only), which relays stdio to
a warm host the warm supervisor keeps. Any other command — and those two when the front end declines them
(``BEE_WARM=0``, an option it does not know, no warm host in time) — loads the click group (:mod:`bee_cli.group`).
"""

from __future__ import annotations

import sys

# Annotations only (mypy reads this name as True): importing click here would cost the front end its purpose.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from bee_cli.group import ENTRY_POINT_GROUP, BeeGroup, Plugin, make_cli

__all__ = ["ENTRY_POINT_GROUP", "BeeGroup", "Plugin", "main", "make_cli"]


#: Commands whose start is part of their answer, run straight from their own group (module, attribute): `bee bd …`
#: is what agents' instruction files and scripts call for every step, so neither the warm front end nor the
#: plugins' entry points (importlib.metadata alone costs more than the command's own work) stand before it. The warm
#: answerer (:mod:`bee_cli.answering`) runs them in a process that has imported them already; the group's module may
#: define ``warm_up()``, which the answerer runs once before it serves (:mod:`bee_cli.answerer`).
DIRECT = {"bd": ("bee_tracker.bd.cli", "bd")}


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in DIRECT:
        from bee_cli.answering import answer_warm

        answer_warm(args)  # returns only when the warm answerer declines, having run nothing
        _direct(args)  # returns only when the package that serves it is not installed
    from bee_cli.frontend import serve_warm_or_decline

    serve_warm_or_decline(args)  # returns only when this command goes the click way
    from bee_cli.group import run

    run(args)


def _direct(args: list[str]) -> None:
    """Run ``bee NAME ARGS`` with NAME's own click group, the one the root group registers, as ``bee NAME``."""
    import importlib

    from bee_cli.context import CONTEXT_SETTINGS

    module, attribute = DIRECT[args[0]]
    try:
        group = getattr(importlib.import_module(module), attribute)
    except ImportError:  # its package is not installed: the root group says the command does not exist
        return
    group.main(args=args[1:], prog_name=f"bee {args[0]}", **CONTEXT_SETTINGS)


def __getattr__(name: str) -> object:
    # The group's names, for callers that import them from here (they load click).
    if name in ("ENTRY_POINT_GROUP", "BeeGroup", "Plugin", "make_cli"):
        from bee_cli import group

        return getattr(group, name)
    raise AttributeError(f"module 'bee_cli.main' has no attribute {name!r}")
