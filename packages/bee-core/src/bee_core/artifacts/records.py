"""What Bee records about one retained artifact, how artifact ids are formed, and what a damaged record is.

An artifact is content-addressed: its id is derived from the sha256 of its bytes, so adding the same bytes again
finds the same artifact. The record also keeps the file status of the stored copy as it was right after
ingestion; :mod:`bee_core.artifacts.verify` compares against it to notice changes made behind Bee's back.

A record file that cannot be read back as a sound record (truncated, not JSON, another format, an id that does not
fit its file name or hash) is a :class:`DamagedRecord`: it is reported, never served, and never stops the rest of
the store from being listed or searched.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, TypeVar

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

T = TypeVar("T")


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
    def from_json(cls, raw: object, *, expected_id: str | None = None) -> ArtifactRecord:
        """Rebuild a record written by :meth:`to_json`, checking every field and that the id fits the hash.

        ``expected_id`` is the id the record's file name promises.

        Raises:
            ValueError: the record is damaged; the message says what is wrong, in words a user can act on.
        """
        if not isinstance(raw, dict):
            raise ValueError(f"it holds {_described(raw)}, not a record object")
        version = _field(raw, "format", int)
        if version != RECORD_FORMAT:
            raise ValueError(
                f"its format is {version}, but this Bee reads format {RECORD_FORMAT} records only (was it written by "
                "another Bee version?)"
            )
        identifier = _field(raw, "id", str)
        if not ID_PATTERN.match(identifier):
            raise ValueError(f"its id {identifier!r} is not an artifact id")
        if expected_id is not None and identifier != expected_id:
            raise ValueError(f"it holds the record of {identifier}, not of {expected_id} as its file name says")
        sha = _field(raw, "sourceSha256", str).removeprefix("sha256:")
        if not _SHA256.match(sha):
            raise ValueError(f"its sourceSha256 {raw['sourceSha256']!r} is not sha256: and 64 hex digits")
        if artifact_id(sha) != identifier:
            raise ValueError(f"its id {identifier} does not belong to its sourceSha256 sha256:{sha}")
        kind = _field(raw, "kind", str)
        if kind not in KINDS:
            raise ValueError(f"its kind {kind!r} is not one of {', '.join(KINDS)}")
        stored = _field(raw, "stored", dict)
        index = raw.get("lineIndex")
        blocks: tuple[int, ...] | None = None
        if index is not None:
            if not isinstance(index, dict) or not isinstance(index.get("newlines"), list):
                raise ValueError("its lineIndex is not an object with a newlines array")
            if not all(_is_count(count) for count in index["newlines"]):
                raise ValueError("its lineIndex holds something other than newline counts")
            # An index taken with another block size is ignored (and rebuilt when needed), never misread.
            blocks = tuple(index["newlines"]) if index.get("blockBytes") == BLOCK_BYTES else None
        return cls(
            id=identifier,
            name=_field(raw, "name", str),
            media_type=_field(raw, "mediaType", str),
            sha256=sha,
            size=_count(raw, "sourceBytes"),
            lines=_count(raw, "lines"),
            kind=kind,
            created=_field(raw, "created", str),
            stored=FileStatus(*(_count(stored, key, "stored.") for key in _STATUS_KEYS)),
            line_blocks=blocks,
        )

    def with_stored(self, stored: FileStatus) -> ArtifactRecord:
        return replace(self, stored=stored)


def parse_record(data: bytes, expected_id: str | None = None) -> ArtifactRecord:
    """The record held by ``data``, the bytes of a record file named for ``expected_id``.

    Raises:
        ValueError: the record is damaged; the message says what is wrong (see :class:`DamagedRecord`).
    """
    if not data.strip():
        raise ValueError("it is empty")
    try:
        raw = json.loads(data)
    except json.JSONDecodeError as exc:
        # Cut short (a full disk, a copy interrupted): the parser runs out of text, or out of a string.
        if exc.pos >= len(exc.doc.rstrip()) or exc.msg.startswith("Unterminated string"):
            raise ValueError(f"it is truncated: its JSON stops after {len(data)} bytes ({exc.msg})") from None
        raise ValueError(f"it is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except UnicodeDecodeError:
        raise ValueError("it is not UTF-8 text") from None
    except RecursionError:
        raise ValueError("it is not a record: its JSON nests too deeply") from None
    return ArtifactRecord.from_json(raw, expected_id=expected_id)


@dataclass(frozen=True)
class DamagedRecord:
    """A record file that does not hold a sound record.

    ``bee artifact list`` and ``show`` report it with what is wrong and how to repair it; a search over all
    artifacts skips it (and says how many it skipped); naming it is an error (:meth:`error`).
    """

    id: str  # the file name without ".json": an artifact id, unless a stray file was put there
    file: Path
    problem: str  # what is wrong, as a clause: "it is truncated: …"

    @property
    def repair(self) -> str:
        """How to make the store whole again."""
        if ID_PATTERN.match(self.id):
            return (
                f"run `bee artifact rm {self.id}`, then `bee artifact add` the original file again (adding it again "
                "alone also writes a sound record)"
            )
        return f"remove {self.file}: its name is not an artifact id, so no artifact record was ever written there"

    def public(self) -> dict[str, str]:
        """The report `bee artifact list --json` and `show` print."""
        return {"id": self.id, "recordFile": str(self.file), "problem": self.problem, "repair": self.repair}

    def error(self) -> BeeError:
        """The error for a call that names this artifact: ``internal``, not retryable (see docs/hosts/core.md)."""
        return BeeError(
            ErrorCode.INTERNAL,
            f"artifact {self.id} cannot be served: its record {self.file} is damaged: {self.problem}. Calling again "
            f"will not help; to repair it, {self.repair}.",
            details={"id": self.id, "recordFile": str(self.file), "problem": self.problem},
            retryable=False,
        )


_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_STATUS_KEYS = ("device", "inode", "size", "mtimeNs", "ctimeNs")
_TYPE_NAMES: dict[type, str] = {
    dict: "an object",
    list: "an array",
    str: "a string",
    int: "an integer",
    float: "a number",
}


def _described(value: object) -> str:
    """A JSON value's type as a noun phrase: ``a string``, ``an integer``, ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return next((name for kind, name in _TYPE_NAMES.items() if isinstance(value, kind)), "something else")


def _field(raw: dict[str, Any], key: str, kind: type[T], prefix: str = "") -> T:
    """``raw[key]`` when present and of JSON type ``kind`` (a boolean is not an integer)."""
    if key not in raw:
        raise ValueError(f"its field {prefix}{key} is missing")
    value = raw[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"its field {prefix}{key} is {_described(value)}, not {_TYPE_NAMES[kind]}")
    return value


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _count(raw: dict[str, Any], key: str, prefix: str = "") -> int:
    """``raw[key]`` when it is an integer of at least 0."""
    value = _field(raw, key, int, prefix)
    if value < 0:
        raise ValueError(f"its field {prefix}{key} is negative ({value})")
    return value
