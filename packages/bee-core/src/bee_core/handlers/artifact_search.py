"""bee_artifact_search: literal line matches across retained text artifacts, exact counts before the page."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_contracts import BeeError, ErrorCode, invalid
from bee_core.artifacts.search import SearchOutcome, Target, search
from bee_core.artifacts.store import ArtifactStore
from bee_core.context import CoreContext
from bee_hostkit import Budget, Call, with_size
from bee_hostkit.results import piece_bytes

if TYPE_CHECKING:
    from bee_contracts.shapes.core import ArtifactSearchArgs, ArtifactSearchResult


def _targets(store: ArtifactStore, ids: list[str] | None) -> list[Target]:
    if ids is None:
        return [Target(record, store.blob_path(record)) for record in store.list() if record.is_text]
    targets = []
    for artifact in ids:
        record = store.get(artifact)
        if not record.is_text:
            raise BeeError(
                ErrorCode.UNSUPPORTED,
                f"artifact {record.id} ({record.name}) is binary, and search covers text artifacts only; leave it "
                "out of ids, or read its bytes with bee_artifact_read",
                details={"id": record.id, "kind": record.kind},
            )
        targets.append(Target(record, store.blob_path(record)))
    return targets


def _result(text: str, searched: int, outcome: SearchOutcome, offset: int, limit: int) -> ArtifactSearchResult:
    total = outcome.total
    returned = len(outcome.page)
    following = offset + returned
    return {
        "text": text,
        "totalMatches": total,
        "artifactsSearched": searched,
        "counts": [{"id": r.id, "name": r.name, "matches": count} for r, count in outcome.counts if count],
        "offset": offset,
        "limit": limit,
        "returned": returned,
        "nextOffset": following if returned and following < total else None,
        "matches": [line.to_json(record.id) for record, line in outcome.page],
        "resultBytes": 0,
    }


def _fit(result: ArtifactSearchResult, budget: Budget) -> ArtifactSearchResult:
    """The sized result, or ``budget_exceeded`` saying how small a page would fit."""
    with_size(result)
    if result["resultBytes"] <= budget.limit:
        return result
    matches = result["matches"]
    empty: ArtifactSearchResult = {**result, "returned": 0, "nextOffset": None, "matches": []}
    bare = with_size(empty)["resultBytes"]
    if bare > budget.limit:
        raise budget.exceeded(
            bare,
            what="even the counts, without any matching line,",
            hint="Raise budgetBytes, or narrow the search to fewer artifacts with ids",
        )
    fitting, size = 0, bare
    for i, match in enumerate(matches):
        size += piece_bytes(match) + (2 if i else 0)
        if size > budget.limit:
            break
        fitting += 1
    raise budget.exceeded(
        result["resultBytes"],
        what=f"the counts and {len(matches)} matching lines",
        hint=f"Lower limit to {fitting} or raise budgetBytes"
        if fitting
        else "Raise budgetBytes: not even one matching line fits beside the counts",
    )


def bee_artifact_search(ctx: CoreContext, call: Call[ArtifactSearchArgs]) -> ArtifactSearchResult:
    """Search retained text artifacts (all, or ``args["ids"]``) for the literal ``args["text"]``.

    Raises:
        BeeError: ``invalid_argument`` for a text with a line break or NUL; ``not_initialized``; ``not_found``
            for an unknown id; ``unsupported`` for a binary one; ``hash_mismatch`` for an artifact changed on disk;
            ``budget_exceeded``; ``deadline_exceeded``.
    """
    args, deadline = call.args, call.deadline
    text: str = args["text"]
    if "\n" in text:
        raise invalid("text contains a line break; search matches within one line, so search for one line's text")
    if "\x00" in text:
        raise invalid("text contains a NUL character, which no text artifact holds; remove it")
    offset, limit = args["offset"], args["limit"]
    budget = Budget(args["budgetBytes"])
    store = ctx.artifacts.store(ctx.instance)
    targets = _targets(store, args.get("ids"))
    outcome = search(
        targets,
        text,
        offset=offset,
        limit=limit,
        cache=ctx.artifacts.search,
        verifier=ctx.artifacts.verifier,
        deadline=deadline,
    )
    return _fit(_result(text, len(targets), outcome, offset, limit), budget)
