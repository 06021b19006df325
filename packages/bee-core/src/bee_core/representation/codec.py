"""Packets in and out: the whole-packet operations the tools use, failures mapped to contracts codes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from bee_contracts import BeeError, ErrorCode, invalid
from bee_contracts.jsonvalues import NotJson, TooLarge, parse_json, write_json
from bee_core.representation.decoder import Malformed, expand
from bee_core.representation.encoder import TooDeep, encode_body
from bee_core.representation.format import HeaderError, checksum, header, split_packet
from bee_core.representation.tokens import count_tokens


@dataclass(frozen=True)
class Encoded:
    """A packet and what it saved."""

    packet: str
    minified: str


def encode_packet(text: str, variant: str, tokenizer: str) -> Encoded:
    """The bee-json-v1 packet for the JSON text ``text``.

    Raises:
        BeeError: ``invalid_argument`` when ``text`` is not JSON or nests too deeply.
    """
    try:
        value = parse_json(text)
    except NotJson as exc:
        raise invalid(f"json is {exc}; pass one complete JSON value (RFC 8259)") from None
    try:
        body = encode_body(value, variant, partial(count_tokens, tokenizer=tokenizer))
    except TooDeep as exc:
        raise invalid(f"json is not accepted: {exc}") from None
    minified = write_json(value)
    return Encoded(header(len(minified.encode("utf-8")), body) + "\n" + body, minified)


def decode_packet(packet: str, limit: int) -> str:
    """The minified JSON a packet stands for, with every number spelled as encoded.

    ``limit`` bounds the expanded JSON in UTF-8 bytes: a header declaring more is refused before anything is
    expanded, and expansion stops the moment it passes the declared size.

    Raises:
        BeeError: ``unsupported`` for another version's packet; ``invalid_argument`` for text that is not a
            packet, a malformed body, or a body that expands past its declared size; ``hash_mismatch`` for a
            truncated or altered body (its check does not match); ``budget_exceeded`` when the declared size is
            over ``limit``.
    """
    try:
        head, body = split_packet(packet)
    except HeaderError as exc:
        if exc.other_version is not None:
            raise BeeError(ErrorCode.UNSUPPORTED, f"packet: {exc}") from None
        raise invalid(f"packet is not a bee-json-v1 packet: {exc}") from None
    actual = checksum(body)
    if actual != head.check:
        raise BeeError(
            ErrorCode.HASH_MISMATCH,
            f"packet body does not match its check (header {head.check}, body {actual}): it was truncated or "
            "altered after encoding; encode the JSON again",
            details={"declaredCheck": head.check, "actualCheck": actual},
        )
    if head.expanded_bytes > limit:
        raise BeeError(
            ErrorCode.BUDGET_EXCEEDED,
            f"packet declares {head.expanded_bytes} bytes of JSON, over the {limit}-byte bound for this call; "
            "nothing was expanded. Raise budgetBytes (up to the maximum) or decode a smaller packet",
            details={"declaredBytes": head.expanded_bytes, "limitBytes": limit},
        )
    try:
        text = expand(body, head.expanded_bytes)
    except Malformed as exc:
        raise invalid(f"packet body is malformed: {exc}") from None
    except TooLarge:
        raise invalid(
            f"packet expands past its declared {head.expanded_bytes} bytes; it is corrupt or crafted, and nothing "
            "was delivered"
        ) from None
    size = len(text.encode("utf-8"))
    if size != head.expanded_bytes:
        raise invalid(f"packet declares {head.expanded_bytes} bytes of JSON but expands to {size}; it is corrupt")
    return text
