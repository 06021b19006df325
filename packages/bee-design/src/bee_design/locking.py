"""One writer at a time for the design state, the mapping and the specs: a lock on ``.bee/design/.lock``."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

from bee_design import layout
from bee_design.layout import DesignFiles


@contextmanager
def writer(files: DesignFiles) -> Iterator[None]:
    """Hold the design write lock of a root (imports, mappings and specs wait for each other; readers never do)."""
    path = files.state_dir(create=True) / layout.LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
