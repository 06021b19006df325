"""sha256 digests as Bee writes them (``sha256:<hex>``), of bytes, of streams and of canonical JSON."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from bee_contracts import canonical_json

PREFIX = "sha256:"


def of_bytes(data: bytes) -> str:
    return PREFIX + hashlib.sha256(data).hexdigest()


def of_chunks(chunks: Iterable[bytes]) -> tuple[str, int]:
    """The digest and size of a stream of bytes (a file read in pieces)."""
    digest = hashlib.sha256()
    size = 0
    for chunk in chunks:
        digest.update(chunk)
        size += len(chunk)
    return PREFIX + digest.hexdigest(), size


def of_json(value: Any) -> str:
    """The digest of ``value`` in canonical JSON (sorted keys, no whitespace)."""
    return of_bytes(canonical_json(value))


def of_pairs(pairs: Iterable[tuple[str, str]]) -> str:
    """A digest over ``(name, digest)`` pairs in sorted order: the digest of a set of named files."""
    digest = hashlib.sha256()
    for name, value in sorted(pairs):
        digest.update(f"{name}\0{value}\n".encode())
    return PREFIX + digest.hexdigest()
