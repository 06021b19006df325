"""What Bee records about one retained artifact, and how artifact ids are formed.

An artifact is content-addressed: its id is derived from the sha256 of its bytes, so adding the same bytes again
finds the same artifact. The record also keeps the file status of the stored copy as it was right after
ingestion; :mod:`bee_core.artifacts.verify` compares against it to notice changes made behind Bee's back.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Any, Literal

from bee_contracts import BeeError, ErrorCode
from bee_core.artifacts.lines import BLOCK_BYTES

#: Version of the on-disk record format.
RECORD_FORMAT = 1

Kind = Literal["text", "json", "jsonl", "binary"]
KINDS: tuple[Kind, ...] = ("text", "json", "jsonl", "binary")

#: Kinds whose bytes are UTF-8 text without NUL bytes, so line search applies.
TEXT_KINDS = frozenset({"text", "json", "jsonl"})

ID_PREFIX = "art-"
ID_HEX_DIGITS = 16
ID_PATTERN = re.compile(rf"^{ID_PREFIX}[0-9a-f]{{{ID_HEX_DIGITS}}}$")


def artifact_id(sha256_hex: str) -> str:
    """The id of the artifact whose bytes hash to ``sha256_hex``: ``art-`` and the first 16 hex digits."""
    return ID_PREFIX + sha256_hex[:ID_HEX_DIGITS]


def check_id(value: str) -> str:
    """Return ``value`` when it is shaped like an artifact id.

    Raises:
        BeeError: ``invalid_argument`` naming the expected shape (checked before any file is touched).
    """
    if not ID_PATTERN.match(value):
        raise BeeError(
            ErrorCode.INVALID_ARGUMENT,
            f"{value!r} is not an artifact id; ids look like art-0123456789abcdef (see `bee artifact list`)",
            details={"id": value},
        )
    return value


@dataclass(frozen=True)
class FileStatus:
    """The parts of a file's status that any write through the file system changes (ctime cannot be set back)."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileStatus:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def to_json(self) -> dict[str, int]:
        return {
            "device": self.device,
            "inode": self.inode,
            "size": self.size,
            "mtimeNs": self.mtime_ns,
            "ctimeNs": self.ctime_ns,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> FileStatus:
        return cls(raw["device"], raw["inode"], raw["size"], raw["mtimeNs"], raw["ctimeNs"])


@dataclass(frozen=True)
class ArtifactRecord:
    """One retained artifact: what it is, what its bytes hash to, and the stored copy's status at ingestion."""

    id: str
    name: str
    media_type: str
    sha256: str  # hex, without the "sha256:" prefix
    size: int
    lines: int
    kind: Kind
    created: str  # ISO 8601, UTC
    stored: FileStatus
    line_blocks: tuple[int, ...] | None = None  # text kinds: newlines per block (bee_core.artifacts.lines)

    @property
    def is_text(self) -> bool:
        return self.kind in TEXT_KINDS

    @property
    def source_sha256(self) -> str:
        """The hash as the tools report it: ``sha256:<hex>``."""
        return f"sha256:{self.sha256}"

    def public(self) -> dict[str, Any]:
        """The metadata users and tools see (the stored file status is Bee's own business)."""
        return {
            "id": self.id,
            "name": self.name,
            "mediaType": self.media_type,
            "sourceSha256": self.source_sha256,
            "sourceBytes": self.size,
            "lines": self.lines,
            "kind": self.kind,
            "created": self.created,
        }

    def to_json(self) -> dict[str, Any]:
        raw = {"format": RECORD_FORMAT, **self.public(), "stored": self.stored.to_json()}
        if self.line_blocks is not None:
            raw["lineIndex"] = {"blockBytes": BLOCK_BYTES, "newlines": list(self.line_blocks)}
        return raw

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> ArtifactRecord:
        """Rebuild a record written by :meth:`to_json`.

        Raises:
            KeyError, ValueError, TypeError: the record is malformed (the store reports it as damaged).
        """
        if raw.get("format") != RECORD_FORMAT:
            raise ValueError(f"unknown record format {raw.get('format')!r}")
        sha = str(raw["sourceSha256"]).removeprefix("sha256:")
        kind = raw["kind"]
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}")
        index = raw.get("lineIndex")
        # An index taken with another block size is ignored (and rebuilt when needed), never misread.
        blocks = tuple(index["newlines"]) if index and index.get("blockBytes") == BLOCK_BYTES else None
        return cls(
            id=check_id(str(raw["id"])),
            name=str(raw["name"]),
            media_type=str(raw["mediaType"]),
            sha256=sha,
            size=int(raw["sourceBytes"]),
            lines=int(raw["lines"]),
            kind=kind,
            created=str(raw["created"]),
            stored=FileStatus.from_json(raw["stored"]),
            line_blocks=blocks,
        )

    def with_stored(self, stored: FileStatus) -> ArtifactRecord:
        return replace(self, stored=stored)
