"""bee_artifact_query: rows of a JSON or JSONL artifact, filtered, ordered, paged and projected by queryJson."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from bee_core.artifacts.query import parse_query, project, run
from bee_core.artifacts.rows import load_rows
from bee_core.context import CoreContext
from bee_hostkit import Budget, Call, with_size
from bee_hostkit.results import piece_bytes

if TYPE_CHECKING:
    from bee_contracts.shapes.core import ArtifactQueryArgs, ArtifactQueryResult


def bee_artifact_query(ctx: CoreContext, call: Call[ArtifactQueryArgs]) -> ArtifactQueryResult:
    """Run ``args["queryJson"]`` over the rows of artifact ``args["id"]`` within ``args["budgetBytes"]``.

    Raises:
        BeeError: ``invalid_argument`` for a bad query (see :func:`~bee_core.artifacts.query.parse_query`);
            ``not_initialized``; ``not_found`` (also for an artifact removed during the call); ``internal`` (not
            retryable) when its record is damaged; ``unsupported`` for a text or binary artifact; ``hash_mismatch``;
            ``budget_exceeded``; ``deadline_exceeded``.
    """
    args, deadline = call.args, call.deadline
    query = parse_query(args["queryJson"])
    budget = Budget(args["budgetBytes"])
    store = ctx.artifacts.store(ctx.instance)
    record = store.get(args["id"])
    deadline.check("loading rows")
    rows = store.serve(
        record, lambda record, path: load_rows(record, path, query.source, store.verifier, ctx.artifacts.rows)
    )
    matched, page = run(query, rows, lambda: deadline.check("filtering rows"))
    kind: Literal["json", "jsonl"] = "json" if record.kind == "json" else "jsonl"  # load_rows refused the rest
    following = query.offset + len(page)
    result: ArtifactQueryResult = {
        "id": record.id,
        "kind": kind,
        "totalRows": len(rows),
        "matchedRows": matched,
        "offset": query.offset,
        "limit": query.limit,
        "returned": len(page),
        "nextOffset": following if page and following < matched else None,
        "rows": [project(query, row) for row in page],
        "resultBytes": 0,
    }
    with_size(result)
    if result["resultBytes"] > budget.limit:
        bare: ArtifactQueryResult = {**result, "rows": []}
        fitting, size = 0, with_size(bare)["resultBytes"]
        for i, row in enumerate(result["rows"]):
            size += piece_bytes(row) + (2 if i else 0)
            if size > budget.limit:
                break
            fitting += 1
        advice = f"Lower limit in queryJson to {fitting}" if fitting else "Select fewer fields"
        raise budget.exceeded(
            result["resultBytes"], what=f"the counts and {len(page)} rows", hint=f"{advice} or raise budgetBytes"
        )
    return result
