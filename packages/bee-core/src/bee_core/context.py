"""What the core host fixes at startup and hands to every handler."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from bee_contracts.layout import Checkout
from bee_core.instance import Instance
from bee_core.packet.cache import ContentCache
from bee_hostkit import ConfinedRoot

if TYPE_CHECKING:
    from bee_core.artifacts.state import ArtifactState


@dataclass
class CoreContext:
    """The checkout, the selected instance, the checkout's files and the host's caches.

    ``files`` is the checkout opened once at startup: every path-taking tool reads through it, so no path can
    leave the checkout or reach ``.git``, ``.bee`` or the selected instance (wherever inside the checkout it is).
    """

    checkout: Path
    instance: Instance
    files: ConfinedRoot
    content: ContentCache = field(default_factory=ContentCache)

    @cached_property
    def artifacts(self) -> ArtifactState:
        """Artifact verification and search caches, made on first use (the import is not paid at start-up)."""
        from bee_core.artifacts.state import ArtifactState

        return ArtifactState()

    @classmethod
    def open(cls, checkout: Path, instance_root: Path | None = None) -> CoreContext:
        """The context for ``checkout`` (it must be a directory) with the instance it selects (``instance_root``,
        else $BEE_INSTANCE_ROOT, else ``<checkout>/.bee``: :class:`~bee_contracts.layout.Checkout`).

        Raises:
            BeeError: ``invalid_argument`` for a checkout that does not exist or is not a directory;
                ``outside_root`` for a ``.bee`` that is a symlink out of it.
        """
        given = None if instance_root is None else str(instance_root)
        return cls.serving(Checkout.select(str(checkout), given, os.environ))

    @classmethod
    def serving(cls, checkout: Checkout) -> CoreContext:
        """The context of a host serving ``checkout``: its instance, and its files opened once."""
        instance = Instance(Path(checkout.instance))
        root = Path(checkout.path)
        return cls(root, instance, ConfinedRoot(root, hidden=[instance.root]))
