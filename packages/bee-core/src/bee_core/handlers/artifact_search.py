"""bee_artifact_search: literal line matches across retained text artifacts, exact counts before the page."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_contracts import BeeError, ErrorCode, invalid
from bee_core.artifacts.search import SearchCache, SearchOutcome, Target, search
from bee_core.artifacts.store import ArtifactStore
from bee_core.artifacts.verify import BytesMissing
from bee_core.context import CoreContext
from bee_hostkit import Budget, Call, Deadline, with_size
from bee_hostkit.results import piece_bytes

if TYPE_CHECKING:
    from bee_contracts.shapes.core import ArtifactSearchArgs, ArtifactSearchResult


def _named(store: ArtifactStore, ids: list[str]) -> list[Target]:
    """The targets ``ids`` names, in that order.

    Raises:
        BeeError: ``not_found``; ``internal`` (not retryable) for a damaged record; ``unsupported`` for a binary one.
    """
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


def _search_store(
    store: ArtifactStore,
    ids: list[str] | None,
    text: str,
    *,
    offset: int,
    limit: int,
    cache: SearchCache,
    deadline: Deadline,
) -> tuple[list[Target], int, SearchOutcome]:
    """Search the named artifacts, or every sound text artifact; returns the targets, damaged records skipped, and
    the outcome.

    An artifact whose bytes vanish during the search was removed (`bee artifact rm` deletes the record first): over
    all artifacts it is left out and the search runs again over the rest (what was learned is cached, so that costs
    little); a named one is ``not_found``. One removed and added again is searched in its new form.

    Raises:
        BeeError: as :func:`_named` and :func:`~bee_core.artifacts.search.search`; ``hash_mismatch`` for bytes lost
            behind Bee's back.
    """
    if ids is None:
        listing = store.list()
        targets = [Target(record, store.blob_path(record)) for record in listing.records if record.is_text]
        damaged = len(listing.damaged)
    else:
        targets, damaged = _named(store, ids), 0
    while True:
        try:
            outcome = search(
                targets, text, offset=offset, limit=limit, cache=cache, verifier=store.verifier, deadline=deadline
            )
            return targets, damaged, outcome
        except BytesMissing as missing:
            current = store.recheck(missing.record)
            if current is None and ids is not None:
                raise store.not_found(missing.record.id) from None
            at = next(i for i, target in enumerate(targets) if target.record == missing.record)
            if current is None:
                del targets[at]
            else:
                targets[at] = Target(current, store.blob_path(current))
            deadline.check("searching artifacts")  # each round follows an rm or add: bounded by the deadline


def _result(
    text: str, outcome: SearchOutcome, *, searched: int, damaged: int, offset: int, limit: int
) -> ArtifactSearchResult:
    total = outcome.total
    returned = len(outcome.page)
    following = offset + returned
    return {
        "text": text,
        "totalMatches": total,
        "artifactsSearched": searched,
        "counts": [{"id": r.id, "name": r.name, "matches": count} for r, count in outcome.counts if count],
        "damagedSkipped": damaged,
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
            for an unknown id (or one removed during the call); ``internal`` (not retryable) for a named id whose
            record is damaged; ``unsupported`` for a binary one; ``hash_mismatch`` for an artifact changed on disk;
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
    targets, damaged, outcome = _search_store(
        store, args.get("ids"), text, offset=offset, limit=limit, cache=ctx.artifacts.search, deadline=deadline
    )
    result = _result(text, outcome, searched=len(targets), damaged=damaged, offset=offset, limit=limit)
    return _fit(result, budget)
