"""What the design host fixes at startup and hands to every handler: its checkout, the instance and their files."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from bee_contracts.layout import Checkout
from bee_design.layout import DesignFiles


@dataclass(frozen=True)
class DesignContext:
    """The checkout every path resolves inside (``root``: absolute and real, symlinks resolved once, here), the Bee
    instance whose ``design`` folder holds the design state, and their files."""

    root: Path
    instance: Path
    files: DesignFiles

    @classmethod
    def open(cls, checkout: str | Path, instance_root: str | Path | None = None) -> DesignContext:
        """The context for ``checkout``, which must be an absolute path to an existing directory, with the instance
        it selects (``instance_root``, else $BEE_INSTANCE_ROOT, else ``<checkout>/.bee``).

        A relative checkout is refused rather than resolved: an editor starts the host from a directory nobody chose.

        Raises:
            BeeError: ``invalid_argument`` naming what is wrong with the checkout; ``outside_root`` for a ``.bee``
                that is a symlink out of it (:class:`~bee_contracts.layout.Checkout`).
        """
        given = None if instance_root is None else str(instance_root)
        return cls.serving(Checkout.select(str(checkout), given, os.environ, absolute=True))

    @classmethod
    def serving(cls, checkout: Checkout) -> DesignContext:
        """The context of a host serving ``checkout``."""
        files = DesignFiles(Path(checkout.path), Path(checkout.instance))
        return cls(files.root, files.instance, files)
