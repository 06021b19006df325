"""The `bee` command."""

from bee_cli._version import __version__
from bee_cli.main import ENTRY_POINT_GROUP, main, make_cli

__all__ = ["ENTRY_POINT_GROUP", "__version__", "main", "make_cli"]
