"""The artifact tools stay available: a damaged record is skipped or refused on its own, never blocking the rest,
and an artifact removed with `bee artifact rm` during a call is gone — never a false ``hash_mismatch``.

The races are provoked deterministically: the real removal (record, then bytes) runs at each point of a call where a
file is opened or checked, by wrapping that step.
"""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from bee_contracts import BeeError, ErrorCode
from bee_contracts.shapes.core import (
    ArtifactQueryArgs,
    ArtifactQueryResult,
    ArtifactReadArgs,
    ArtifactReadResult,
    ArtifactSearchArgs,
    ArtifactSearchResult,
)
from bee_core.artifacts import ripgrep
from bee_core.artifacts import search as search_module
from bee_core.artifacts.records import ArtifactRecord
from bee_core.context import CoreContext
from bee_core.handlers.artifact_query import bee_artifact_query
from bee_core.handlers.artifact_read import bee_artifact_read
from bee_core.handlers.artifact_search import bee_artifact_search
from bee_hostkit import Call, Deadline
from tests.core.artifacts_helpers import add, add_elsewhere, blob, damage, initialised, rm_elsewhere, tamper


@pytest.fixture
def ctx(tmp_path: Path) -> CoreContext:
    return initialised(tmp_path)


def search(ctx: CoreContext, text: str, ids: list[str] | None = None) -> ArtifactSearchResult:
    args = {"text": text, "offset": 0, "limit": 20, "budgetBytes": 262144} | ({"ids": ids} if ids else {})
    return bee_artifact_search(ctx, Call("bee_artifact_search", cast(ArtifactSearchArgs, args), Deadline(30)))


def read(ctx: CoreContext, artifact: str) -> ArtifactReadResult:
    args = {"id": artifact, "offsetBytes": 0, "lengthBytes": 65536}
    return bee_artifact_read(ctx, Call("bee_artifact_read", cast(ArtifactReadArgs, args), Deadline(30)))


def query(ctx: CoreContext, artifact: str) -> ArtifactQueryResult:
    args = {"id": artifact, "queryJson": "{}", "budgetBytes": 262144}
    return bee_artifact_query(ctx, Call("bee_artifact_query", cast(ArtifactQueryArgs, args), Deadline(30)))


def failure(call: Callable[..., object], *args: Any) -> BeeError:
    with pytest.raises(BeeError) as info:
        call(*args)
    return info.value


@pytest.fixture
def three(ctx: CoreContext) -> list[ArtifactRecord]:
    """Three text artifacts that all match "hit", oldest first."""
    return [add(ctx, f"log{i}", b"hit %d\nmiss\n" % i) for i in range(3)]


# -- damaged records ---------------------------------------------------------------------------------------------


def test_a_search_over_all_artifacts_skips_a_damaged_record_and_says_so(
    ctx: CoreContext, three: list[ArtifactRecord]
) -> None:
    damage(ctx, three[1])
    result = search(ctx, "hit")
    assert result["damagedSkipped"] == 1 and result["artifactsSearched"] == 2
    assert [count["id"] for count in result["counts"]] == [three[0].id, three[2].id]
    assert result["totalMatches"] == 2
    assert search(ctx, "hit", ids=[three[0].id])["damagedSkipped"] == 0


def test_a_sound_store_skips_nothing(ctx: CoreContext, three: list[ArtifactRecord]) -> None:
    assert search(ctx, "hit")["damagedSkipped"] == 0


@pytest.mark.parametrize("tool", ["search", "read", "query"])
def test_naming_a_damaged_artifact_is_an_internal_error_that_is_not_retryable(
    ctx: CoreContext, three: list[ArtifactRecord], tool: str
) -> None:
    path = damage(ctx, three[1])
    call: Callable[[], object] | None = {"search": lambda: search(ctx, "hit", ids=[three[0].id, three[1].id])}.get(tool)
    call = call or (lambda: {"read": read, "query": query}[tool](ctx, three[1].id))
    error = failure(call)
    assert error.code is ErrorCode.INTERNAL and error.retryable is False
    assert str(path) in error.message and "truncated" in error.message
    assert f"bee artifact rm {three[1].id}" in error.message
    assert error.details is not None
    assert error.details["id"] == three[1].id and error.details["recordFile"] == str(path)
    assert read(ctx, three[0].id)["sourceBytes"] == len(b"hit 0\nmiss\n")


# -- rm during a call ----------------------------------------------------------------------------------------------


def _removing_before(
    monkeypatch: pytest.MonkeyPatch, ctx: CoreContext, owner: object, name: str, victim: ArtifactRecord
) -> list[bool]:
    """Wrap ``owner.name`` so that the victim is removed (really, by another store) just before its first call."""
    real = getattr(owner, name)
    done: list[bool] = []

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not done:
            done.append(True)
            rm_elsewhere(ctx, victim)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapped)
    return done


STAGES: dict[str, Callable[[CoreContext], tuple[object, str]]] = {
    # the bytes vanish between the listing of records and their verification
    "verify": lambda ctx: (ctx.artifacts.verifier, "check"),
    # while ripgrep lists matching lines (it fails on the missing file)
    "listing": lambda ctx: (ripgrep, "listing"),
    # before the page's lines are read from the artifact
    "page": lambda ctx: (search_module, "_page_lines"),
    # after the search, before the final check that nothing changed
    "recheck": lambda ctx: (ctx.artifacts.verifier, "still"),
}


@pytest.mark.parametrize("stage", STAGES)
def test_an_artifact_removed_during_a_search_over_all_is_left_out(
    ctx: CoreContext, three: list[ArtifactRecord], monkeypatch: pytest.MonkeyPatch, stage: str
) -> None:
    owner, name = STAGES[stage](ctx)
    done = _removing_before(monkeypatch, ctx, owner, name, three[0])
    result = search(ctx, "hit")
    assert done, "the removal never ran: the stage was not reached"
    assert [count["id"] for count in result["counts"]] == [three[1].id, three[2].id]
    assert result["totalMatches"] == 2 and result["artifactsSearched"] == 2
    assert [match["line"] for match in result["matches"]] == ["hit 1", "hit 2"]


@pytest.mark.parametrize("stage", STAGES)
def test_an_artifact_named_and_removed_during_a_search_is_not_found(
    ctx: CoreContext, three: list[ArtifactRecord], monkeypatch: pytest.MonkeyPatch, stage: str
) -> None:
    owner, name = STAGES[stage](ctx)
    _removing_before(monkeypatch, ctx, owner, name, three[0])
    error = failure(search, ctx, "hit", [three[0].id, three[1].id])
    assert error.code is ErrorCode.NOT_FOUND and three[0].id in error.message


def test_an_artifact_removed_and_added_again_during_a_search_is_searched_in_its_new_form(
    ctx: CoreContext, three: list[ArtifactRecord], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = ripgrep.listing
    rounds = []

    def racing(*args: Any, **kwargs: Any) -> Any:
        rounds.append(True)
        if len(rounds) > 1:
            return real(*args, **kwargs)
        rm_elsewhere(ctx, three[0])
        try:
            return real(*args, **kwargs)  # ripgrep fails on the missing file ...
        finally:
            add_elsewhere(ctx, "log0 again", b"hit 0\nmiss\n")  # ... and the same bytes are back before we look

    monkeypatch.setattr(ripgrep, "listing", racing)
    result = search(ctx, "hit")
    assert len(rounds) == 2
    assert result["counts"][0] == {"id": three[0].id, "name": "log0 again", "matches": 1}
    assert result["totalMatches"] == 3


@pytest.mark.parametrize("tool", [read, query])
def test_an_artifact_removed_during_read_or_query_is_not_found(
    ctx: CoreContext, monkeypatch: pytest.MonkeyPatch, tool: Callable[[CoreContext, str], object]
) -> None:
    record = add(ctx, "rows.json", json.dumps([{"a": 1}]).encode())
    _removing_before(monkeypatch, ctx, ctx.artifacts.verifier, "read" if tool is read else "check", record)
    error = failure(tool, ctx, record.id)
    assert error.code is ErrorCode.NOT_FOUND and record.id in error.message


# -- what is still a hash mismatch ---------------------------------------------------------------------------------


def test_bytes_lost_while_the_record_stays_are_still_a_hash_mismatch(
    ctx: CoreContext, three: list[ArtifactRecord]
) -> None:
    blob(ctx, three[1]).unlink()
    for call in (lambda: search(ctx, "hit"), lambda: read(ctx, three[1].id)):
        error = failure(call)
        assert error.code is ErrorCode.HASH_MISMATCH and "missing" in error.message


def test_bytes_changed_while_a_search_runs_are_still_a_hash_mismatch(
    ctx: CoreContext, three: list[ArtifactRecord], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = ripgrep.listing

    def tampering(*args: Any, **kwargs: Any) -> Any:
        tamper(blob(ctx, three[0]), b"HIT 0\nmiss\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(ripgrep, "listing", tampering)
    error = failure(search, ctx, "hit")
    assert error.code is ErrorCode.HASH_MISMATCH and three[0].id in error.message
