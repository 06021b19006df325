"""Protocol limits every Bee host enforces (see docs/reference/limits.md)."""

from __future__ import annotations

# Annotations only (mypy reads this name as True): the `bee` front end reads the frame limit and must not pay for
# the typing module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

KIB: Final = 1024
MIB: Final = 1024 * KIB

#: Largest JSON-RPC frame a host reads or writes, in bytes of UTF-8 (the newline excluded).
MAX_FRAME_BYTES: Final = 512 * KIB

#: Largest serialized tool result (structuredContent plus its text copy), in bytes.
MAX_RESULT_BYTES: Final = 256 * KIB

#: Bounds of the `budgetBytes` argument of bee_context_packet.
PACKET_BUDGET_MIN: Final = 512
PACKET_BUDGET_MAX: Final = MAX_RESULT_BYTES

#: Deadline of one bee_context_packet call, in seconds.
PACKET_DEADLINE_SECONDS: Final = 15.0

#: Bounds of the `lengthBytes` argument of bee_artifact_read (one page of exact bytes).
ARTIFACT_PAGE_MIN: Final = 1
ARTIFACT_PAGE_MAX: Final = 64 * KIB

#: Largest `queryJson` of bee_artifact_query, in bytes of UTF-8.
ARTIFACT_QUERY_MAX_BYTES: Final = 64 * KIB
#: Largest JSON text bee_representation_encode takes, and largest packet bee_representation_decode takes (UTF-8 bytes).
REPRESENTATION_MAX_INPUT_BYTES: Final = 256 * KIB

#: Bounds of the `budgetBytes` argument of the representation tools and bee_compression_recover.
REPRESENTATION_BUDGET_MIN: Final = 512
REPRESENTATION_BUDGET_MAX: Final = MAX_RESULT_BYTES

#: Largest prose bee_context_compress takes: UTF-8 bytes and local (o200k) tokens.
COMPRESS_MAX_INPUT_BYTES: Final = 64 * KIB
COMPRESS_MAX_INPUT_TOKENS: Final = 8192

#: Bounds of bee_context_compress's `ratePercent` (the output's target share of the input's tokens).
COMPRESS_RATE_MIN: Final = 10
COMPRESS_RATE_MAX: Final = 90

#: Bounds of bee_skill_search's `limit` (matches in one answer).
SKILL_SEARCH_LIMIT_MIN: Final = 1
SKILL_SEARCH_LIMIT_MAX: Final = 20

#: Largest skill body (a SKILL.md) the skill tools serve, in bytes.
SKILL_BODY_MAX_BYTES: Final = 256 * KIB

#: Most skills one bee_skill_resolve chain may hold (the skill and all its prerequisites).
SKILL_CHAIN_MAX: Final = 32

#: Largest image the design host decodes (evidence, reference images, `bee visual diff` inputs), in pixels; checked
#: from the PNG header before any pixel is decoded. A 4K full-page capture is about 30 M.
IMAGE_MAX_PIXELS: Final = 40_000_000
#: Largest image file the design host reads, in bytes (a PNG of IMAGE_MAX_PIXELS pixels of noise is about 160 MB).
IMAGE_MAX_BYTES: Final = 256 * MIB
#: Largest answer bee-core reads from a remote MCP server (a skill provider, the tracker) in one HTTP response, in
#: bytes as they arrive, SSE framing included: the frame limit (a 256 KiB result with room for its JSON escapes)
#: plus 8 KiB of framing. Reading stops at the byte that passes it.
REMOTE_ANSWER_MAX_BYTES: Final = MAX_FRAME_BYTES + 8 * KIB

#: Default deadline of any other tool call, in seconds.
DEFAULT_DEADLINE_SECONDS: Final = 30.0


def as_dict() -> dict[str, int | float]:
    """The limits as plain data, in the form the contract digest covers."""
    return {
        "maxFrameBytes": MAX_FRAME_BYTES,
        "maxResultBytes": MAX_RESULT_BYTES,
        "packetBudgetMin": PACKET_BUDGET_MIN,
        "packetBudgetMax": PACKET_BUDGET_MAX,
        "packetDeadlineSeconds": PACKET_DEADLINE_SECONDS,
        "artifactPageMin": ARTIFACT_PAGE_MIN,
        "artifactPageMax": ARTIFACT_PAGE_MAX,
        "artifactQueryMaxBytes": ARTIFACT_QUERY_MAX_BYTES,
        "defaultDeadlineSeconds": DEFAULT_DEADLINE_SECONDS,
        "representationMaxInputBytes": REPRESENTATION_MAX_INPUT_BYTES,
        "representationBudgetMin": REPRESENTATION_BUDGET_MIN,
        "representationBudgetMax": REPRESENTATION_BUDGET_MAX,
        "compressMaxInputBytes": COMPRESS_MAX_INPUT_BYTES,
        "compressMaxInputTokens": COMPRESS_MAX_INPUT_TOKENS,
        "compressRateMin": COMPRESS_RATE_MIN,
        "compressRateMax": COMPRESS_RATE_MAX,
        "skillSearchLimitMin": SKILL_SEARCH_LIMIT_MIN,
        "skillSearchLimitMax": SKILL_SEARCH_LIMIT_MAX,
        "skillBodyMaxBytes": SKILL_BODY_MAX_BYTES,
        "skillChainMax": SKILL_CHAIN_MAX,
        "imageMaxPixels": IMAGE_MAX_PIXELS,
        "imageMaxBytes": IMAGE_MAX_BYTES,
        "remoteAnswerMaxBytes": REMOTE_ANSWER_MAX_BYTES,
    }
