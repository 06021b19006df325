"""bee_representation_encode: a JSON text as a complete bee-json-v1 packet, with byte and token counts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_contracts import invalid
from bee_contracts.limits import REPRESENTATION_MAX_INPUT_BYTES
from bee_core.context import CoreContext
from bee_core.representation.codec import encode_packet
from bee_core.representation.tokens import count_tokens
from bee_hostkit import Budget, Call, with_size

if TYPE_CHECKING:
    from bee_contracts.shapes.core import RepresentationEncodeArgs, RepresentationEncodeResult


def bee_representation_encode(ctx: CoreContext, call: Call[RepresentationEncodeArgs]) -> RepresentationEncodeResult:
    """Encode ``args["json"]`` with ``args["encoding"]``, counting tokens with ``args["tokenizer"]``.

    Raises:
        BeeError: ``invalid_argument`` for text that is not JSON, nests too deeply or is over 256 KiB;
            ``budget_exceeded`` when the result does not fit ``budgetBytes`` (nothing partial).
    """
    args, deadline = call.args, call.deadline
    text: str = args["json"]
    tokenizer = args["tokenizer"]
    input_bytes = _utf8_size(text)
    if input_bytes > REPRESENTATION_MAX_INPUT_BYTES:
        raise invalid(
            f"json is {input_bytes} bytes; the limit is {REPRESENTATION_MAX_INPUT_BYTES}. Encode a smaller part",
            inputBytes=input_bytes,
        )
    encoded = encode_packet(text, args["encoding"], tokenizer)
    deadline.check("encoding the packet")
    result: RepresentationEncodeResult = {
        "packet": encoded.packet,
        "encoding": args["encoding"],
        "tokenizer": tokenizer,
        "inputBytes": input_bytes,
        "inputTokens": count_tokens(text, tokenizer),
        "minifiedBytes": _utf8_size(encoded.minified),
        "minifiedTokens": count_tokens(encoded.minified, tokenizer),
        "packetBytes": _utf8_size(encoded.packet),
        "packetTokens": count_tokens(encoded.packet, tokenizer),
        "resultBytes": 0,
    }
    with_size(result)
    Budget(args["budgetBytes"]).require(result, what="the packet", hint="Raise budgetBytes or encode less JSON")
    return result


def _utf8_size(text: str) -> int:
    # surrogatepass: a lone surrogate in the argument is measured, not refused (it is written escaped).
    return len(text.encode("utf-8", "surrogatepass"))
