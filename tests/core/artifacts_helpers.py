"""Helpers shared by the artifact tests: an initialised checkout and artifacts added through the real store."""

from __future__ import annotations

import io
import os
from pathlib import Path

from bee_core.artifacts.records import ArtifactRecord
from bee_core.context import CoreContext


def initialised(tmp_path: Path) -> CoreContext:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    ctx = CoreContext.open(checkout)
    ctx.instance.init()
    return ctx


def add(ctx: CoreContext, name: str, data: bytes) -> ArtifactRecord:
    """Retain ``data`` exactly as `bee artifact add` does (same store, same code path)."""
    store = ctx.artifacts.store(ctx.instance)
    return store.add(io.BytesIO(data), name=name).record


def blob(ctx: CoreContext, record: ArtifactRecord) -> Path:
    return ctx.artifacts.store(ctx.instance).blob_path(record)


def tamper(path: Path, data: bytes) -> None:
    """Change stored bytes behind Bee's back, the way an editor or a stray script would."""
    os.chmod(path, 0o644)
    path.write_bytes(data)


def damage(ctx: CoreContext, record: ArtifactRecord) -> Path:
    """Truncate the record of ``record`` the way a full disk or an interrupted copy would; returns its file."""
    path = ctx.artifacts.store(ctx.instance).records / f"{record.id}.json"
    path.write_bytes(path.read_bytes()[:40])
    return path


def rm_elsewhere(ctx: CoreContext, record: ArtifactRecord) -> None:
    """`bee artifact rm` from another process: its own store object, the real removal (record, then bytes)."""
    from bee_core.artifacts.store import ArtifactStore

    ArtifactStore(ctx.artifacts.store(ctx.instance).root).remove(record.id)


def add_elsewhere(ctx: CoreContext, name: str, data: bytes) -> ArtifactRecord:
    """`bee artifact add` from another process."""
    from bee_core.artifacts.store import ArtifactStore

    return ArtifactStore(ctx.artifacts.store(ctx.instance).root).add(io.BytesIO(data), name=name).record
