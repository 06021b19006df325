"""The `bee` command.

Names load on first use (PEP 562): the console script imports :mod:`bee_cli.main` through this package, and the
front end it may hand over to must not pay for click.
"""

from bee_cli._version import __version__

# Annotations only (mypy reads this name as True).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from bee_cli.group import ENTRY_POINT_GROUP, make_cli
    from bee_cli.main import main

__all__ = ["ENTRY_POINT_GROUP", "__version__", "main", "make_cli"]


def __getattr__(name: str) -> object:
    if name in ("ENTRY_POINT_GROUP", "make_cli"):
        from bee_cli import group

        return getattr(group, name)
    if name == "main":
        from bee_cli.main import main

        return main
    raise AttributeError(f"module 'bee_cli' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*__all__, *globals()})
