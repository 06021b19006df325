"""The one atomic file write: readers see the old file or the whole new one, never a part, even after a crash."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def write_atomic(
    path: Path, data: bytes | Iterable[bytes], *, scratch: Path | None = None, mode: int | None = None
) -> None:
    """Write ``data`` to ``path`` through a temporary file, fsync it, rename it over ``path``, fsync the directory.

    ``data`` is the bytes, or pieces of them written as they come (an export larger than memory); if producing a
    piece fails, ``path`` is unchanged.

    ``scratch`` is where the temporary file lives (default: beside ``path``; it must be on the same file system),
    for stores that sweep their own leftovers after an interrupted write. The file gets permission bits ``mode``
    (default 0600, those of the temporary file), set before the rename so it is never readable more widely.

    Raises:
        OSError: the folder cannot be created or written; ``path`` is then unchanged.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = scratch or path.parent
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            if mode is not None:
                os.fchmod(stream.fileno(), mode)
            if isinstance(data, bytes | bytearray | memoryview):
                stream.write(data)
            else:
                for piece in data:
                    stream.write(piece)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    # The rename itself is durable only once the directory entry is on disk.
    with contextlib.suppress(OSError):
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
