"""The manifest of one imported bundle: files with sha256 and size, references, elements with digests.

A manifest is written once per import and never edited: it carries its own digest (``manifestDigest``, over the
canonical JSON of everything else), so a manifest changed after import is detected before it is used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from bee_contracts import BeeError, ErrorCode
from bee_design import digests
from bee_design.schemas import validator

Kind = Literal["screen", "component", "style", "asset"]
KINDS: tuple[Kind, ...] = ("screen", "component", "style", "asset")


@dataclass(frozen=True)
class FileEntry:
    path: str
    sha256: str
    size: int
    media_type: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "size": self.size, "mediaType": self.media_type}


@dataclass(frozen=True)
class Dependency:
    """A reference from one bundle file to another (or to a URL): discovered in the file, or declared."""

    source: str
    ref: str
    via: str
    status: str  # resolved | missing | external
    target: str | None

    def to_json(self) -> dict[str, Any]:
        return {"from": self.source, "ref": self.ref, "via": self.via, "status": self.status, "to": self.target}


@dataclass(frozen=True)
class Element:
    """A screen, component, style or asset: its entry file, the files it owns, the elements it uses."""

    id: str
    kind: Kind
    entry: str
    declared: bool
    files: tuple[str, ...]
    depends_on: tuple[str, ...]
    digest: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "entry": self.entry,
            "declared": self.declared,
            "files": list(self.files),
            "dependsOn": list(self.depends_on),
            "digest": self.digest,
        }


@dataclass(frozen=True)
class Manifest:
    bundle: str
    imported_at: str
    source_kind: str
    source_name: str
    digest: str
    files: tuple[FileEntry, ...]
    references: tuple[Dependency, ...]
    elements: tuple[Element, ...]

    @cached_property
    def file_index(self) -> dict[str, FileEntry]:
        return {entry.path: entry for entry in self.files}

    @cached_property
    def element_index(self) -> dict[str, Element]:
        return {element.id: element for element in self.elements}

    @property
    def total_bytes(self) -> int:
        return sum(entry.size for entry in self.files)

    def qualified(self, element: str) -> str:
        """The element's id as tools name it: ``bundle:element``."""
        return f"{self.bundle}:{element}"

    def body(self) -> dict[str, Any]:
        """The manifest as JSON, without its own digest."""
        return {
            "schemaVersion": 1,
            "bundle": self.bundle,
            "importedAt": self.imported_at,
            "source": {"kind": self.source_kind, "name": self.source_name},
            "digest": self.digest,
            "files": [entry.to_json() for entry in self.files],
            "references": [dep.to_json() for dep in self.references],
            "elements": [element.to_json() for element in self.elements],
        }

    def to_bytes(self) -> bytes:
        body = self.body()
        body["manifestDigest"] = digests.of_json(body)
        return (json.dumps(body, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def _damaged(bundle: str, why: str) -> BeeError:
    return BeeError(
        ErrorCode.HASH_MISMATCH,
        f"the manifest of bundle {bundle!r} {why}; it was changed after import. Import the bundle again "
        f"(bee design import BUNDLE --id {bundle} --replace)",
        details={"bundle": bundle},
    )


def parse_manifest(bundle: str, data: bytes) -> Manifest:
    """Parse a stored manifest and check its schema and its own digest.

    Raises:
        BeeError: ``hash_mismatch`` when the manifest is not valid JSON, breaks the schema, names another bundle
            or no longer matches its digest.
    """
    try:
        raw = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise _damaged(bundle, "is not valid JSON") from None
    try:
        validator("manifest", f"manifest of {bundle}").check(raw)
    except BeeError as exc:
        raise _damaged(bundle, f"breaks the manifest schema ({exc.message})") from None
    recorded = raw.pop("manifestDigest")
    if digests.of_json(raw) != recorded:
        raise _damaged(bundle, "no longer matches its own digest")
    if raw["bundle"] != bundle:
        raise _damaged(bundle, f"names bundle {raw['bundle']!r}")
    return Manifest(
        bundle=raw["bundle"],
        imported_at=raw["importedAt"],
        source_kind=raw["source"]["kind"],
        source_name=raw["source"]["name"],
        digest=raw["digest"],
        files=tuple(FileEntry(f["path"], f["sha256"], f["size"], f["mediaType"]) for f in raw["files"]),
        references=tuple(Dependency(d["from"], d["ref"], d["via"], d["status"], d["to"]) for d in raw["references"]),
        elements=tuple(
            Element(
                e["id"], e["kind"], e["entry"], e["declared"], tuple(e["files"]), tuple(e["dependsOn"]), e["digest"]
            )
            for e in raw["elements"]
        ),
    )
