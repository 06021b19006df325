"""How a page notices that the tracker changed: a short fingerprint of the store's activity, cheap to compute.

Every write through a tool records a history event (``events.seq`` grows, across replicas on PostgreSQL) and bumps
its issue's ``last_activity_at``; imports add or delete issues. The fingerprint is the newest event, the newest
activity and the number of live issues, so a poll answers "unchanged" from two index lookups and a count. (An import
that only rewrites existing issues, keeping their older timestamps, shows on the next change or reload.)
"""

from __future__ import annotations

import hashlib
from typing import Any

from bee_tracker.store.ops import Read


def fingerprint(op: Read, args: dict[str, Any]) -> str:
    """A 16-hex-digit digest of the store's activity; equal digests mean nothing visible changed."""
    del args  # the store's read functions take arguments; this one needs none
    newest_event = op.tx.row("SELECT MAX(seq) FROM events")
    newest_activity = op.tx.row("SELECT MAX(last_activity_at) FROM issues")
    live = op.tx.row("SELECT COUNT(*) FROM issues")
    parts = [newest_event[0] if newest_event else None, newest_activity[0] if newest_activity else None]
    text = f"{parts[0]}|{parts[1]}|{live[0] if live else 0}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def issue_revision(op: Read, args: dict[str, Any]) -> int | None:
    """The ``activity_revision`` of the issue ``args["id"]`` (notes count too), or None when it is gone."""
    found = op.tx.row("SELECT activity_revision FROM issues WHERE id = ?", [args["id"]])
    return int(found[0]) if found else None
