"""bee_representation_decode: a bee-json-v1 packet back to minified JSON, expansion bounded."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_contracts import invalid
from bee_contracts.limits import REPRESENTATION_MAX_INPUT_BYTES
from bee_core.context import CoreContext
from bee_core.representation.codec import decode_packet
from bee_hostkit import Budget, Call, with_size

if TYPE_CHECKING:
    from bee_contracts.shapes.core import RepresentationDecodeArgs, RepresentationDecodeResult


def bee_representation_decode(ctx: CoreContext, call: Call[RepresentationDecodeArgs]) -> RepresentationDecodeResult:
    """Decode ``args["packet"]``; the expanded JSON may not exceed ``args["budgetBytes"]``.

    Raises:
        BeeError: see :func:`~bee_core.representation.codec.decode_packet`; ``budget_exceeded`` when the result
            does not fit ``budgetBytes`` (nothing partial).
    """
    args, deadline = call.args, call.deadline
    packet: str = args["packet"]
    packet_bytes = len(packet.encode("utf-8", "surrogatepass"))
    if packet_bytes > REPRESENTATION_MAX_INPUT_BYTES:
        raise invalid(f"packet is {packet_bytes} bytes; the limit is {REPRESENTATION_MAX_INPUT_BYTES}")
    budget = Budget(args["budgetBytes"])
    text = decode_packet(packet, budget.limit)
    deadline.check("decoding the packet")
    result: RepresentationDecodeResult = {
        "json": text,
        "jsonBytes": len(text.encode("utf-8")),
        "packetBytes": packet_bytes,
        "resultBytes": 0,
    }
    with_size(result)
    budget.require(result, what="the decoded JSON", hint="Raise budgetBytes or decode a smaller packet")
    return result
