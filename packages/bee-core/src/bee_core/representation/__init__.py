"""bee-json-v1: a token-lean, lossless text representation of JSON values (docs/representation.md)."""

from bee_core.representation.codec import Encoded, decode_packet, encode_packet
from bee_core.representation.encoder import VARIANTS
from bee_core.representation.format import MAGIC
from bee_core.representation.tokens import TOKENIZERS, count_tokens

__all__ = ["MAGIC", "TOKENIZERS", "VARIANTS", "Encoded", "count_tokens", "decode_packet", "encode_packet"]
