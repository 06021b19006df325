"""The artifact store under ``<instance>/artifacts/``: layout, atomic ingestion, listing and removal.

Layout::

    artifacts/
      blobs/<sha256 hex>     the exact bytes, read-only, one file per distinct content
      records/<id>.json      the metadata; an artifact exists exactly when its record does
      tmp/                   ingestions in flight (<pid>-<random>.part)
      .lock                  serialises writers (add, rm); readers never take it

Ingestion is atomic: the bytes are copied to ``tmp/``, hashed on the way, fsync-ed, made read-only and renamed
into ``blobs/``; only then is the record written (temp file, fsync, rename). An interrupted add leaves at most a
temp file or an unreferenced blob, neither of which is visible; the next add sweeps temp files of dead processes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO, TypeVar

from bee_contracts import BeeError, ErrorCode
from bee_core.artifacts.content import ContentFacts, ContentScanner, classify, media_type_for
from bee_core.artifacts.records import (
    ArtifactRecord,
    DamagedRecord,
    FileStatus,
    Kind,
    artifact_id,
    check_id,
    parse_record,
)
from bee_core.artifacts.verify import BytesMissing, Verifier, tampered
from bee_hostkit.files import write_atomic

T = TypeVar("T")

_CHUNK = 1024 * 1024

#: Largest record file read: a record is a few hundred bytes plus its line index (6 bytes or so per 64 KiB).
MAX_RECORD_BYTES = 64 * 1024 * 1024

#: How often a call follows an artifact whose bytes go missing under it (removed and added again), before giving up.
REPLACED_RETRIES = 3


@dataclass(frozen=True)
class Listing:
    """What :meth:`ArtifactStore.list` found: the sound records, oldest first, and the damaged ones, by id."""

    records: list[ArtifactRecord]
    damaged: list[DamagedRecord]


@dataclass(frozen=True)
class Added:
    """The outcome of :meth:`ArtifactStore.add`: the record, and whether it was new, already there, or repaired."""

    record: ArtifactRecord
    outcome: str  # "added" | "existing" | "repaired"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


def _read_record(path: Path) -> bytes:
    """The bytes of the record file ``path``: a regular file (never a symlink, FIFO or device, which could block or
    lead elsewhere), at most :data:`MAX_RECORD_BYTES`.

    Raises:
        FileNotFoundError: it is gone. OSError: it cannot be opened. ValueError: not a regular file, or too large.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("it is not a regular file")
        data = bytearray()
        while chunk := os.read(fd, _CHUNK):
            data += chunk
            if len(data) > MAX_RECORD_BYTES:
                raise ValueError(f"it is larger than any record Bee writes (over {MAX_RECORD_BYTES} bytes)")
        return bytes(data)
    finally:
        os.close(fd)


class ArtifactStore:
    """The artifacts of one instance. ``verifier`` is shared by everything in a process that reads artifacts."""

    def __init__(self, root: Path, verifier: Verifier | None = None) -> None:
        self.root = root
        self.blobs = root / "blobs"
        self.records = root / "records"
        self.tmp = root / "tmp"
        self.verifier = verifier or Verifier()
        # Parsed records by file name, with the (inode, size, mtime) they were parsed at: a rewrite replaces the file.
        self._cache: dict[str, tuple[tuple[int, int, int], ArtifactRecord | DamagedRecord]] = {}

    # -- reading ---------------------------------------------------------------------------------------------------

    def blob_path(self, record: ArtifactRecord) -> Path:
        return self.blobs / record.sha256

    def _load(self, path: Path, st: os.stat_result) -> ArtifactRecord | DamagedRecord:
        """The record in ``path``, or what is wrong with it. Raises FileNotFoundError when it is gone."""
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        cached = self._cache.get(path.name)
        if cached is not None and cached[0] == key:
            return cached[1]
        loaded: ArtifactRecord | DamagedRecord
        try:
            loaded = parse_record(_read_record(path), expected_id=path.stem)
        except FileNotFoundError:
            raise
        except OSError as exc:
            loaded = DamagedRecord(path.stem, path, f"it cannot be read ({exc.strerror or exc.__class__.__name__})")
        except ValueError as exc:
            loaded = DamagedRecord(path.stem, path, str(exc))
        self._cache[path.name] = (key, loaded)
        return loaded

    def _find(self, artifact: str) -> ArtifactRecord | DamagedRecord | None:
        """The record of the (well-formed) id ``artifact``, what is wrong with it, or None when there is none."""
        path = self.records / f"{artifact}.json"
        try:
            return self._load(path, path.lstat())
        except FileNotFoundError:
            return None

    def not_found(self, artifact: str) -> BeeError:
        """The error for an artifact this instance does not hold (never added, or removed)."""
        return BeeError(
            ErrorCode.NOT_FOUND,
            f"no artifact {artifact} in this instance; `bee artifact list` shows what is retained "
            "(artifacts come only from `bee artifact add`)",
            details={"id": artifact},
        )

    def lookup(self, artifact: str) -> ArtifactRecord | DamagedRecord:
        """The record of ``artifact``, or the report of its damaged record.

        Raises:
            BeeError: ``invalid_argument`` for a malformed id, ``not_found`` for an unknown one.
        """
        found = self._find(check_id(artifact))
        if found is None:
            raise self.not_found(artifact)
        return found

    def get(self, artifact: str) -> ArtifactRecord:
        """The record of ``artifact``.

        Raises:
            BeeError: ``invalid_argument`` for a malformed id, ``not_found`` for an unknown one, ``internal`` (not
                retryable) when its record is damaged.
        """
        found = self.lookup(artifact)
        if isinstance(found, DamagedRecord):
            raise found.error()
        return found

    def list(self) -> Listing:
        """Every artifact, oldest first (ties by id): the order search walks them in; and every damaged record."""
        listing = Listing([], [])
        try:
            entries = list(os.scandir(self.records))
        except FileNotFoundError:
            return listing
        for entry in entries:
            if entry.name.endswith(".json"):  # whatever it is: anything but a record file is reported as damaged
                try:
                    found = self._load(Path(entry.path), entry.stat(follow_symlinks=False))
                except FileNotFoundError:  # removed while we listed
                    continue
                if isinstance(found, DamagedRecord):
                    listing.damaged.append(found)
                else:
                    listing.records.append(found)
        # Forget the parses of records removed since (by another process): the cache holds what exists.
        for name in self._cache.copy().keys() - {entry.name for entry in entries}:
            self._cache.pop(name, None)
        listing.records.sort(key=lambda record: (record.created, record.id))
        listing.damaged.sort(key=lambda damaged: damaged.id)
        return listing

    def recheck(self, record: ArtifactRecord) -> ArtifactRecord | None:
        """What it means that ``record``'s stored bytes were found missing: look at its record again.

        `bee artifact rm` deletes the record and then the bytes, so bytes that vanished under a reader whose record
        is gone now were removed, not lost. Returns None when the artifact was removed; otherwise the record to read
        it by now: a new one when it was removed and added again meanwhile, the same one when its bytes are back
        and intact.

        Raises:
            BeeError: ``hash_mismatch`` when the record is unchanged and its bytes are lost or changed (behind Bee's
                back); ``internal`` when the record is damaged now.
        """
        now = self._find(record.id)
        if now is None:
            return None
        if isinstance(now, DamagedRecord):
            raise now.error()
        if now == record:
            try:
                self.verifier.check(record, self.blob_path(record))
            except BytesMissing:
                raise tampered(record, None) from None
        return now

    def serve(self, record: ArtifactRecord, use: Callable[[ArtifactRecord, Path], T]) -> T:
        """``use(record, path of its stored bytes)``; when the bytes are missing, :meth:`recheck` decides.

        Raises:
            BeeError: ``not_found`` when the artifact was removed while ``use`` ran; ``hash_mismatch`` when its bytes
                were lost or changed; ``conflict`` when its bytes went missing more than :data:`REPLACED_RETRIES`
                times during the call (removed and added again, over and over); whatever ``use`` raises.
        """
        for _ in range(REPLACED_RETRIES + 1):
            try:
                return use(record, self.blob_path(record))
            except BytesMissing:
                current = self.recheck(record)
                if current is None:
                    raise self.not_found(record.id) from None
                record = current
        raise BeeError(
            ErrorCode.CONFLICT,
            f"artifact {record.id} was removed and added again {REPLACED_RETRIES + 1} times while this call read it; "
            "call again once `bee artifact rm`/`add` of it stop",
            details={"id": record.id},
            retryable=True,
        )

    # -- writing ---------------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        for directory in (self.blobs, self.records, self.tmp):
            directory.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _sweep(self) -> None:
        """Remove temp files left by ingestions whose process is gone (killed mid-add)."""
        for entry in self.tmp.iterdir():
            pid = entry.name.split("-", 1)[0]
            if not pid.isdigit() or not _pid_alive(int(pid)):
                with contextlib.suppress(FileNotFoundError):
                    entry.unlink()

    def _temporary(self) -> Path:
        return self.tmp / f"{os.getpid()}-{secrets.token_hex(8)}.part"

    def add(
        self,
        source: BinaryIO,
        *,
        name: str,
        media_type: str | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> Added:
        """Copy ``source`` into the store and record it; the same bytes again return the existing artifact.

        A stored copy that no longer matches its record (changed behind Bee's back) is replaced by these bytes.

        Raises:
            BeeError: ``conflict`` in the (astronomically unlikely) case of two contents sharing an id prefix.
            OSError: reading the source or writing the store failed; nothing is left visible.
        """
        with self._locked():
            self._sweep()
        temporary = self._temporary()
        try:
            facts = self._receive(source, temporary, progress)
            kind = classify(facts, temporary)
            with self._locked():
                return self._commit(temporary, facts, kind, name, media_type)
        finally:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()

    def _receive(self, source: BinaryIO, temporary: Path, progress: Callable[[int], None] | None) -> ContentFacts:
        """Stream ``source`` into ``temporary``, learning its facts; the copy is durable and read-only after."""
        scanner = ContentScanner()
        with open(temporary, "xb") as out:
            while chunk := source.read(_CHUNK):
                out.write(chunk)
                scanner.update(chunk)
                if progress is not None:
                    progress(len(chunk))
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        return scanner.finish()

    def _commit(self, temporary: Path, facts: ContentFacts, kind: Kind, name: str, media_type: str | None) -> Added:
        """Make the received bytes an artifact (under the lock): rename them into place, then write the record."""
        identifier = artifact_id(facts.sha256)
        existing = self._find(identifier)
        if isinstance(existing, DamagedRecord):
            existing = None  # this add writes a sound record over the damaged one
        if existing is not None:
            if existing.sha256 != facts.sha256:
                raise BeeError(
                    ErrorCode.CONFLICT,
                    f"artifact id {identifier} is taken by different content (sha256 prefix collision); this "
                    "content cannot be retained under that id",
                )
            try:
                self.verifier.check(existing, self.blob_path(existing))
                return Added(existing, "existing")
            except BytesMissing:
                pass  # lost: these bytes repair it
            except BeeError as exc:
                if exc.code is not ErrorCode.HASH_MISMATCH:
                    raise
        blob = self.blobs / facts.sha256
        os.replace(temporary, blob)
        _fsync_dir(self.blobs)
        stored = FileStatus.of(os.stat(blob))
        if existing is not None:  # the stored copy had been changed: these bytes repair it
            record, outcome = existing.with_stored(stored), "repaired"
        else:
            record = ArtifactRecord(
                id=identifier,
                name=name,
                media_type=media_type or media_type_for(name, kind),
                sha256=facts.sha256,
                size=facts.size,
                lines=facts.lines,
                kind=kind,
                created=datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                stored=stored,
                line_blocks=tuple(facts.line_blocks) if facts.text else None,
            )
            outcome = "added"
        self._write_record(record)
        return Added(record, outcome)

    def _write_record(self, record: ArtifactRecord) -> None:
        data = json.dumps(record.to_json(), separators=(",", ":")).encode("utf-8") + b"\n"
        write_atomic(self.records / f"{record.id}.json", data, scratch=self.tmp)

    def remove(self, artifact: str) -> ArtifactRecord | None:
        """Forget ``artifact``: its record goes first (it stops existing at once), then its bytes.

        Returns the record, or None when the record was damaged (it is removed all the same; its bytes, whose
        hash it no longer tells, stay behind unreferenced and invisible).

        Raises:
            BeeError: ``invalid_argument`` / ``not_found`` as for :meth:`get`.
        """
        with self._locked():
            path = self.records / f"{check_id(artifact)}.json"
            found = self.lookup(artifact)
            record = None if isinstance(found, DamagedRecord) else found
            path.unlink()
            _fsync_dir(self.records)
            self._cache.pop(path.name, None)
            if record is not None:
                with contextlib.suppress(FileNotFoundError):
                    self.blob_path(record).unlink()
            return record
