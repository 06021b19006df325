"""What a line of a Beads JSONL file is: an issue, a record kept as it is, or something that is no Beads issue at all.

The legacy ``issues.jsonl`` holds issues (``{"_type":"issue",…}`` in ``bd export``'s newer form, a bare object in
older ones), tombstones (``"status":"tombstone"``, deleted issues of the SQLite era), memories
(``{"_type":"memory","key":…,"value":…}``) and, in some tools' files, a header whose keys all start with ``_``
(``{"_schema":"beads-jsonl/1",…}``). Beads requires a title of every issue it imports, so a line without one is not
an issue; :func:`classify` then says what it looks like — a row of ``bd backup``'s table dump, an entry of the legacy
``deletions.jsonl`` manifest, beads_rust's interaction log — so the refusal can say what to import instead.
"""

from __future__ import annotations

from typing import Any, Final

from bee_tracker.model import TOMBSTONE

#: ``kind`` of a line with no id whose keys all start with ``_`` (a header such as ``{"_schema":…}``).
HEADER: Final = "header"
#: ``kind`` of a memory record (``bd remember``), which ``bd export`` writes after the issues.
MEMORY: Final = "memory"

#: ``_type`` values bd writes.
_RECORD_TYPES = frozenset({"issue", MEMORY})
#: Columns of bd's issues table whose JSON names differ in an exported issue, and the flags it stores as 0/1.
_TABLE_ONLY_COLUMNS = frozenset({"timeout_ns"})
_TABLE_FLAGS = frozenset({"ephemeral", "pinned", "is_template", "no_history", "crystallizes"})

_BACKUP = "import the backup directory instead (bee tracker import .beads/backup), which brings every table"


class NotAnIssue(Exception):
    """A line that is neither an issue nor a record kept verbatim; ``looks_like`` says what it is."""

    def __init__(self, looks_like: str) -> None:
        super().__init__(looks_like)
        self.looks_like = looks_like


def is_table_issue_row(record: dict[str, Any]) -> bool:
    """Whether ``record`` is a row of bd backup's issues table (its own columns, flags as 0/1) rather than an issue."""
    if not _TABLE_ONLY_COLUMNS.isdisjoint(record):
        return True
    if _TABLE_FLAGS.isdisjoint(record):
        return False
    # bd's struct writes flags as booleans, its table as 0/1
    return any(type(record.get(flag)) is int for flag in _TABLE_FLAGS)


def _without_title(record: dict[str, Any]) -> str:
    """What a record without a usable title looks like (it is not imported)."""
    keys = set(record)
    if "ts" in keys and keys <= {"id", "ts", "by", "reason"}:
        return (
            "a deletions manifest entry (.beads/deletions.jsonl, from bd before tombstones); it is not an issue: "
            "leave that file out"
        )
    if {"issue_id", "label"} <= keys:
        return f"a row of bd backup's labels table (labels.jsonl); {_BACKUP}"
    if {"issue_id", "depends_on_id"} <= keys:
        return f"a row of bd backup's dependencies table (dependencies.jsonl); {_BACKUP}"
    if "event_type" in keys:
        return f"a row of bd backup's events table (events.jsonl); {_BACKUP}"
    if {"issue_id", "text"} <= keys:
        return f"a row of bd backup's comments table (comments.jsonl); {_BACKUP}"
    if keys == {"key", "value"}:
        return f"a row of bd backup's config table (config.jsonl); {_BACKUP}"
    if {"last_dolt_commit", "counts"} & keys:
        return f"bd backup's state file (backup_state.json); {_BACKUP}"
    if {"kind", "actor"} <= keys:
        return "an entry of beads_rust's interaction log (.beads/interactions.jsonl); it is not an issue: leave it out"
    title = record.get("title")
    if "title" in keys and title not in (None, ""):
        return f"an issue whose title is not text (a JSON {type(title).__name__}); Beads requires a text title"
    if "id" in keys or "status" in keys or "title" in keys:
        return "an issue without a title; Beads requires one"
    shown = ", ".join(sorted(keys)[:6]) + (", …" if len(keys) > 6 else "")
    return f"not a Beads record (its keys: {shown or 'none'})"


def classify(record: dict[str, Any]) -> str | None:
    """What a parsed line is when it is kept rather than imported as a live issue (``tombstone``, ``memory``,
    ``header``), or None for a live issue.

    Raises:
        NotAnIssue: the line is neither (no title, a table row, an unknown ``_type``, …), saying what it looks like.
    """
    declared = record.get("_type", "issue")
    if declared not in _RECORD_TYPES:
        raise NotAnIssue(f"a record of _type {str(declared)[:40]!r}, which bd does not write (it writes issue, memory)")
    if declared == MEMORY:
        return MEMORY
    if record.get("status") == TOMBSTONE:
        return TOMBSTONE
    if "id" not in record and record and all(str(key).startswith("_") for key in record):
        return HEADER
    title = record.get("title")
    if not isinstance(title, str) or not title:
        raise NotAnIssue(_without_title(record))
    if is_table_issue_row(record):
        raise NotAnIssue(
            "a row of bd backup's issues table (issues.jsonl of .beads/backup): importing it alone leaves its "
            f"dependencies, labels, comments and history behind; {_BACKUP}"
        )
    return None
