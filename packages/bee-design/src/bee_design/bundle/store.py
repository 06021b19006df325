"""The imported bundles of a root: manifests under ``.bee/design/bundles/<id>/``, file bytes by sha256.

Bundle files are stored once each under ``.bee/design/blobs/`` by their sha256, read-only, so a new version of a
bundle shares what did not change. An import writes every file first and the manifest last (atomically), so a
bundle is either the old version or the new one, never a mix. Every read is checked against the manifest.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal

from bee_contracts import BeeError, ErrorCode, invalid
from bee_design import digests, layout
from bee_design.bundle.building import build_manifest
from bee_design.bundle.manifest import FileEntry, Manifest, parse_manifest
from bee_design.bundle.reading import RawBundle
from bee_design.locking import writer
from bee_hostkit.files import write_atomic

BUNDLE_ID: Final = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
_MAX_MANIFEST_BYTES: Final = 64 * 1024 * 1024


@dataclass(frozen=True)
class ImportOutcome:
    manifest: Manifest
    status: Literal["imported", "replaced", "unchanged"]


def default_id(name: str) -> str:
    """A bundle id from a folder or zip name: ``Shop Design v2.zip`` -> ``shop-design-v2``."""
    stem = name[:-4] if name.lower().endswith(".zip") else name
    return re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")[:63].strip("-")


def check_id(bundle: str) -> str:
    """Return ``bundle`` when it is a valid bundle id.

    Raises:
        BeeError: ``invalid_argument`` saying what an id looks like.
    """
    if not BUNDLE_ID.match(bundle):
        raise invalid(
            f"bundle id {bundle!r} is not valid; use 1-63 lowercase letters, digits and '-', starting with a letter "
            "or digit (pass --id)",
            bundle=bundle,
        )
    return bundle


class BundleStore:
    """The bundles imported under one root."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def ids(self) -> list[str]:
        """Every imported bundle's id, sorted."""
        folder = layout.state(self.root, layout.BUNDLES_DIR, must_exist=False)
        if not folder.is_dir():
            return []
        return sorted(
            entry.name
            for entry in folder.iterdir()
            if BUNDLE_ID.match(entry.name) and (entry / "manifest.json").is_file()
        )

    def load(self, bundle: str) -> Manifest:
        """The manifest of ``bundle``, checked against its schema and its own digest.

        Raises:
            BeeError: ``not_found`` for an unknown bundle (naming the imported ones); ``hash_mismatch`` for a
                manifest changed after import.
        """
        path = layout.state(self.root, layout.manifest_path(check_id(bundle)), must_exist=False)
        if not path.is_file():
            known = ", ".join(self.ids()) or "none; import one with `bee design import BUNDLE`"
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"no bundle {bundle!r} is imported here; imported bundles: {known}",
                details={"bundle": bundle},
            )
        with path.open("rb") as stream:
            data = stream.read(_MAX_MANIFEST_BYTES + 1)
        if len(data) > _MAX_MANIFEST_BYTES:
            raise BeeError(ErrorCode.HASH_MISMATCH, f"the manifest of bundle {bundle!r} is implausibly large")
        return parse_manifest(bundle, data)

    def bundle_path(self, bundle: str) -> str:
        """Where ``bundle`` is stored, relative to the root."""
        return f"{layout.BUNDLES_DIR}/{bundle}"

    def problem(self, entry: FileEntry) -> tuple[ErrorCode, str] | None:
        """What is wrong with the stored copy of ``entry``, or None when it is intact."""
        try:
            path = layout.state(self.root, layout.blob_path(entry.sha256), must_exist=False)
        except BeeError as exc:
            return exc.code, exc.message
        if not path.is_file():
            return ErrorCode.NOT_FOUND, f"{entry.path} is missing from the bundle store"
        sha, size = digests.of_file(path)
        if size != entry.size or sha != entry.sha256:
            return ErrorCode.HASH_MISMATCH, f"{entry.path} changed after import ({size} bytes, {sha})"
        return None

    def read(self, manifest: Manifest, path: str) -> bytes:
        """The bytes of bundle file ``path``, verified against the manifest.

        Raises:
            BeeError: ``not_found`` when the stored copy is gone, ``hash_mismatch`` when it changed.
        """
        entry = manifest.file_index[path]
        location = layout.state(self.root, layout.blob_path(entry.sha256), must_exist=False)
        advice = f"import the bundle again (bee design import BUNDLE --id {manifest.bundle} --replace)"
        try:
            with location.open("rb") as stream:
                data = stream.read(entry.size + 1)
        except FileNotFoundError:
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"{manifest.bundle}/{path} is missing from the bundle store; {advice}",
                details={"bundle": manifest.bundle, "file": path},
            ) from None
        if len(data) != entry.size or digests.of_bytes(data) != entry.sha256:
            raise BeeError(
                ErrorCode.HASH_MISMATCH,
                f"{manifest.bundle}/{path} no longer matches its manifest (sha256 recorded at import); {advice}",
                details={"bundle": manifest.bundle, "file": path, "expected": entry.sha256},
            )
        return data

    def add(self, raw: RawBundle, bundle: str, *, replace: bool = False) -> ImportOutcome:
        """Import ``raw`` as ``bundle``.

        The same content again changes nothing (``unchanged``; damaged stored copies are repaired). Different
        content under an existing id needs ``replace``.

        Raises:
            BeeError: ``invalid_argument`` for a bad id, declaration or a dependency cycle; ``conflict`` when the id
                holds different content and ``replace`` is not set.
        """
        check_id(bundle)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        manifest = build_manifest(raw, bundle, now)
        with writer(self.root):
            previous = self._previous(bundle)
            status: Literal["imported", "replaced", "unchanged"] = "imported"
            if previous is not None:
                if previous.digest == manifest.digest:
                    status = "unchanged"
                elif not replace:
                    raise BeeError(
                        ErrorCode.CONFLICT,
                        f"bundle {bundle!r} is already imported with different content ({previous.digest}); pass "
                        "--replace to import this version (mapped elements whose design changed become stale), "
                        "or choose another --id",
                        details={"bundle": bundle, "digest": previous.digest},
                    )
                else:
                    status = "replaced"
            for file in raw.files:
                self._store_blob(file.data, digests.of_bytes(file.data))
            if status == "unchanged" and previous is not None:
                return ImportOutcome(previous, status)
            target = layout.state(self.root, layout.manifest_path(bundle), must_exist=False)
            write_atomic(target, manifest.to_bytes())
            os.chmod(target, 0o444)
            if status == "replaced":
                self._sweep()
        return ImportOutcome(manifest, status)

    def _previous(self, bundle: str) -> Manifest | None:
        try:
            return self.load(bundle)
        except BeeError as exc:
            if exc.code == ErrorCode.NOT_FOUND:
                return None
            if exc.code == ErrorCode.HASH_MISMATCH:
                return None  # a damaged manifest is replaced by a fresh import
            raise

    def _store_blob(self, data: bytes, sha: str) -> None:
        path = layout.state(self.root, layout.blob_path(sha), must_exist=False)
        if path.is_file() and digests.of_file(path)[0] == sha:
            return
        write_atomic(path, data)
        os.chmod(path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)

    def _sweep(self) -> None:
        """Delete stored files no manifest names any more (only when every manifest could be read)."""
        keep: set[str] = set()
        for bundle in self.ids():
            try:
                keep.update(entry.sha256 for entry in self.load(bundle).files)
            except BeeError:
                return
        blobs = layout.state(self.root, layout.BLOBS_DIR, must_exist=False)
        for path in blobs.glob("*/*"):
            if digests.PREFIX + path.name not in keep:
                path.unlink(missing_ok=True)
