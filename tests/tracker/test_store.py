"""The store's promises, run against SQLite and PostgreSQL alike."""

import pytest

from bee_contracts import ErrorCode
from bee_tracker.store import Blocked, Conflict, Forbidden, Invalid, NotFound

ALICE, BOB = "alice@example.com", "bob@example.com"


def new(store, title="Task", actor=ALICE, **fields):
    return store.create(actor, {"title": title, **fields}, **{k: fields.pop(k) for k in ()})["id"]


def ready_ids(store, **filters):
    return [issue["id"] for issue in store.ready(**filters)["issues"]]


def test_create_get_round_trip(store):
    issue_id = store.create(
        ALICE, {"title": "Write docs", "description": "All of them", "priority": 1}, labels=["docs", "p1"]
    )["id"]
    assert issue_id.startswith("t-")
    got = store.get(issue_id)
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


def test_children_get_dotted_ids_and_parent_links(store):
    parent = new(store, "Epic", issue_type="epic")
    first = store.create(ALICE, {"title": "a"}, parent=parent)["id"]
    second = store.create(ALICE, {"title": "b"}, parent=parent)["id"]
    assert (first, second) == (f"{parent}.1", f"{parent}.2")
    assert {d["id"] for d in store.get(parent)["dependents"]} == {first, second}


def test_ready_respects_blockers_missing_targets_parents_deferral_and_types(store):
    blocker = new(store, "blocker")
    blocked = store.create(ALICE, {"title": "blocked"}, prerequisites=[blocker])["id"]
    conditional = new(store, "conditional")
    store.link(ALICE, conditional, blocker, "conditional-blocks")
    related = new(store, "related only")
    store.link(ALICE, related, blocker, "related")
    parent = new(store, "parent")
    store.link(ALICE, parent, blocker)
    child = store.create(ALICE, {"title": "child of blocked"}, parent=parent)["id"]
    grandchild = store.create(ALICE, {"title": "grandchild"}, parent=child)["id"]
    deferred = new(store, "later", defer_until="2999-01-01T00:00:00Z")
    gate = new(store, "a gate", issue_type="gate")
    ready = ready_ids(store)
    assert blocker in ready and related in ready
    for hidden in (blocked, conditional, parent, child, grandchild, deferred, gate):
        assert hidden not in ready
    store.complete(ALICE, blocker, summary="done")
    ready = ready_ids(store)
    assert {blocked, conditional, parent, related} <= set(ready)
    assert child in ready and grandchild in ready


def test_dependency_on_a_missing_id_does_not_block(store):
    store.import_lines(
        [
            '{"id":"t-x","title":"x","status":"open","priority":2,"issue_type":"task",'
            '"dependencies":[{"issue_id":"t-x","depends_on_id":"t-gone","type":"blocks"}]}'
        ]
    )
    assert "t-x" in ready_ids(store)


def test_ready_filters_and_order(store):
    low = new(store, "low", priority=3)
    high = new(store, "high", priority=0)
    tagged = store.create(ALICE, {"title": "tagged", "priority": 3}, labels=["backend", "api"])["id"]
    assert ready_ids(store)[0] == high
    assert ready_ids(store, priority=3) == [low, tagged]
    assert ready_ids(store, labels=["backend", "api"]) == [tagged]
    assert ready_ids(store, labels=["backend", "nope"]) == []
    page = store.ready(limit=1)
    assert len(page["issues"]) == 1 and page["has_more"] is True
    assert store.ready(limit=3)["has_more"] is False


def test_search_text_filters_and_closed(store):
    a = new(store, "Fix flaky login test", description="the OAuth callback races")
    b = new(store, "Write release notes")
    store.complete(ALICE, a, summary="fixed")
    found = store.search(text="oauth callback")
    assert [i["id"] for i in found["issues"]] == [a] and found["total"] == 1
    assert [i["id"] for i in store.search(text=b)["issues"]] == [b]  # an exact id matches
    assert [i["id"] for i in store.search(statuses=["closed"])["issues"]] == [a]
    assert store.search(text="release", statuses=["closed"])["total"] == 0
    assert store.search(text="(((  ***")["total"] == 0  # query syntax never reaches the index


def test_claim_is_exclusive_and_idempotent_for_the_holder(store):
    issue_id = new(store)
    first = store.claim(ALICE, issue_id)
    assert first["assignee"] == ALICE and first["status"] == "in_progress" and first["already_held"] is False
    again = store.claim(ALICE, issue_id)
    assert again["already_held"] is True and again["state_revision"] == first["state_revision"]
    with pytest.raises(Conflict) as info:
        store.claim(BOB, issue_id)
    assert info.value.code is ErrorCode.CONFLICT and info.value.details["assignee"] == ALICE


def test_release_verifies_ownership_and_records_the_reason(store):
    issue_id = new(store)
    store.claim(ALICE, issue_id)
    with pytest.raises(Forbidden):
        store.release(BOB, issue_id, reason="mine now")
    released = store.release(ALICE, issue_id, reason="blocked on review")
    assert released["assignee"] is None and released["status"] == "open"
    [comment] = store.get(issue_id)["issue"]["comments"]
    assert comment["text"] == "Released: blocked on review" and comment["author"] == ALICE


def test_release_is_one_transaction(store):
    issue_id = new(store)
    store.claim(ALICE, issue_id)
    revision = store.get(issue_id)["state_revision"]
    with pytest.raises(Conflict):
        store.release(ALICE, issue_id, reason="r", expected_revision=revision - 1)
    assert store.get(issue_id)["comment_count"] == 0  # the reason was not written either


def test_notes_are_activity_not_state(store):
    issue_id = new(store)
    before = store.get(issue_id)
    store.add_note(BOB, issue_id, "found the root cause")
    after = store.get(issue_id)
    assert after["state_revision"] == before["state_revision"]
    assert after["activity_revision"] == before["activity_revision"] + 1
    assert after["issue"]["comments"][0]["author"] == BOB


def test_update_with_expected_revision_is_compare_and_swap(store):
    issue_id = new(store)
    revision = store.get(issue_id)["state_revision"]
    store.update(ALICE, issue_id, {"priority": 0}, expected_revision=revision)
    with pytest.raises(Conflict) as info:
        store.update(BOB, issue_id, {"priority": 4}, expected_revision=revision)
    assert info.value.details["state_revision"] == revision + 1
    assert store.get(issue_id)["issue"]["priority"] == 0


def test_update_labels_and_vocabulary(store):
    issue_id = store.create(ALICE, {"title": "x"}, labels=["a", "b"])["id"]
    store.update(ALICE, issue_id, {}, add_labels=["c"], remove_labels=["a"])
    assert store.get(issue_id)["issue"]["labels"] == ["b", "c"]
    with pytest.raises(Invalid, match="status 'nonsense' is not known"):
        store.update(ALICE, issue_id, {"status": "nonsense"})
    with pytest.raises(Invalid, match="issue_type 'saga' is not known"):
        store.update(ALICE, issue_id, {"issue_type": "saga"})
    store.register(statuses=["review"], types=["saga"])
    store.update(ALICE, issue_id, {"status": "review", "issue_type": "saga"})
    with pytest.raises(Invalid, match="complete tool"):
        store.update(ALICE, issue_id, {"status": "closed"})


def test_link_refuses_self_cycles_and_unknown_targets(store):
    a, b, c = new(store, "a"), new(store, "b"), new(store, "c")
    with pytest.raises(Invalid, match="cannot depend on itself"):
        store.link(ALICE, a, a)
    store.link(ALICE, a, b)
    store.link(ALICE, b, c)
    with pytest.raises(Invalid) as info:
        store.link(ALICE, c, a)
    assert info.value.details["cycle"] == [c, a, b, c]
    store.link(ALICE, c, a, "related")  # only blocking links form cycles
    with pytest.raises(NotFound):
        store.link(ALICE, a, "t-nope")
    assert store.link(ALICE, a, b)["changed"] is False
    store.link(ALICE, a, b, remove=True)
    with pytest.raises(NotFound):
        store.link(ALICE, a, b, remove=True)


def test_complete_refuses_blockers_children_gates_and_others_claims(store):
    blocker = new(store, "blocker")
    issue_id = store.create(ALICE, {"title": "x"}, prerequisites=[blocker])["id"]
    with pytest.raises(Blocked) as info:
        store.complete(ALICE, issue_id, summary="done")
    assert info.value.details["blockers"] == [blocker]
    epic = new(store, "epic")
    child = store.create(ALICE, {"title": "child"}, parent=epic)["id"]
    with pytest.raises(Blocked) as info:
        store.complete(ALICE, epic)
    assert info.value.details["children"] == [child]
    gate = new(store, "approval", issue_type="gate")
    gated = new(store, "gated")
    store.link(ALICE, gated, gate, "related")
    with pytest.raises(Blocked) as info:
        store.complete(ALICE, gated)
    assert info.value.details["gates"] == [gate]
    store.claim(BOB, child)
    with pytest.raises(Forbidden):
        store.complete(ALICE, child)
    done = store.complete(BOB, child, summary="did it", evidence="pytest -q: 12 passed")
    assert done["status"] == "closed"
    got = store.get(child)["issue"]
    assert got["close_reason"] == "did it" and got["closed_at"]
    assert got["comments"][-1]["text"] == "Evidence: pytest -q: 12 passed"
    store.complete(ALICE, epic)
    with pytest.raises(Conflict, match="already closed"):
        store.complete(ALICE, epic)


def test_handoff_with_release_is_one_transaction(store):
    issue_id = new(store)
    store.claim(ALICE, issue_id)
    result = store.handoff(ALICE, issue_id, done="parser", remaining="tests", next_step="write tests", release=True)
    assert result["released"] is True and result["assignee"] is None and result["status"] == "open"
    assert result["comment"]["text"] == "Handoff\nDone: parser\nRemaining: tests\nNext: write tests"
    other = new(store)
    store.claim(ALICE, other)
    with pytest.raises(Forbidden):
        store.handoff(BOB, other, done="x", remaining=None, next_step=None, release=True)
    assert store.get(other)["comment_count"] == 0


def test_idempotency_key_replays_the_first_outcome(store):
    first = store.create(ALICE, {"title": "once"}, idempotency_key="key-0001")
    again = store.create(ALICE, {"title": "once"}, idempotency_key="key-0001")
    assert again["id"] == first["id"] and again["replayed"] is True
    assert store.search(text="once")["total"] == 1
    with pytest.raises(Conflict, match="different"):
        store.create(ALICE, {"title": "other"}, idempotency_key="key-0001")
    # Keys are per actor.
    assert store.create(BOB, {"title": "once"}, idempotency_key="key-0001")["id"] != first["id"]


def test_unknown_ids(store):
    for call in (
        lambda: store.get("t-none"),
        lambda: store.claim(ALICE, "t-none"),
        lambda: store.add_note(ALICE, "t-none", "x"),
        lambda: store.create(ALICE, {"title": "x"}, parent="t-none"),
        lambda: store.create(ALICE, {"title": "x"}, prerequisites=["t-none"]),
    ):
        with pytest.raises(NotFound):
            call()
