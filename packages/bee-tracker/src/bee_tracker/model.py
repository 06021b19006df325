"""The Beads data model as the tracker stores it: fields, statuses, types, dependency kinds, timestamps and sizes.

An issue travels as a plain dict shaped like a line of Beads' ``.beads/issues.jsonl``. Columns hold the fields the
tracker reasons about; every other key Beads writes is kept verbatim in ``extra`` so an export loses nothing.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final

from bee_contracts import invalid
from bee_contracts.limits import KIB, MAX_RESULT_BYTES

#: Statuses Beads defines. Stores also accept custom statuses registered by import or configuration.
BUILTIN_STATUSES: Final = ("open", "in_progress", "blocked", "deferred", "closed", "pinned", "hooked")

#: Issue types Beads defines (built in and the orchestration types seen in real exports).
BUILTIN_TYPES: Final = (
    "task",
    "bug",
    "feature",
    "epic",
    "chore",
    "message",
    "molecule",
    "gate",
    "agent",
    "role",
    "rig",
    "convoy",
    "event",
    "merge-request",
    "decision",
)

#: Dependency types that can keep the dependent from being ready (and from closing): blocks and conditional-blocks
#: through their active target, waits-for through its target's active children (bee_tracker.store.readiness).
BLOCKING_TYPES: Final = ("blocks", "conditional-blocks", "waits-for")
PARENT_CHILD: Final = "parent-child"

#: Dependency types that decide readiness; a cycle through any mix of them is refused.
READINESS_TYPES: Final = (*BLOCKING_TYPES, PARENT_CHILD)

#: Statuses in which an issue no longer blocks its dependents.
DONE_STATUSES: Final = ("closed", "pinned")

#: An issue's own statuses that the board shows among the Blocked (under Beads' rule they hold back nobody).
HOLDING_STATUSES: Final = ("blocked", "deferred")

#: Orchestration types that are never "work" in the ready list (as in Beads).
NOT_WORK_TYPES: Final = ("merge-request", "gate", "molecule", "message", "agent", "role", "rig")

#: How Beads marks a deleted issue. Kept verbatim by import and export; never a live issue here.
TOMBSTONE: Final = "tombstone"

#: Known scalar fields, stored in columns (where a key goes in a written line: bee_tracker.store.bdjson).
COLUMNS: Final = (
    "id",
    "title",
    "description",
    "design",
    "acceptance_criteria",
    "notes",
    "status",
    "priority",
    "issue_type",
    "assignee",
    "owner",
    "created_at",
    "created_by",
    "updated_at",
    "closed_at",
    "close_reason",
    "external_ref",
    "defer_until",
)

# -- sizes --------------------------------------------------------------------------------------------------------
# `get` must always return an issue whole within the 256 KiB result limit, where every string counts twice (in
# structuredContent and, escaped again, in the text copy). The result is split into shares, measured in those
# bytes (bee_hostkit.results.piece_bytes); writes that would push an issue past its share are refused, and the
# lists other people grow (comments, dependents, history) are returned newest-first as far as their share goes,
# with their total counts.

#: The issue itself: every field, its labels, its own dependencies, and the ids that may block it.
ISSUE_MAX_BYTES: Final = 96 * KIB
#: One comment (so the newest one always fits); also the share of all comments `get` returns.
COMMENTS_MAX_BYTES: Final = 100 * KIB
#: The shares of the neighbour lists and of the history in `get`.
DEPENDS_ON_MAX_BYTES: Final = 16 * KIB
DEPENDENTS_MAX_BYTES: Final = 24 * KIB
HISTORY_MAX_BYTES: Final = 12 * KIB
#: The fixed keys of `get` (revisions, counts) and the separators between the shares.
GET_OVERHEAD_BYTES: Final = (
    MAX_RESULT_BYTES
    - ISSUE_MAX_BYTES
    - COMMENTS_MAX_BYTES
    - DEPENDS_ON_MAX_BYTES
    - DEPENDENTS_MAX_BYTES
    - HISTORY_MAX_BYTES
)
assert GET_OVERHEAD_BYTES >= 4 * KIB, "get's shares leave room for its fixed keys"

#: Most labels one issue may carry, whoever writes them (the tools, either form of import): real Beads data has a few,
#: and every list of issues returns each one's labels whole.
LABELS_MAX: Final = 100

#: How many history events `get` returns at most (the newest).
HISTORY_LIMIT: Final = 20

# -- claims -------------------------------------------------------------------------------------------------------

#: The shortest and longest lease a claim may ask for, or a tracker may give by default, in seconds
#: (bee_tracker.store.claimlease).
MIN_LEASE_SECONDS: Final = 1
MAX_LEASE_SECONDS: Final = 7 * 86400

# -- time ---------------------------------------------------------------------------------------------------------

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)$")
#: A leap second (:60) is valid RFC 3339 that Python's datetime cannot hold: it is read as :59.
_LEAP_SECOND = re.compile(r"(?<=[Tt ]\d\d:\d\d:)60")


def now() -> str:
    """The current time as Beads writes it: RFC 3339, UTC, microseconds."""
    return datetime.now(UTC).strftime(_FORMAT)


def timestamp(seconds: float) -> str:
    """Seconds since the epoch as :func:`now` writes a time."""
    return datetime.fromtimestamp(seconds, UTC).strftime(_FORMAT)


def epoch(timestamp: str | None) -> float | None:
    """Seconds since the epoch for an RFC 3339 timestamp (any offset, up to nanoseconds), or None."""
    if not timestamp:
        return None
    try:  # what Python reads as it is (Z, nanoseconds): most of what Beads writes, at a fraction of the cost
        return datetime.fromisoformat(timestamp).timestamp()
    except ValueError:
        pass
    text = timestamp.strip().replace("Z", "+00:00").replace("z", "+00:00")
    # Python parses at most microseconds: trim longer fractions.
    text = _LEAP_SECOND.sub("59", re.sub(r"(\.\d{6})\d+", r"\1", text))
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def checked_timestamp(name: str, value: str) -> str:
    """``value`` when it is an RFC 3339 date-time (``2026-05-01T09:00:00Z``, ``…T09:00:00.5+02:00``).

    Raises:
        BeeError: ``invalid_argument`` naming the argument, with an example of the expected form.
    """
    if _RFC3339.match(value) is None or epoch(value) is None:
        raise invalid(
            f"{name} must be an RFC 3339 date-time with an offset, such as 2026-05-01T09:00:00Z; got {value[:80]!r}",
            argument=name,
        )
    return value
