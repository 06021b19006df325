"""The rows of a JSON or JSONL artifact, parsed from verified bytes and cached by content hash.

A ``json`` artifact's rows are the elements of its top-level array, or of the array a query's ``from`` names; a
``jsonl`` artifact's rows are its non-blank lines. Numbers parse as Python numbers: integers keep every digit,
other numbers become binary doubles (``1.10`` is returned as ``1.1``, ``1e3`` as ``1000.0``).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from cachetools import LRUCache

from bee_contracts import BeeError, ErrorCode, invalid
from bee_core.artifacts.content import MAX_JSON_BYTES, loads
from bee_core.artifacts.query import MISSING, Row, resolve
from bee_core.artifacts.query import Path as FieldPath
from bee_core.artifacts.records import ArtifactRecord
from bee_core.artifacts.verify import Verifier

#: Rough bound on the source bytes whose parsed rows stay cached.
CACHE_SOURCE_BYTES = 64 * 1024 * 1024


def read_verified(record: ArtifactRecord, path: Path, verifier: Verifier) -> bytes:
    """The artifact's whole content, proven to be the recorded bytes.

    Raises:
        BeeError: ``hash_mismatch`` when it was changed behind Bee's back (or changes while read).
        BytesMissing: the stored file is not there (see :meth:`~bee_core.artifacts.store.ArtifactStore.serve`).
    """

    def read_all(fd: int) -> bytes:
        data = bytearray()
        while chunk := os.pread(fd, 1 << 22, len(data)):
            data += chunk
        return bytes(data)

    return verifier.read(record, path, read_all)


def _unsupported(record: ArtifactRecord) -> BeeError:
    why = (
        f"it is {record.kind}, not JSON or JSONL"
        if record.kind != "text" or record.size <= MAX_JSON_BYTES
        else f"it is over {MAX_JSON_BYTES // (1024 * 1024)} MiB, so Bee retained it as text"
    )
    return BeeError(
        ErrorCode.UNSUPPORTED,
        f"artifact {record.id} ({record.name}) cannot be queried: {why}. Use bee_artifact_search for its lines or "
        "bee_artifact_read for its bytes.",
        details={"id": record.id, "kind": record.kind},
    )


class RowsCache:
    """Parsed rows keyed by (sha256, from-path), bounded by the source bytes they came from; thread-safe.

    A source larger than the whole bound is still cached, alone (it counts as the whole bound).
    """

    def __init__(self, max_source_bytes: int = CACHE_SOURCE_BYTES) -> None:
        self.max_source_bytes = max_source_bytes
        self._entries: LRUCache[tuple[str, FieldPath | None], tuple[int, tuple[Row, ...]]] = LRUCache(
            max_source_bytes, getsizeof=lambda entry: min(entry[0], max_source_bytes)
        )
        self._lock = threading.Lock()  # cachetools caches are not thread-safe: every access holds it

    def get(self, key: tuple[str, FieldPath | None]) -> tuple[Row, ...] | None:
        with self._lock:
            found = self._entries.get(key)
        return None if found is None else found[1]

    def put(self, key: tuple[str, FieldPath | None], size: int, rows: tuple[Row, ...]) -> None:
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = (size, rows)

    def __len__(self) -> int:
        return len(self._entries)


def _json_rows(record: ArtifactRecord, document: Any, source: FieldPath | None) -> tuple[Row, ...]:
    table = document if source is None else resolve(document, source)
    if isinstance(table, list):
        return tuple(Row(i, None, value) for i, value in enumerate(table))
    if source is None:
        if isinstance(document, dict):
            keys = ", ".join(sorted(document)[:20]) or "none"
            raise invalid(
                f"artifact {record.id}'s top level is an object, not an array of rows; name the array with from, "
                f'e.g. {{"from": "items"}} (its keys: {keys})',
                id=record.id,
            )
        raise invalid(f"artifact {record.id}'s top level is a single {type(document).__name__} value, not rows")
    what = "missing" if table is MISSING else f"a {type(table).__name__}, not an array"
    shown = ".".join(str(part) for part in source)
    raise invalid(f"queryJson: from {shown!r} is {what} in artifact {record.id}", id=record.id)


def load_rows(
    record: ArtifactRecord,
    path: Path,
    source: FieldPath | None,
    verifier: Verifier,
    cache: RowsCache,
) -> tuple[Row, ...]:
    """The rows of ``record`` (see the module docstring), from the cache when its content was parsed before.

    Raises:
        BeeError: ``unsupported`` for text and binary artifacts; ``invalid_argument`` for ``from`` on JSONL or a
            ``from`` that does not name an array (or none given for a top-level object).
        BeeError: ``hash_mismatch``.
        BytesMissing: the stored file is not there (see :meth:`~bee_core.artifacts.store.ArtifactStore.serve`).
    """
    if record.kind not in ("json", "jsonl"):
        raise _unsupported(record)
    if record.kind == "jsonl" and source is not None:
        raise invalid(f"queryJson: from applies to json artifacts; every line of {record.id} (jsonl) is a row")
    # The bytes are verified on every call, even when the parse is cached: a cache hit is never stale.
    verifier.check(record, path)
    key = (record.sha256, source)
    found = cache.get(key)
    if found is not None:
        return found
    text = read_verified(record, path, verifier).decode("utf-8")
    if record.kind == "json":
        rows = _json_rows(record, loads(text), source)
    else:
        numbered = ((number, line) for number, line in enumerate(text.split("\n"), start=1) if line.strip())
        rows = tuple(Row(i, number, loads(line)) for i, (number, line) in enumerate(numbered))
    cache.put(key, record.size, rows)
    return rows
