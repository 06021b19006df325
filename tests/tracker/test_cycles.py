"""Cycles refused: no cycle through any mix of the dependency types that decide readiness."""

import pytest

from bee_tracker.store import SqlStore
from tests.tracker.calls import call, new, refused


def ready_ids(store: SqlStore) -> set[str]:
    return {issue["id"] for issue in call(store, "ready", limit=100)["issues"]}


def test_blocks_then_parent_child_back_is_refused_and_spelled_out(store: SqlStore) -> None:
    a, b = new(store, "A"), new(store, "B")
    call(store, "link", id=a, target=b)  # A blocks-on B
    error = refused(store, "invalid_argument", "link", id=b, target=a, type="parent-child")
    assert error.details is not None
    assert error.details["cycle"] == [b, a, b]
    assert error.details["edges"] == [
        {"id": b, "type": "parent-child", "target": a},
        {"id": a, "type": "blocks", "target": b},
    ]
    assert f"{b} -[parent-child]-> {a} -[blocks]-> {b}" in error.message
    assert b in ready_ids(store)  # nothing was linked: B is still ready


def test_a_longer_mixed_cycle_is_refused(store: SqlStore) -> None:
    a, b, c, d = (new(store, name) for name in "ABCD")
    call(store, "link", id=a, target=b, type="blocks")
    call(store, "link", id=b, target=c, type="waits-for")
    call(store, "link", id=c, target=d, type="conditional-blocks")
    error = refused(store, "invalid_argument", "link", id=d, target=a, type="parent-child")
    assert error.details is not None
    assert error.details["cycle"] == [d, a, b, c, d]
    assert [edge["type"] for edge in error.details["edges"]] == [
        "parent-child",
        "blocks",
        "waits-for",
        "conditional-blocks",
    ]
    assert d in ready_ids(store)


@pytest.mark.parametrize("kind", ["related", "discovered-from", "follows"])
def test_links_that_do_not_decide_readiness_may_close_a_loop(store: SqlStore, kind: str) -> None:
    a, b = new(store, "A"), new(store, "B")
    call(store, "link", id=a, target=b)
    assert call(store, "link", id=b, target=a, type=kind)["changed"] is True


def test_a_new_issue_never_takes_an_id_something_already_depends_on(store: SqlStore) -> None:
    # An imported issue may depend on ids that do not exist yet; a new issue taking one of them would inherit
    # that dependent, and creating it as a child of that dependent would close a cycle.
    store.import_lines(
        [
            '{"id":"t-p","title":"parent","status":"open","priority":2,"issue_type":"epic",'
            '"dependencies":[{"issue_id":"t-p","depends_on_id":"t-p.1","type":"blocks"}]}'
        ]
    )
    child = new(store, "child", parent="t-p")
    assert child == "t-p.2"
    assert call(store, "get", id=child)["dependents_count"] == 0
    assert "t-p" in ready_ids(store)  # its blocker t-p.1 still does not exist, so nothing waits on itself
