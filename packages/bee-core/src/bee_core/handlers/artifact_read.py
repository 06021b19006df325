"""bee_artifact_read: one base64 page of an artifact's exact, verified bytes."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

from bee_core.artifacts.pages import read_page
from bee_core.context import CoreContext
from bee_hostkit import Call

if TYPE_CHECKING:
    from bee_contracts.shapes.core import ArtifactReadArgs, ArtifactReadResult


def bee_artifact_read(ctx: CoreContext, call: Call[ArtifactReadArgs]) -> ArtifactReadResult:
    """Return ``args["lengthBytes"]`` bytes of artifact ``args["id"]`` from ``args["offsetBytes"]``, as base64.

    Raises:
        BeeError: ``not_initialized``; ``invalid_argument`` for a malformed id or an offset past the end;
            ``not_found`` for an unknown id (or one removed during the call); ``internal`` (not retryable) when its
            record is damaged; ``hash_mismatch`` when the stored bytes were changed behind Bee's back.
    """
    args = call.args
    offset, length = args["offsetBytes"], args["lengthBytes"]
    store = ctx.artifacts.store(ctx.instance)
    record = store.get(args["id"])
    page = store.serve(record, lambda record, path: read_page(record, path, store.verifier, offset, length))
    following = offset + len(page)
    return {
        "id": record.id,
        "sourceSha256": record.source_sha256,
        "sourceBytes": record.size,
        "offsetBytes": offset,
        "lengthBytes": len(page),
        "nextOffsetBytes": following if following < record.size else None,
        "base64": base64.b64encode(page).decode("ascii"),
    }
