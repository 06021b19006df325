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
