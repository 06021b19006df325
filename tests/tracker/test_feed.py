"""The change feed a host listens on: after each committed write, which issues changed and how."""

import logging

import pytest

from bee_tracker import calls
from bee_tracker.store import SqlStore
from bee_tracker.store.feed import Change, Committed
from tests.tracker.calls import ALICE, BOB, call, new, refused
from tests.tracker.test_claim_leases import expired_claim


class Heard:
    """A listener that keeps what it hears."""

    def __init__(self, store: SqlStore) -> None:
        self.batches: list[Committed] = []
        self.stop = store.feed.subscribe(self.batches.append)

    def last(self) -> dict[str, set[str]]:
        """What the last batch says of each issue, with ``ready`` when the issue is ready now."""
        return {c.issue_id: {*c.changes, *(["ready"] if c.ready else [])} for c in self.batches[-1].issues}


def test_a_claim_is_heard_with_who_where_and_what_it_did_to_ready(store: SqlStore) -> None:
    issue_id = new(store)
    heard = Heard(store)
    call(store, "claim", BOB, id=issue_id)
    [batch] = heard.batches
    assert (batch.tool, batch.actor, batch.replica, batch.leases_changed) == ("claim", BOB, store.replica, False)
    assert heard.last() == {issue_id: {Change.CLAIMED, Change.LEFT_READY}}
    call(store, "release", BOB, id=issue_id)
    assert heard.last() == {issue_id: {Change.RELEASED, Change.BECAME_READY, "ready"}}


def test_creating_and_noting_are_heard(store: SqlStore) -> None:
    heard = Heard(store)
    issue_id = new(store)
    assert heard.last() == {issue_id: {Change.CREATED, Change.BECAME_READY, "ready"}}
    call(store, "add_note", BOB, id=issue_id, text="hi")
    assert heard.last() == {issue_id: {Change.COMMENTED, "ready"}}


def test_closing_a_blocker_and_a_child_is_heard_by_who_waited(store: SqlStore) -> None:
    epic = new(store, "epic", issue_type="epic")
    blocker = new(store, "blocker", parent=epic)
    waiting = new(store, "waiting", prerequisites=[blocker])
    busy = new(store, "busy", prerequisites=[blocker])
    call(store, "claim", BOB, id=busy)  # in progress: its blocker closing does not make it ready
    heard = Heard(store)
    call(store, "complete", ALICE, id=blocker, summary="done")
    assert heard.last() == {
        blocker: {Change.COMPLETED, Change.LEFT_READY},
        waiting: {Change.BLOCKER_CLOSED, Change.BECAME_READY, "ready"},
        busy: {Change.BLOCKER_CLOSED},
        epic: {Change.CHILD_CLOSED, "ready"},
    }
    call(store, "update", ALICE, id=blocker, status="open")  # reopened: it blocks again
    assert heard.last() == {blocker: {Change.REOPENED, Change.BECAME_READY, "ready"}, waiting: {Change.LEFT_READY}}


def test_leases_and_their_expiry_are_heard(store: SqlStore) -> None:
    heard = Heard(store)
    issue_id, _ = expired_claim(store)
    granting = heard.batches[-1]
    assert granting.leases_changed and Change.LEASE in granting.issues[0].changes
    call(store, "claim", BOB, id=issue_id, lease_seconds=600)
    assert heard.batches[-1].leases_changed
    assert heard.last() == {issue_id: {Change.RECLAIMED, Change.CLAIMED, Change.LEASE, Change.LEFT_READY}}
    call(store, "claim", BOB, id=issue_id)  # a renewal changes nothing but the lease
    assert heard.last() == {issue_id: {Change.LEASE}} and heard.batches[-1].leases_changed


def test_a_refused_write_is_not_heard_and_a_failing_listener_stops_nothing(
    store: SqlStore, caplog: pytest.LogCaptureFixture
) -> None:
    issue_id = new(store)
    call(store, "claim", BOB, id=issue_id)
    heard = Heard(store)

    def broken(_: Committed) -> None:
        raise RuntimeError("listener bug")

    store.feed.subscribe(broken)
    refused(store, "conflict", "claim", ALICE, id=issue_id)
    assert heard.batches == []
    with caplog.at_level(logging.ERROR, logger="bee.tracker.feed"):
        calls.release_forced(store, issue_id, actor="operator:root", reason="gone")
    assert heard.last() == {issue_id: {Change.RELEASED, Change.COMMENTED, Change.BECAME_READY, "ready"}}
    assert "a change-feed listener failed" in caplog.text
    assert call(store, "get", BOB, id=issue_id)["issue"]["status"] == "open"
    heard.stop()
    new(store)
    assert len(heard.batches) == 1


def test_complete_claiming_the_next_is_one_batch(store: SqlStore) -> None:
    first = new(store, "first")
    then = new(store, "then", prerequisites=[first])
    call(store, "claim", ALICE, id=first)
    heard = Heard(store)
    call(store, "complete", ALICE, id=first, claim_next=True)
    assert heard.last() == {first: {Change.COMPLETED}, then: {Change.BLOCKER_CLOSED, Change.CLAIMED}}
