"""A Bee instance: the per-checkout state directory (``<checkout>/.bee`` unless another is selected)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bee_contracts import __version__
from bee_contracts.layout import select_instance
from bee_hostkit.files import write_atomic

INSTANCE_FILE = "instance.json"

#: Sub-directories every instance has.
LAYOUT = ("artifacts", "cache")


@dataclass(frozen=True)
class Instance:
    """Where an instance lives; it may not exist yet (``bee init`` creates it)."""

    root: Path

    @classmethod
    def select(cls, checkout: Path, instance_root: Path | None = None) -> Instance:
        """The instance for ``checkout``: ``instance_root``, else $BEE_INSTANCE_ROOT, else ``<checkout>/.bee``
        (:func:`bee_contracts.layout.select_instance`, the rule both stdio hosts and the front end follow).

        Raises:
            BeeError: ``outside_root`` when ``<checkout>/.bee`` is a symlink out of the checkout (its settings would
                be another checkout's: :func:`bee_contracts.layout.checkout_instance`).
        """
        given = None if instance_root is None else str(instance_root)
        return cls(Path(select_instance(str(checkout), given, os.environ)))

    @property
    def exists(self) -> bool:
        return (self.root / INSTANCE_FILE).is_file()

    def path(self, *parts: str) -> Path:
        return self.root.joinpath(*parts)

    def init(self) -> bool:
        """Create the instance; return False when it already existed (nothing is changed then)."""
        if self.exists:
            for name in LAYOUT:
                self.path(name).mkdir(parents=True, exist_ok=True)
            return False
        self.root.mkdir(parents=True, exist_ok=True)
        for name in LAYOUT:
            self.path(name).mkdir(exist_ok=True)
        # Instance state is local to this machine: keep it out of commits.
        (self.root / ".gitignore").write_text("*\n", encoding="utf-8")
        record = {"version": __version__, "created": datetime.now(UTC).isoformat(timespec="seconds")}
        write_atomic(self.root / INSTANCE_FILE, (json.dumps(record, indent=2) + "\n").encode("utf-8"))
        return True
