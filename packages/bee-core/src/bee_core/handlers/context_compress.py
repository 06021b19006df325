"""bee_context_compress: optional local prose compression, the original retained for exact recovery."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from bee_contracts import BeeError, ErrorCode, invalid
from bee_contracts.limits import COMPRESS_MAX_INPUT_BYTES, COMPRESS_MAX_INPUT_TOKENS
from bee_core.compression.method import METHOD, compress
from bee_core.compression.settings import load_settings
from bee_core.compression.store import RetentionStore
from bee_core.context import CoreContext
from bee_core.representation.tokens import count_tokens
from bee_hostkit import Call

if TYPE_CHECKING:
    from bee_contracts.shapes.core import ContextCompressArgs, ContextCompressResult


def bee_context_compress(ctx: CoreContext, call: Call[ContextCompressArgs]) -> ContextCompressResult:
    """Compress ``args["text"]`` towards ``args["ratePercent"]`` of its tokens when compression is enabled.

    Disabled compression (the default, and always without an instance) returns the original unchanged. A lossy
    result is marked ``semanticRisk`` and its original is retained, hash-verified, before the result is returned.

    Raises:
        BeeError: ``unsupported`` for a contentKind other than "prose"; ``invalid_argument`` for text over
            64 KiB or 8,192 o200k tokens; ``internal`` when the settings file is damaged.
    """
    args, deadline = call.args, call.deadline
    text: str = args["text"]
    kind: str = args["contentKind"]
    rate: int = args["ratePercent"]
    if kind != "prose":
        raise BeeError(
            ErrorCode.UNSUPPORTED,
            f'contentKind {kind!r} is not compressed: only "prose" is. Code, JSON, logs and data must stay exact '
            "(for JSON, bee_representation_encode is lossless)",
            details={"contentKind": kind},
        )
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > COMPRESS_MAX_INPUT_BYTES:
        raise invalid(
            f"text is {len(data)} bytes; the limit is {COMPRESS_MAX_INPUT_BYTES} (64 KiB). Compress it in parts",
            inputBytes=len(data),
        )
    tokens = count_tokens(text)
    if tokens > COMPRESS_MAX_INPUT_TOKENS:
        raise invalid(
            f"text is {tokens} o200k tokens; the limit is {COMPRESS_MAX_INPUT_TOKENS}. Compress it in parts",
            inputTokens=tokens,
        )
    try:
        settings = load_settings(ctx.instance)
    except ValueError as exc:
        raise BeeError(ErrorCode.INTERNAL, f"compression settings are unreadable: {exc}") from None
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    result: ContextCompressResult = {
        "text": text,
        "compressed": False,
        "enabled": settings.enabled,
        "semanticRisk": False,
        "id": None,
        "originalSha256": digest,
        "method": METHOD,
        "ratePercent": rate,
        "inputBytes": len(data),
        "inputTokens": tokens,
        "outputBytes": len(data),
        "outputTokens": tokens,
        "note": "",
    }
    if not settings.enabled:
        where = "this instance" if ctx.instance.exists else "this checkout (no Bee instance: run `bee init`)"
        result["note"] = (
            f"compression is disabled for {where}; the original is returned unchanged. "
            "`bee compression setup` then `bee compression enable` turn it on"
        )
        return result
    deadline.check("loading the method")
    compressed = compress(text, rate, count_tokens)
    deadline.check("compressing")
    if compressed.text == text:
        result["note"] = "nothing could be removed without touching protected text; the original is returned"
        return result
    # Retain before answering: a caller must never hold lossy text whose original is not recoverable.
    record = RetentionStore(ctx.instance).retain(text, METHOD)
    output = compressed.text
    result.update(
        {
            "text": output,
            "compressed": True,
            "semanticRisk": True,
            "id": record.id,
            "outputBytes": len(output.encode("utf-8", "surrogatepass")),
            "outputTokens": compressed.output_tokens,
            "note": (
                f"lossy: {compressed.output_tokens} of {tokens} tokens kept (target {rate}%); meaning may be lost. "
                f"bee_compression_recover with id {record.id} returns the exact original"
            ),
        }
    )
    return result
