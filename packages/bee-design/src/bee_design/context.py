"""What the design host fixes at startup and hands to every handler: its root and the root's files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bee_contracts import invalid
from bee_design.layout import DesignFiles


@dataclass(frozen=True)
class DesignContext:
    """The root every path resolves inside (absolute and real: symlinks resolved once, here), and its files."""

    root: Path
    files: DesignFiles

    @classmethod
    def open(cls, root: str | Path) -> DesignContext:
        """The context for ``root``, which must be an absolute path to an existing directory.

        A relative root is refused rather than resolved: an editor starts the host from a directory nobody chose.

        Raises:
            BeeError: ``invalid_argument`` naming what is wrong with the root.
        """
        given = str(root)
        if not given:
            raise invalid("the root is empty; pass --root /absolute/path/to/checkout")
        path = Path(given)
        if not path.is_absolute():
            raise invalid(
                f"the root {given!r} is relative; pass an absolute path (--root /absolute/path/to/checkout)",
                root=given,
            )
        if not path.exists():
            raise invalid(f"the root {given!r} does not exist; pass an existing directory", root=given)
        if not path.is_dir():
            raise invalid(f"the root {given!r} is not a directory; pass the checkout's directory", root=given)
        files = DesignFiles(path)
        return cls(files.root, files)
