"""search: full-text and filtered search over every live issue, closed ones included."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bee_tracker.store import reads
from bee_tracker.store.ops import Read

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import SearchArgs, SearchData


def search(op: Read, args: SearchArgs) -> SearchData:
    """Issues matching every given filter, most urgent first; deleted issues (tombstones) never match."""
    params: list[Any] = []
    where = ["1 = 1"]
    text = (args.get("query") or "").strip()
    if text:
        clause, clause_params = op.tx.search_clause(text)
        # An exact id also finds its issue, whatever the text index says.
        where.append(f"({clause} OR i.id = ?)")
        params.extend([*clause_params, text])
    if args.get("status"):
        where.append("i.status IN (" + ", ".join("?" for _ in args["status"]) + ")")
        params.extend(args["status"])
    if "assignee" in args:
        where.append("i.assignee = ?")
        params.append(args["assignee"])
    if "issue_type" in args:
        where.append("i.issue_type = ?")
        params.append(args["issue_type"])
    if args.get("labels"):
        where.append(reads.label_filter(args["labels"], params))
    page, total, has_more = reads.page(op.tx, " AND ".join(where), params, limit=args["limit"], offset=args["offset"])
    return {"issues": page, "total": total or 0, "offset": args["offset"], "has_more": has_more}
