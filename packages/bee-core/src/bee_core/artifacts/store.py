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
from typing import BinaryIO

from bee_contracts import BeeError, ErrorCode
from bee_core.artifacts.content import ContentFacts, ContentScanner, classify, media_type_for
from bee_core.artifacts.records import ArtifactRecord, FileStatus, Kind, artifact_id, check_id
from bee_core.artifacts.verify import Verifier
from bee_hostkit.files import write_atomic

_CHUNK = 1024 * 1024


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


class ArtifactStore:
    """The artifacts of one instance. ``verifier`` is shared by everything in a process that reads artifacts."""

    def __init__(self, root: Path, verifier: Verifier | None = None) -> None:
        self.root = root
        self.blobs = root / "blobs"
        self.records = root / "records"
        self.tmp = root / "tmp"
        self.verifier = verifier or Verifier()
        self._cache: dict[str, tuple[tuple[int, int, int], ArtifactRecord]] = {}

    # -- reading ---------------------------------------------------------------------------------------------------

    def blob_path(self, record: ArtifactRecord) -> Path:
        return self.blobs / record.sha256

    def _load(self, path: Path, st: os.stat_result) -> ArtifactRecord:
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        cached = self._cache.get(path.name)
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            record = ArtifactRecord.from_json(json.loads(path.read_bytes()))
        except (OSError, ValueError, KeyError, TypeError, BeeError) as exc:
            raise BeeError(
                ErrorCode.INTERNAL,
                f"the artifact record {path.name} is damaged ({exc.__class__.__name__}); remove it with "
                f"`bee artifact rm {path.stem}` and add the file again",
                details={"record": path.name},
            ) from None
        self._cache[path.name] = (key, record)
        return record

    def get(self, artifact: str) -> ArtifactRecord:
        """The record of ``artifact``.

        Raises:
            BeeError: ``invalid_argument`` for a malformed id, ``not_found`` for an unknown one.
        """
        path = self.records / f"{check_id(artifact)}.json"
        try:
            st = path.stat()
        except FileNotFoundError:
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"no artifact {artifact} in this instance; `bee artifact list` shows what is retained "
                "(artifacts come only from `bee artifact add`)",
                details={"id": artifact},
            ) from None
        return self._load(path, st)

    def list(self) -> list[ArtifactRecord]:
        """Every artifact, oldest first (ties by id): the order search walks them in."""
        found: list[ArtifactRecord] = []
        try:
            entries = list(os.scandir(self.records))
        except FileNotFoundError:
            return []
        for entry in entries:
            if entry.name.endswith(".json") and entry.is_file():
                try:
                    found.append(self._load(Path(entry.path), entry.stat()))
                except FileNotFoundError:  # removed while we listed
                    continue
        return sorted(found, key=lambda record: (record.created, record.id))

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
        existing = None
        try:
            existing = self.get(identifier)
        except BeeError as exc:
            if exc.code is not ErrorCode.NOT_FOUND and exc.code is not ErrorCode.INTERNAL:
                raise  # not found: a new artifact; damaged: this add writes a sound record over it
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
            try:
                record: ArtifactRecord | None = self.get(artifact)
            except BeeError as exc:
                if exc.code is not ErrorCode.INTERNAL:
                    raise
                record = None
            path.unlink()
            _fsync_dir(self.records)
            self._cache.pop(path.name, None)
            if record is not None:
                with contextlib.suppress(FileNotFoundError):
                    self.blob_path(record).unlink()
            return record
