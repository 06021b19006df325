"""What the core host keeps about artifacts for its lifetime: the verifier and the result caches.

Also the two boundary helpers every artifact handler uses: :meth:`ArtifactState.store` (which needs an initialised
instance) and :func:`tool_errors` (which turns store errors into tool errors).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bee_contracts import ErrorCode
from bee_core.artifacts.errors import ArtifactError
from bee_core.artifacts.rows import RowsCache
from bee_core.artifacts.search import SearchCache
from bee_core.artifacts.store import ArtifactStore
from bee_core.artifacts.verify import Verifier
from bee_core.instance import Instance
from bee_hostkit import ToolError


@dataclass
class ArtifactState:
    """One per host process: shared by every call, safe to use from the handlers' worker threads."""

    verifier: Verifier = field(default_factory=Verifier)
    search: SearchCache = field(default_factory=SearchCache)
    rows: RowsCache = field(default_factory=RowsCache)
    _stores: dict[Path, ArtifactStore] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def store(self, instance: Instance) -> ArtifactStore:
        """The artifact store of ``instance``.

        Raises:
            ToolError: ``not_initialized`` when the instance does not exist.
        """
        if not instance.exists:
            raise ToolError(
                ErrorCode.NOT_INITIALIZED,
                f"no Bee instance at {instance.root}; run `bee init` in the checkout, then retain files with "
                "`bee artifact add FILE`",
            )
        root = instance.path("artifacts")
        with self._lock:
            if root not in self._stores:
                self._stores[root] = ArtifactStore(root, self.verifier)
            return self._stores[root]


@contextlib.contextmanager
def tool_errors() -> Iterator[None]:
    """Re-raise store errors as :class:`ToolError` with the same code, message and details."""
    try:
        yield
    except ArtifactError as exc:
        raise ToolError(exc.code, exc.message, details=exc.details) from None
