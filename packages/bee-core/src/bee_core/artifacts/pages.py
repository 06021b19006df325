"""Pages of exact artifact bytes for bee_artifact_read, each proven to come from the recorded content."""

from __future__ import annotations

import os
from pathlib import Path

from bee_contracts import invalid
from bee_core.artifacts.records import ArtifactRecord
from bee_core.artifacts.verify import Verifier


def read_page(record: ArtifactRecord, path: Path, verifier: Verifier, offset: int, length: int) -> bytes:
    """``length`` bytes (fewer at the end) of ``record`` from ``offset``.

    The file is verified (see :mod:`bee_core.artifacts.verify`) through the same descriptor the page is read
    from, and its status is checked again after the read, so the page is never from changed bytes.

    Raises:
        BeeError: ``invalid_argument`` for an offset past the end (an empty artifact has one page, at 0).
        BeeError: ``hash_mismatch`` when the bytes were changed behind Bee's back.
        BytesMissing: the stored file is not there (see :meth:`~bee_core.artifacts.store.ArtifactStore.serve`).
    """
    if offset > record.size or (offset == record.size and record.size > 0):
        raise invalid(
            f"offsetBytes {offset} is past the end of artifact {record.id}, which has {record.size} bytes; "
            f"pages start below {record.size} (follow nextOffsetBytes until it is null)",
            offsetBytes=offset,
            sourceBytes=record.size,
        )
    return verifier.read(record, path, lambda fd: os.pread(fd, length, offset))
