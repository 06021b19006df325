"""Protocol limits every Bee host enforces (see docs/reference/limits.md)."""

from typing import Final

KIB: Final = 1024

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
    }
