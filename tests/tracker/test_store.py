"""The store's promises, run against SQLite and PostgreSQL alike, through the tools as the host calls them."""

from typing import Any

import pytest

from bee_contracts import ErrorCode
from bee_tracker.store import SqlStore
from bee_tracker.store.readiness import Rule
from tests.tracker.calls import ALICE, BOB, call, created_second, new, refused


def ready_ids(store: SqlStore, **filters: Any) -> list[str]:
    return [issue["id"] for issue in call(store, "ready", **filters)["issues"]]


def test_create_get_round_trip(store: SqlStore) -> None:
    issue_id = new(store, "Write docs", description="All of them", priority=1, labels=["docs", "p1"])
    assert issue_id.startswith("t-")
    got = call(store, "get", id=issue_id)
    issue = got["issue"]
    assert (issue["title"], issue["priority"], issue["status"], issue["issue_type"]) == (
        "Write docs",
        1,
        "open",
        "task",
    )
    assert issue["labels"] == ["docs", "p1"] and issue["created_by"] == ALICE
    assert (got["state_revision"], got["activity_revision"]) == (1, 1)
    assert got["last_activity_at"] and got["comment_count"] == 0


def test_children_get_dotted_ids_and_parent_links(store: SqlStore) -> None:
    parent = new(store, "Epic", issue_type="epic")
    first = new(store, "a", parent=parent)
    second = new(store, "b", parent=parent)
    assert (first, second) == (f"{parent}.1", f"{parent}.2")
    got = call(store, "get", id=parent)
    assert {d["id"] for d in got["dependents"]} == {first, second} and got["dependents_count"] == 2


def test_ready_respects_blockers_missing_targets_parents_deferral_and_types(store: SqlStore) -> None:
    blocker = new(store, "blocker")
    blocked = new(store, "blocked", prerequisites=[blocker])
    conditional = new(store, "conditional")
    call(store, "link", id=conditional, target=blocker, type="conditional-blocks")
    related = new(store, "related only")
    call(store, "link", id=related, target=blocker, type="related")
    parent = new(store, "parent")
    call(store, "link", id=parent, target=blocker)
    child = new(store, "child of blocked", parent=parent)
    grandchild = new(store, "grandchild", parent=child)
    deferred = new(store, "later")
    call(store, "update", id=deferred, defer_until="2999-01-01T00:00:00Z")
    gate = new(store, "a gate", issue_type="gate")
    ready = ready_ids(store)
    assert blocker in ready and related in ready
    assert grandchild in ready  # a blocked issue holds back its direct children only, as in Beads
    for hidden in (blocked, conditional, parent, child, deferred, gate):
        assert hidden not in ready
    assert call(store, "get", id=child)["blocked_by"] == [parent]
    assert call(store, "get", id=grandchild)["blocked_by"] == []
    assert store.set_rule(Rule(transitive=True)) is True  # the store's stricter option: every descendant waits
    assert grandchild not in ready_ids(store)
    assert call(store, "get", id=grandchild)["blocked_by"] == [child] and not call(store, "get", id=grandchild)["ready"]
    call(store, "complete", id=blocker, summary="done")
    ready = ready_ids(store)
    assert {blocked, conditional, parent, related} <= set(ready)
    assert child in ready and grandchild in ready


def test_dependency_on_a_missing_id_does_not_block(store: SqlStore) -> None:
    store.import_lines(
        [
            '{"id":"t-x","title":"x","status":"open","priority":2,"issue_type":"task",'
            '"dependencies":[{"issue_id":"t-x","depends_on_id":"t-gone","type":"blocks"}]}'
        ]
    )
    assert "t-x" in ready_ids(store)


def test_ready_filters_and_order(store: SqlStore) -> None:
    low = new(store, "low", priority=3)
    high = new(store, "high", priority=0)
    tagged = new(store, "tagged", priority=3, labels=["backend", "api"])
    assert ready_ids(store)[0] == high
    # Newest first within a priority, by the whole second Beads keeps, then id, as bd ready (both were created now).
    third = sorted([tagged, low], key=lambda issue_id: (-created_second(store, issue_id), issue_id))
    assert ready_ids(store, priority=3) == third
    assert ready_ids(store, labels=["backend", "api"]) == [tagged]
    assert ready_ids(store, labels=["backend", "nope"]) == []
    page = call(store, "ready", limit=1)
    assert len(page["issues"]) == 1 and page["has_more"] is True and page["total"] == 3
    assert call(store, "ready", limit=3)["has_more"] is False
    rest = call(store, "ready", limit=1, offset=1)
    assert [i["id"] for i in rest["issues"]] == third[:1] and rest["offset"] == 1 and rest["has_more"] is True
    assert call(store, "ready", offset=3) == {"issues": [], "total": 3, "offset": 3, "has_more": False}


def test_search_text_filters_and_closed(store: SqlStore) -> None:
    a = new(store, "Fix flaky login test", description="the OAuth callback races")
    b = new(store, "Write release notes")
    call(store, "complete", id=a, summary="fixed")
    found = call(store, "search", query="oauth callback")
    assert [i["id"] for i in found["issues"]] == [a] and found["total"] == 1
    assert [i["id"] for i in call(store, "search", query=b)["issues"]] == [b]  # an exact id matches
    assert [i["id"] for i in call(store, "search", status=["closed"])["issues"]] == [a]
    assert call(store, "search", query="release", status=["closed"])["total"] == 0
    assert call(store, "search", query="(((  ***")["total"] == 0  # query syntax never reaches the index
    beyond = call(store, "search", offset=2**53 - 1)  # the largest offset a call may carry
    assert beyond["issues"] == [] and beyond["total"] == 2 and beyond["offset"] == 2**53 - 1


def test_claim_is_exclusive_and_idempotent_for_the_holder(store: SqlStore) -> None:
    issue_id = new(store)
    first = call(store, "claim", id=issue_id)
    assert first["assignee"] == ALICE and first["status"] == "in_progress" and first["already_held"] is False
    again = call(store, "claim", id=issue_id)
    assert again["already_held"] is True and again["state_revision"] == first["state_revision"]
    error = refused(store, "conflict", "claim", BOB, id=issue_id)
    assert error.details is not None
    assert error.code is ErrorCode.CONFLICT and error.details["assignee"] == ALICE and ALICE in error.message


def test_release_verifies_ownership_and_records_the_reason(store: SqlStore) -> None:
    issue_id = new(store)
    call(store, "claim", id=issue_id)
    refused(store, "forbidden", "release", BOB, id=issue_id, reason="mine now")
    released = call(store, "release", id=issue_id, reason="blocked on review")
    assert released["assignee"] is None and released["status"] == "open"
    [comment] = call(store, "get", id=issue_id)["issue"]["comments"]
    assert comment["text"] == "Released: blocked on review" and comment["author"] == ALICE


def test_release_is_one_transaction(store: SqlStore) -> None:
    issue_id = new(store)
    call(store, "claim", id=issue_id)
    revision = call(store, "get", id=issue_id)["state_revision"]
    refused(store, "conflict", "release", id=issue_id, reason="r", expected_revision=revision - 1)
    assert call(store, "get", id=issue_id)["comment_count"] == 0  # the reason was not written either


def test_notes_are_activity_not_state(store: SqlStore) -> None:
    issue_id = new(store)
    before = call(store, "get", id=issue_id)
    call(store, "add_note", BOB, id=issue_id, text="found the root cause")
    after = call(store, "get", id=issue_id)
    assert after["state_revision"] == before["state_revision"]
    assert after["activity_revision"] == before["activity_revision"] + 1
    assert after["issue"]["comments"][0]["author"] == BOB


def test_update_with_expected_revision_is_compare_and_swap(store: SqlStore) -> None:
    issue_id = new(store)
    revision = call(store, "get", id=issue_id)["state_revision"]
    call(store, "update", id=issue_id, priority=0, expected_revision=revision)
    error = refused(store, "conflict", "update", BOB, id=issue_id, priority=4, expected_revision=revision)
    assert error.details is not None
    assert error.details["state_revision"] == revision + 1
    assert call(store, "get", id=issue_id)["issue"]["priority"] == 0


def test_an_update_that_changes_nothing_bumps_nothing(store: SqlStore) -> None:
    issue_id = new(store, "same", priority=1)
    before = call(store, "get", id=issue_id)
    call(store, "update", id=issue_id, title="same", priority=1)
    after = call(store, "get", id=issue_id)
    assert (after["state_revision"], after["history_count"]) == (before["state_revision"], before["history_count"])


def test_update_labels_and_vocabulary(store: SqlStore) -> None:
    issue_id = new(store, "x", labels=["a", "b"])
    call(store, "update", id=issue_id, add_labels=["c"], remove_labels=["a"])
    assert call(store, "get", id=issue_id)["issue"]["labels"] == ["b", "c"]
    unknown_status = refused(store, "invalid_argument", "update", id=issue_id, status="nonsense")
    assert "status 'nonsense' is not known" in unknown_status.message
    unknown_type = refused(store, "invalid_argument", "update", id=issue_id, issue_type="saga")
    assert "issue_type 'saga' is not known" in unknown_type.message
    store.register(statuses=["review"], types=["saga"])
    call(store, "update", id=issue_id, status="review", issue_type="saga")
    assert "complete tool" in refused(store, "invalid_argument", "update", id=issue_id, status="closed").message
    assert "nothing to update" in refused(store, "invalid_argument", "update", id=issue_id).message


def test_link_refuses_self_unknown_targets_and_removes(store: SqlStore) -> None:
    a, b = new(store, "a"), new(store, "b")
    assert "cannot depend on itself" in refused(store, "invalid_argument", "link", id=a, target=a).message
    call(store, "link", id=a, target=b)
    refused(store, "not_found", "link", id=a, target="t-nope")
    assert call(store, "link", id=a, target=b)["changed"] is False
    call(store, "link", id=a, target=b, action="remove")
    refused(store, "not_found", "link", id=a, target=b, action="remove")


def test_complete_refuses_blockers_children_gates_and_others_claims(store: SqlStore) -> None:
    blocker = new(store, "blocker")
    issue_id = new(store, "x", prerequisites=[blocker])
    blocked = refused(store, "blocked", "complete", id=issue_id, summary="done")
    assert blocked.details is not None and blocked.details["blockers"] == [blocker]
    epic = new(store, "epic")
    child = new(store, "child", parent=epic)
    with_children = refused(store, "blocked", "complete", id=epic)
    assert with_children.details is not None and with_children.details["children"] == [child]
    gate = new(store, "approval", issue_type="gate")
    gated = new(store, "gated")
    call(store, "link", id=gated, target=gate, type="related")
    with_gate = refused(store, "blocked", "complete", id=gated)
    assert with_gate.details is not None and with_gate.details["gates"] == [gate]
    call(store, "claim", BOB, id=child)
    refused(store, "forbidden", "complete", id=child)
    done = call(store, "complete", BOB, id=child, summary="did it", evidence="pytest -q: 12 passed")
    assert done["status"] == "closed"
    got = call(store, "get", id=child)["issue"]
    assert got["close_reason"] == "did it" and got["closed_at"]
    assert got["comments"][-1]["text"] == "Evidence: pytest -q: 12 passed"
    call(store, "complete", id=epic)
    assert "already closed" in refused(store, "conflict", "complete", id=epic).message


def test_handoff_with_release_is_one_transaction(store: SqlStore) -> None:
    issue_id = new(store)
    call(store, "claim", id=issue_id)
    result = call(store, "handoff", id=issue_id, done="parser", remaining="tests", next="write tests", release=True)
    assert result["released"] is True and result["assignee"] is None and result["status"] == "open"
    assert result["comment"]["text"] == "Handoff\nDone: parser\nRemaining: tests\nNext: write tests"
    other = new(store)
    call(store, "claim", id=other)
    refused(store, "forbidden", "handoff", BOB, id=other, done="x", release=True)
    assert call(store, "get", id=other)["comment_count"] == 0
    assert "at least one of" in refused(store, "invalid_argument", "handoff", id=other).message


def test_idempotency_key_replays_the_first_outcome(store: SqlStore) -> None:
    first = call(store, "create", title="once", idempotency_key="key-0001")
    again = call(store, "create", title="once", idempotency_key="key-0001", actor="ignored@example.com")
    assert again["id"] == first["id"] and again["replayed"] is True
    assert call(store, "search", query="once")["total"] == 1
    assert "different" in refused(store, "conflict", "create", title="other", idempotency_key="key-0001").message
    # Keys are per actor.
    assert call(store, "create", BOB, title="once", idempotency_key="key-0001")["id"] != first["id"]


def test_unknown_ids(store: SqlStore) -> None:
    for tool, args in (
        ("get", {"id": "t-none"}),
        ("claim", {"id": "t-none"}),
        ("add_note", {"id": "t-none", "text": "x"}),
        ("create", {"title": "x", "parent": "t-none"}),
        ("create", {"title": "x", "prerequisites": ["t-none"]}),
    ):
        refused(store, "not_found", tool, **args)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("create", {"title": "nul \x00 inside"}),
        ("create", {"title": "lone \ud800 surrogate"}),
        ("search", {"query": "nul \x00"}),
        ("add_note", {"id": "t-x", "text": "\udfff"}),
    ],
)
def test_text_the_store_cannot_hold_is_invalid_not_internal(store: SqlStore, tool: str, args: dict[str, Any]) -> None:
    error = refused(store, "invalid_argument", tool, **args)
    assert "cannot store" in error.message


def test_concurrent_retries_with_one_idempotency_key_act_once_and_all_get_the_first_answer(store: SqlStore) -> None:
    import threading

    answers: list[dict[str, Any]] = []
    failures: list[BaseException] = []
    start = threading.Barrier(8)

    def retry() -> None:
        start.wait()
        try:
            answers.append(call(store, "create", ALICE, title="Once", idempotency_key="same-key"))
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=retry) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures, failures
    assert len({answer["id"] for answer in answers}) == 1
    assert sum(1 for answer in answers if not answer.get("replayed")) == 1
    assert call(store, "search", ALICE, query="Once")["total"] == 1
