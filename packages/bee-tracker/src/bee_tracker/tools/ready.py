"""ready: unblocked work, most urgent first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bee_tracker.model import epoch
from bee_tracker.store import reads
from bee_tracker.store.ops import Read

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import ReadyArgs, ReadyData


def ready(op: Read, args: ReadyArgs) -> ReadyData:
    """Open issues that are work, not deferred, not blocked and not under a blocked parent (never a tombstone)."""
    where, params = conditions(op, args)
    # No total: counting every ready issue would cost a pass over the backlog on each call.
    page, _, has_more = reads.page(
        op.tx, " AND ".join(where), params, limit=args["limit"], prefix=reads.BLOCKED_CTE, count=False
    )
    return {"issues": page, "has_more": has_more}


def conditions(op: Read, args: ReadyArgs) -> tuple[list[str], list[Any]]:
    """What makes an issue (alias ``i``) ready, with the ``priority`` and ``labels`` filters, as WHERE clauses and
    their parameters; they read the ``blocked`` set of :data:`~bee_tracker.store.reads.BLOCKED_CTE`. The web board
    builds its Ready column from exactly these."""
    params: list[Any] = [epoch(op.now)]
    where = [
        "i.status = 'open'",
        f"i.issue_type NOT IN ({reads.NOT_WORK})",
        "(i.defer_epoch IS NULL OR i.defer_epoch <= ?)",
        "i.id NOT IN (SELECT id FROM blocked)",
    ]
    if "priority" in args:
        where.append("i.priority = ?")
        params.append(args["priority"])
    if args.get("labels"):
        where.append(reads.label_filter(args["labels"], params))
    return where, params
