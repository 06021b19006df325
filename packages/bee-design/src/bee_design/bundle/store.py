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
from typing import Final, Literal

from bee_contracts import BeeError, ErrorCode, invalid
from bee_design import digests, layout
from bee_design.bundle.building import build_manifest
from bee_design.bundle.manifest import FileEntry, Manifest, parse_manifest
from bee_design.bundle.reading import RawBundle
from bee_design.layout import DesignFiles
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

    def __init__(self, files: DesignFiles) -> None:
        self.files = files

    def ids(self) -> list[str]:
        """Every imported bundle's id, sorted."""
        return [
            entry.name
            for entry in self.files.state_entries(layout.BUNDLES_DIR)
            if BUNDLE_ID.match(entry.name) and (entry / "manifest.json").is_file()
        ]

    def load(self, bundle: str) -> Manifest:
        """The manifest of ``bundle``, checked against its schema and its own digest.

        Raises:
            BeeError: ``not_found`` for an unknown bundle (naming the imported ones); ``hash_mismatch`` for a
                manifest changed after import; ``outside_root`` when Bee's state is a symlink.
        """
        try:
            with self.files.open_state(layout.manifest_path(check_id(bundle))) as file:
                if file.size > _MAX_MANIFEST_BYTES:
                    raise BeeError(ErrorCode.HASH_MISMATCH, f"the manifest of bundle {bundle!r} is implausibly large")
                data = file.read()
        except BeeError as exc:
            if exc.code != ErrorCode.NOT_FOUND:
                raise
            known = ", ".join(self.ids()) or "none; import one with `bee design import BUNDLE`"
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"no bundle {bundle!r} is imported here; imported bundles: {known}",
                details={"bundle": bundle},
            ) from None
        return parse_manifest(bundle, data)

    def bundle_path(self, bundle: str) -> str:
        """Where ``bundle`` is stored, relative to the root."""
        return f"{layout.STATE_DIR}/{layout.BUNDLES_DIR}/{bundle}"

    def problem(self, entry: FileEntry) -> tuple[ErrorCode, str] | None:
        """What is wrong with the stored copy of ``entry``, or None when it is intact."""
        try:
            with self.files.open_state(layout.blob_path(entry.sha256)) as file:
                sha, size = digests.of_chunks(file.chunks())
        except BeeError as exc:
            if exc.code == ErrorCode.NOT_FOUND:
                return ErrorCode.NOT_FOUND, f"{entry.path} is missing from the bundle store"
            return exc.code, exc.message
        if size != entry.size or sha != entry.sha256:
            return ErrorCode.HASH_MISMATCH, f"{entry.path} changed after import ({size} bytes, {sha})"
        return None

    def read(self, manifest: Manifest, path: str) -> bytes:
        """The bytes of bundle file ``path``, verified against the manifest.

        Raises:
            BeeError: ``not_found`` when the stored copy is gone, ``hash_mismatch`` when it changed.
        """
        entry = manifest.file_index[path]
        advice = f"import the bundle again (bee design import BUNDLE --id {manifest.bundle} --replace)"
        try:
            with self.files.open_state(layout.blob_path(entry.sha256)) as file:
                data = file.read()
        except BeeError as exc:
            if exc.code != ErrorCode.NOT_FOUND:
                raise
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
                holds different content and ``replace`` is not set; ``outside_root`` when Bee's state is a symlink.
        """
        check_id(bundle)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        manifest = build_manifest(raw, bundle, now)
        with writer(self.files):
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
            state = self.files.state_dir(create=True)
            for file in raw.files:
                self._store_blob(file.data, digests.of_bytes(file.data))
            if status == "unchanged" and previous is not None:
                return ImportOutcome(previous, status)
            target = state / layout.manifest_path(bundle)
            write_atomic(target, manifest.to_bytes())
            os.chmod(target, 0o444)
            if status == "replaced":
                self._sweep()
        return ImportOutcome(manifest, status)

    def _previous(self, bundle: str) -> Manifest | None:
        try:
            return self.load(bundle)
        except BeeError as exc:
            if exc.code in (ErrorCode.NOT_FOUND, ErrorCode.HASH_MISMATCH):
                return None  # nothing there, or a damaged manifest that a fresh import replaces
            raise

    def _store_blob(self, data: bytes, sha: str) -> None:
        relative = layout.blob_path(sha)
        if self.problem(FileEntry(relative, sha, len(data), "")) is None:
            return
        path = self.files.state_dir() / relative
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
        for prefix in self.files.state_entries(layout.BLOBS_DIR):
            for path in sorted(prefix.iterdir()) if prefix.is_dir() and not prefix.is_symlink() else []:
                if digests.PREFIX + path.name not in keep:
                    path.unlink(missing_ok=True)
