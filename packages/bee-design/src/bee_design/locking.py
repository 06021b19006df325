"""One writer at a time for the design state and the mapping file: an advisory lock on ``.bee/design/.lock``."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bee_design import layout


@contextmanager
def writer(root: Path) -> Iterator[None]:
    """Hold the design write lock of ``root`` (imports, mappings and specs wait for each other; readers never do)."""
    path = layout.state(root, layout.LOCK_FILE, must_exist=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    ignore = path.parent / ".gitignore"
    if not ignore.exists():
        # Local state: imported bundles and evidence stay out of commits (the mapping and specs are committed).
        ignore.write_text("*\n", encoding="utf-8")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
