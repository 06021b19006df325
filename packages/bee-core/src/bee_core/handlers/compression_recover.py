"""bee_compression_recover: the exact original a compression retained, its sha256 verified."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_contracts import BeeError, ErrorCode
from bee_core.compression.store import RetentionStore
from bee_core.context import CoreContext
from bee_hostkit import Budget, Call, with_size

if TYPE_CHECKING:
    from bee_contracts.shapes.core import CompressionRecoverArgs, CompressionRecoverResult


def bee_compression_recover(ctx: CoreContext, call: Call[CompressionRecoverArgs]) -> CompressionRecoverResult:
    """Return the retained original ``args["id"]`` within ``args["budgetBytes"]``.

    Raises:
        BeeError: ``not_initialized`` without an instance; ``not_found`` / ``hash_mismatch`` from
            :meth:`~bee_core.compression.store.RetentionStore.get`; ``budget_exceeded`` when it does not fit.
    """
    args = call.args
    if not ctx.instance.exists:
        raise BeeError(
            ErrorCode.NOT_INITIALIZED,
            f"no Bee instance at {ctx.instance.root}, so nothing was ever retained here; run `bee init`",
        )
    text, record = RetentionStore(ctx.instance).get(args["id"])
    result: CompressionRecoverResult = {
        "id": record.id,
        "text": text,
        "sha256": record.sha256,
        "bytes": record.bytes,
        "createdAt": record.created_at,
        "method": record.method,
        "resultBytes": 0,
    }
    with_size(result)
    Budget(args["budgetBytes"]).require(result, what="the original", hint="Raise budgetBytes")
    return result
