"""What the core host fixes at startup and hands to every handler."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

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
        """Resolve ``checkout`` (it must be a directory), select its instance and open the checkout's files.

        Raises:
            NotADirectoryError: the checkout does not exist or is not a directory.
        """
        resolved = checkout.expanduser().resolve()
        if not resolved.is_dir():
            raise NotADirectoryError(f"checkout {str(checkout)!r} is not a directory")
        instance = Instance.select(resolved, instance_root)
        return cls(resolved, instance, ConfinedRoot(resolved, hidden=[instance.root]))
