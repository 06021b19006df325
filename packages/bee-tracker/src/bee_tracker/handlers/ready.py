"""ready: unblocked work by Beads' own rule, most urgent first, then newest, paged so every ready issue is reachable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bee_tracker.model import epoch
from bee_tracker.store import reads
from bee_tracker.store.listing import add_wholes
from bee_tracker.store.ops import Read
from bee_tracker.store.readiness import ready_now

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import ReadyArgs, ReadyData


def ready(op: Read, args: ReadyArgs) -> ReadyData:
    """The page of ready issues at ``offset`` (see :mod:`bee_tracker.store.readiness` for the rule), with the
    total count of ready issues under the filters; with ``whole``, each issue's record and counts as well."""
    where, params = conditions(op, args)
    page, total, has_more = reads.page(
        op.tx,
        " AND ".join(where),
        params,
        limit=args["limit"],
        offset=args["offset"],
        enrich=add_wholes if args["whole"] else None,
    )
    return {"issues": page, "total": total or 0, "offset": args["offset"], "has_more": has_more}


def conditions(op: Read, args: ReadyArgs) -> tuple[list[str], list[Any]]:
    """What makes an issue (aliases ``i`` and ``r``, see :data:`~bee_tracker.store.reads.LISTED`) ready now, with
    the ``priority`` and ``labels`` filters, as WHERE clauses and their parameters: the kept ``is_ready`` and the two
    defer times against this call's clock. The web board builds its Ready column from exactly these."""
    at = epoch(op.now)
    where = [ready_now("r", op.tx.clock)]
    params: list[Any] = [at, at]
    if "priority" in args:
        where.append("r.priority = ?")
        params.append(args["priority"])
    if args.get("labels"):
        where.append(reads.label_filter(args["labels"], params))
    return where, params
