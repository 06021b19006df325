"""The Beads data model as the tracker stores it: fields, statuses, types, dependency kinds and timestamps.

An issue travels as a plain dict shaped like a line of Beads' ``.beads/issues.jsonl``. Columns hold the fields the
tracker reasons about; every other key Beads writes is kept verbatim in ``extra`` so an export loses nothing.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final

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

#: Dependency types whose unfinished target keeps the dependent from being ready (and from closing).
#: (Beads gives waits-for a richer, children-based meaning; here it simply waits for its target.)
BLOCKING_TYPES: Final = ("blocks", "conditional-blocks", "waits-for")
PARENT_CHILD: Final = "parent-child"

#: Statuses in which an issue no longer blocks its dependents.
DONE_STATUSES: Final = ("closed", "pinned")

#: Statuses of a parent that hold back its children even without a blocking dependency.
HOLDING_STATUSES: Final = ("blocked", "deferred")

#: Orchestration types that are never "work" in the ready list (as in Beads).
NOT_WORK_TYPES: Final = ("merge-request", "gate", "molecule", "message", "agent", "role", "rig")

#: Deleted issues in exports; import skips them.
TOMBSTONE: Final = "tombstone"

#: Text fields that take part in full-text search.
TEXT_FIELDS: Final = ("title", "description", "design", "acceptance_criteria", "notes")

#: Known scalar fields, stored in columns, in the order Beads writes them.
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

#: Where a key goes when an issue is written out fresh (keys of imported issues keep their original order).
CANONICAL_ORDER: Final = (*COLUMNS[:12], "estimated_minutes", *COLUMNS[12:], "labels", "dependencies", "comments")

#: Beads ids: a prefix, a hyphen, a hash, and optional `.N` child suffixes.
ID_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*-[A-Za-z0-9]+(\.[0-9]+)*$")

MAX_TEXT_BYTES: Final = 64 * 1024
MAX_TITLE_CHARS: Final = 500


def now() -> str:
    """The current time as Beads writes it: RFC 3339, UTC, microseconds."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def epoch(timestamp: str | None) -> float | None:
    """Seconds since the epoch for an RFC 3339 timestamp (any offset, up to nanoseconds), or None."""
    if not timestamp:
        return None
    text = timestamp.strip().replace("Z", "+00:00").replace("z", "+00:00")
    # Python parses at most microseconds: trim longer fractions.
    text = re.sub(r"(\.\d{6})\d+", r"\1", text)
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def is_blocking(dependency_type: str) -> bool:
    return dependency_type in BLOCKING_TYPES
