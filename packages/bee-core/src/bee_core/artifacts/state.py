"""What the core host keeps about artifacts for its lifetime: the verifier and the result caches.

Also the boundary every artifact handler goes through: :meth:`ArtifactState.store`, which needs an initialised
instance.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from bee_contracts import BeeError, ErrorCode
from bee_core.artifacts.rows import RowsCache
from bee_core.artifacts.search import SearchCache
from bee_core.artifacts.store import ArtifactStore
from bee_core.artifacts.verify import Verifier
from bee_core.instance import Instance


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
            BeeError: ``not_initialized`` when the instance does not exist.
        """
        if not instance.exists:
            raise BeeError(
                ErrorCode.NOT_INITIALIZED,
                f"no Bee instance at {instance.root}; run `bee init` in the checkout, then retain files with "
                "`bee artifact add FILE`",
            )
        root = instance.path("artifacts")
        with self._lock:
            if root not in self._stores:
                self._stores[root] = ArtifactStore(root, self.verifier)
            return self._stores[root]
