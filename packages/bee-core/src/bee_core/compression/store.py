"""Retained originals: ``<instance>/compression/originals/<id>.txt`` plus ``<id>.json`` metadata.

Content-addressed: the id is ``cmp_`` and the first 24 hex digits of the original's sha256, so retaining the
same text twice is one entry. Every read re-hashes the bytes and compares them with the recorded sha256.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bee_contracts import BeeError, ErrorCode
from bee_core.instance import Instance
from bee_hostkit.files import write_atomic

ORIGINALS = ("compression", "originals")
ID_PREFIX = "cmp_"


@dataclass(frozen=True)
class Retained:
    """One retained original's metadata."""

    id: str
    sha256: str  # sha256:<hex>
    bytes: int
    created_at: str
    method: str


def original_id(sha256_hex: str) -> str:
    return ID_PREFIX + sha256_hex[:24]


class RetentionStore:
    """The originals of one instance."""

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        self.root = instance.path(*ORIGINALS)

    def _paths(self, ident: str) -> tuple[Path, Path]:
        return self.root / f"{ident}.txt", self.root / f"{ident}.json"

    def retain(self, text: str, method: str) -> Retained:
        """Keep ``text`` (exactly, as UTF-8) and return its record; an already retained text keeps its record."""
        data = text.encode("utf-8", "surrogatepass")
        digest = hashlib.sha256(data).hexdigest()
        ident = original_id(digest)
        text_path, meta_path = self._paths(ident)
        if meta_path.is_file() and text_path.is_file():
            try:
                return self.get(ident)[1]
            except BeeError:
                pass  # a damaged earlier copy: this call rewrites it whole
        record = Retained(ident, "sha256:" + digest, len(data), datetime.now(UTC).isoformat(timespec="seconds"), method)
        write_atomic(text_path, data)
        meta = {
            "id": record.id,
            "sha256": record.sha256,
            "bytes": record.bytes,
            "createdAt": record.created_at,
            "method": record.method,
        }
        write_atomic(meta_path, (json.dumps(meta, indent=2) + "\n").encode("utf-8"))
        return record

    def get(self, ident: str) -> tuple[str, Retained]:
        """The exact original and its record, verified.

        Raises:
            BeeError: ``not_found`` when no original with this id is retained here (or a part of it is
                missing); ``hash_mismatch`` when its bytes or metadata no longer match the recorded sha256.
        """
        text_path, meta_path = self._paths(ident)
        if not meta_path.is_file() or not text_path.is_file():
            missing = "metadata" if text_path.is_file() else "original"
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"no retained original {ident} in the instance at {self.instance.root} (its {missing} is missing); "
                "ids are only valid in the instance whose bee_context_compress returned them",
            )
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            record = Retained(
                str(meta["id"]), str(meta["sha256"]), int(meta["bytes"]), str(meta["createdAt"]), str(meta["method"])
            )
        except (ValueError, KeyError, TypeError):
            raise BeeError(
                ErrorCode.HASH_MISMATCH, f"the metadata of retained original {ident} is damaged; nothing is returned"
            ) from None
        data = text_path.read_bytes()
        actual = "sha256:" + hashlib.sha256(data).hexdigest()
        if actual != record.sha256 or record.id != ident or original_id(actual[7:]) != ident:
            raise BeeError(
                ErrorCode.HASH_MISMATCH,
                f"retained original {ident} no longer matches its recorded sha256 (recorded {record.sha256}, "
                f"found {actual}); it was altered after retention, and nothing is returned",
                details={"recordedSha256": record.sha256, "actualSha256": actual},
            )
        return data.decode("utf-8", "surrogatepass"), record

    def usage(self) -> tuple[int, int]:
        """How many originals are retained and their total bytes."""
        if not self.root.is_dir():
            return 0, 0
        files = list(self.root.glob(f"{ID_PREFIX}*.txt"))
        return len(files), sum(f.stat().st_size for f in files)
