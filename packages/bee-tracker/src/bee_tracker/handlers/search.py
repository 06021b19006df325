"""search: every issue Beads' search finds (substrings of title, id and external_ref), then Bee's word matches in
the rest of the text; filtered, ranked and paged so every hit is reachable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bee_tracker.store import reads
from bee_tracker.store.keys import text_match
from bee_tracker.store.listing import add_wholes
from bee_tracker.store.ops import Read

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import SearchArgs, SearchData


def search(op: Read, args: SearchArgs) -> SearchData:
    """Issues matching every given filter; with a query, those whose id, title or external_ref contains it
    (case-insensitively) or whose text holds all its words. Ranked: the exact id first, then substring matches,
    then word matches, each most urgent first, then newest; deleted issues (tombstones) never match."""
    params: list[Any] = []
    where = ["1 = 1"]
    order, order_params = reads.ORDER, list[Any]()
    text = (args.get("query") or "").strip()
    if text:
        matched, match_params, order, order_params = text_match(op.tx, text)
        where.append(matched)
        params.extend(match_params)
    if args.get("status"):
        where.append("r.status IN (" + ", ".join("?" for _ in args["status"]) + ")")
        params.extend(args["status"])
    if "assignee" in args:
        where.append("i.assignee = ?")
        params.append(args["assignee"])
    if "issue_type" in args:
        where.append("i.issue_type = ?")
        params.append(args["issue_type"])
    if args.get("labels"):
        where.append(reads.label_filter(args["labels"], params))
    page, total, has_more = reads.page(
        op.tx,
        " AND ".join(where),
        params,
        limit=args["limit"],
        offset=args["offset"],
        order=order,
        order_params=order_params,
        enrich=add_wholes if args["whole"] else None,
    )
    return {"issues": page, "total": total or 0, "offset": args["offset"], "has_more": has_more}
