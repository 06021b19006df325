"""Tamper detection: an artifact is served only while its stored bytes are known to hash to the recorded sha256.

Hashing every artifact on every call would make search as slow as sha256, so the check is layered:

1. At ingestion the store records the stored copy's file status (device, inode, size, mtime_ns, ctime_ns) right
   after the bytes were hashed and the file was made read-only.
2. On every use, the file is stat-ed (one system call). If the status equals the recorded one, or the status at
   which this process last hashed the file, the bytes are trusted.
3. Otherwise the whole file is hashed again. A match is remembered (for this process) with the new status; a
   difference is ``hash_mismatch`` and nothing is served.

Any write through the file system changes ctime, which cannot be set back without changing the system clock, so
a modification behind Bee's back always leads to step 3. What this does not catch: a writer who resets the clock,
or edits the raw block device, and an edit of both the stored bytes and the record's status.

Stored bytes that are missing altogether are not judged here: `bee artifact rm` deletes the record and then the
bytes, so a reader that loaded the record a moment earlier finds them gone. :class:`BytesMissing` tells the store,
which looks at the record again (:meth:`~bee_core.artifacts.store.ArtifactStore.recheck`) to tell a removal from a
loss.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from bee_contracts import BeeError, ErrorCode
from bee_core.artifacts.records import ArtifactRecord, FileStatus

T = TypeVar("T")

_CHUNK = 1024 * 1024


def hash_fd(fd: int) -> tuple[str, int]:
    """sha256 hex and size of everything readable from ``fd`` (read from offset 0, without moving its position)."""
    digest = hashlib.sha256()
    offset = 0
    while True:
        chunk = os.pread(fd, _CHUNK, offset)
        if not chunk:
            return digest.hexdigest(), offset
        digest.update(chunk)
        offset += len(chunk)


class BytesMissing(Exception):
    """The stored bytes of ``record`` are not there. Never leaves the artifacts package: the store decides whether
    the artifact was removed meanwhile (``not_found``, or skipped by a search) or lost its bytes (``hash_mismatch``).
    """

    def __init__(self, record: ArtifactRecord) -> None:
        super().__init__(f"the stored bytes of {record.id} are missing")
        self.record = record


def tampered(record: ArtifactRecord, found: str | None) -> BeeError:
    """The ``hash_mismatch`` error for ``record``; ``found`` is the hash now on disk (None: its bytes were lost)."""
    what = "its stored bytes are missing" if found is None else f"its stored bytes now hash to sha256:{found}"
    return BeeError(
        ErrorCode.HASH_MISMATCH,
        f"artifact {record.id} ({record.name}) was changed on disk behind Bee's back: {what}, not the recorded "
        f"{record.source_sha256}; nothing was served. Add the original again with `bee artifact add` (that repairs "
        f"it) or remove it with `bee artifact rm {record.id}`.",
        details={"id": record.id, "recordedSha256": record.source_sha256, "foundSha256": found and f"sha256:{found}"},
    )


class Verifier:
    """Remembers, per content hash, the file status at which this process last proved the bytes intact."""

    def __init__(self) -> None:
        self._proven: dict[str, FileStatus] = {}
        self._lock = threading.Lock()
        self.rehashes = 0

    def _trusted(self, record: ArtifactRecord, status: FileStatus) -> bool:
        if status == record.stored:
            return True
        with self._lock:
            return self._proven.get(record.sha256) == status

    def read(self, record: ArtifactRecord, path: Path, read: Callable[[int], T]) -> T:
        """Run ``read`` on an open descriptor of ``path`` that is proven to hold ``record``'s bytes.

        The status is checked again after the read; if the file changed meanwhile it is proven again and read
        again, so what ``read`` returns never comes from changed bytes.

        Raises:
            BeeError: ``hash_mismatch`` when its bytes differ from the record.
            BytesMissing: the file is not there.
        """
        while True:
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                raise BytesMissing(record) from None
            try:
                status = self.check_fd(record, fd)
                result = read(fd)
                if FileStatus.of(os.fstat(fd)) == status:
                    return result
            finally:
                os.close(fd)

    def check_fd(self, record: ArtifactRecord, fd: int) -> FileStatus:
        """Prove the open file ``fd`` holds ``record``'s bytes; return the status at which that holds.

        Raises:
            BeeError: ``hash_mismatch`` when the bytes differ from the recorded hash.
        """
        status = FileStatus.of(os.fstat(fd))
        if self._trusted(record, status):
            return status
        found, size = hash_fd(fd)
        self.rehashes += 1
        if found != record.sha256 or size != record.size:
            raise tampered(record, found)
        after = FileStatus.of(os.fstat(fd))
        if after != status:  # written to while we hashed: prove it again from scratch
            return self.check_fd(record, fd)
        with self._lock:
            self._proven[record.sha256] = status
        return status

    def check(self, record: ArtifactRecord, path: Path) -> FileStatus:
        """:meth:`check_fd` for the file at ``path``.

        Raises:
            BeeError: ``hash_mismatch`` when the bytes differ.
            BytesMissing: the file is not there.
        """
        try:
            status = FileStatus.of(os.stat(path))
            if self._trusted(record, status):  # the common case: one system call
                return status
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            raise BytesMissing(record) from None
        try:
            return self.check_fd(record, fd)
        finally:
            os.close(fd)

    def still(self, record: ArtifactRecord, path: Path, status: FileStatus) -> None:
        """After reading ``path`` without a descriptor (a ripgrep search), make sure it did not change meanwhile.

        Raises:
            BeeError: ``hash_mismatch`` when it changed and no longer holds the recorded bytes.
            BytesMissing: the file is not there any more.
        """
        try:
            now = FileStatus.of(os.stat(path))
        except FileNotFoundError:
            raise BytesMissing(record) from None
        if now != status:
            self.check(record, path)
