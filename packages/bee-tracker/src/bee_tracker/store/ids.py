"""Ids for new issues: ``prefix-hash`` at the top level, ``parent.N`` for children.

A new id is never one the store has seen in any form: not a live issue, not a deleted one (a tombstone), and not
the target of a dependency on an issue that does not exist (yet). So a new issue starts with no dependents, and
creating one can never close a dependency cycle.
"""

from __future__ import annotations

import secrets
from collections.abc import Container

from bee_contracts import BeeError, ErrorCode
from bee_tracker.store.db import Tx

_ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


def _taken(tx: Tx, candidate: str) -> bool:
    return (
        tx.row(
            "SELECT 1 FROM issues WHERE id = ? "
            "UNION ALL SELECT 1 FROM kept_records WHERE issue_id = ? "
            "UNION ALL SELECT 1 FROM dependencies WHERE depends_on_id = ?",
            [candidate, candidate, candidate],
        )
        is not None
    )


def new_id(tx: Tx, prefix: str, *, avoid: Container[str] = ()) -> str:
    """A fresh ``prefix-hash`` id: random base36, lengthened while it collides (with the store, or ``avoid``).

    Raises:
        BeeError: ``conflict`` if no free id was found (36^12 ids: not reached in practice).
    """
    for length in (4, 5, 6, 7, 8, 10, 12):
        candidate = f"{prefix}-" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(length))
        if candidate not in avoid and not _taken(tx, candidate):
            return candidate
    raise BeeError(ErrorCode.CONFLICT, "could not find a free issue id; retry")


def child_id(tx: Tx, parent_id: str) -> str:
    """The next ``parent.N`` id: above every child id the store has seen, live, deleted or only referenced."""
    stem = parent_id + "."
    highest = 0
    for (existing,) in tx.rows(
        "SELECT id FROM issues WHERE substr(id, 1, ?) = ? "
        "UNION SELECT issue_id FROM kept_records WHERE substr(issue_id, 1, ?) = ? "
        "UNION SELECT depends_on_id FROM dependencies WHERE substr(depends_on_id, 1, ?) = ?",
        [len(stem), stem] * 3,
    ):
        suffix = existing[len(stem) :]
        if suffix.isascii() and suffix.isdigit() and len(suffix) <= 18:
            highest = max(highest, int(suffix))
    return f"{stem}{highest + 1}"
