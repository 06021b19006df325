"""Lines import keeps verbatim without making them live issues, and the deletions among them.

Beads carries deletions through git as tombstones (``"status":"tombstone"`` lines), and its files may hold other
records: ``{"_type":"memory",…}`` lines, header lines such as ``{"_schema":…}`` (what each line is:
:mod:`.linekinds`). The tracker keeps every such line exactly as it came, at its position, so an export writes it
back byte for byte; none of them ever becomes an issue. A tombstone also reserves its id: the issue is deleted, so
reads and writes of it answer ``not_found`` saying so, and new issues never take the id.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Final

from bee_contracts import BeeError, ErrorCode
from bee_tracker.model import TOMBSTONE
from bee_tracker.store.db import Row, Statement, Tx

#: ``kind`` of a line for an id another line of the same file has the last word on.
SHADOWED: Final = "shadowed"

#: The soft-delete fields Beads writes on a tombstone, reported when an id turns out to be deleted.
_DELETION_FIELDS = ("deleted_at", "deleted_by", "delete_reason")


def identity_of(record: dict[str, Any], line: str) -> str:
    """What a re-import matches on to replace a kept line (with its kind): its id, else its key (memories), else the
    line itself; hashed, so an index holds it whatever its length."""
    named = "line:" + line
    for name in ("id", "key"):
        value = record.get(name)
        if isinstance(value, str | int) and not isinstance(value, bool):
            named = f"{name}:{value}"
            break
    return hashlib.sha256(named.encode("utf-8", "surrogatepass")).hexdigest()


def tombstone_statement(issue_id: str) -> Statement:
    """The tombstone line of ``issue_id`` (no row when the id was never deleted), for :func:`tombstone_from`."""
    return (
        "SELECT line FROM kept_records WHERE issue_id = ? AND kind = ? ORDER BY position LIMIT 1",
        [issue_id, TOMBSTONE],
    )


def tombstone_from(rows: Sequence[Row]) -> dict[str, Any] | None:
    """The tombstone line from the rows of :func:`tombstone_statement`, parsed, or None."""
    if not rows:
        return None
    parsed: dict[str, Any] = json.loads(rows[0][0])
    return parsed


def missing(tx: Tx, issue_id: str, *, role: str = "issue") -> BeeError:
    """The ``not_found`` error for an id that names no live issue; it says when the issue was deleted."""
    return not_found(issue_id, tombstone_from(tx.rows(*tombstone_statement(issue_id))), role=role)


def not_found(issue_id: str, deleted: dict[str, Any] | None, *, role: str = "issue") -> BeeError:
    """:func:`missing` from the id's tombstone already read (:func:`tombstone_from`)."""
    if deleted is None:
        return BeeError(
            ErrorCode.NOT_FOUND,
            f"no {role} {issue_id!r}; search for it by text or list ready work",
            details={"id": issue_id},
        )
    details: dict[str, Any] = {"id": issue_id, "deleted": True}
    details.update({k: deleted[k] for k in _DELETION_FIELDS if isinstance(deleted.get(k), str)})
    when = f" at {details['deleted_at']}" if "deleted_at" in details else ""
    who = f" by {details['deleted_by']}" if "deleted_by" in details else ""
    return BeeError(
        ErrorCode.NOT_FOUND,
        f"{role} {issue_id} was deleted{when}{who} (a Beads tombstone); it can no longer be read or changed",
        details=details,
    )
