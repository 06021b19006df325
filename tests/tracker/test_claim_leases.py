"""Claims that recover: a lease on a claim, kept alive by its holder, judged by the database's clock, reclaimable.

Leases here are a second long at most and the tests wait on the database's clock (``SqlStore.clock``) until it has
passed an expiry; nothing asserts how long anything took.
"""

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bee_tracker import calls
from bee_tracker.model import epoch
from bee_tracker.store import SqlStore, open_store
from tests.tracker.calls import ALICE, BOB, call, new, refused

CAROL = "carol@example.com"


#: The resolution of SQLite's clock (a time written with microseconds may stand for any instant of its millisecond).
_TICK = 0.002


def wait_past(store: SqlStore, expires_at: str) -> None:
    """Wait until the database's clock has passed ``expires_at`` (a lease's expiry), giving up after a minute."""
    when = epoch(expires_at)
    assert when is not None
    deadline = time.monotonic() + 60
    while store.clock() <= when + _TICK:
        assert time.monotonic() < deadline, f"the database's clock never passed {expires_at}"
        time.sleep(0.02)


def ready_ids(store: SqlStore, actor: str = CAROL) -> list[str]:
    return [issue["id"] for issue in call(store, "ready", actor)["issues"]]


def expired_claim(store: SqlStore, title: str = "stranded") -> tuple[str, str]:
    """An issue ALICE claimed with a one-second lease, now expired; its id and the lease's expiry."""
    issue_id = new(store, title)
    claimed = call(store, "claim", ALICE, id=issue_id, lease_seconds=1)
    wait_past(store, claimed["lease_expires_at"])
    return issue_id, claimed["lease_expires_at"]


def test_a_claim_has_no_lease_unless_asked_and_get_shows_who_holds_it(store: SqlStore) -> None:
    issue_id = new(store)
    claimed = call(store, "claim", ALICE, id=issue_id)
    assert (claimed["lease_seconds"], claimed["lease_expires_at"]) == (None, None)
    got = call(store, "get", BOB, id=issue_id)
    assert got["claim"] == {
        "holder": ALICE,
        "since": got["issue"]["started_at"],
        "lease_seconds": None,
        "lease_expires_at": None,
        "expired": False,
        "expires_in_seconds": None,
    }
    assert "lease_expires_at" not in got["issue"]
    assert "claim" not in call(store, "get", BOB, id=new(store, "nobody's"))


def test_a_leased_claim_shows_until_when_and_ready_offers_the_issue_once_it_expires(store: SqlStore) -> None:
    issue_id = new(store, "leased")
    claimed = call(store, "claim", ALICE, id=issue_id, lease_seconds=1)
    assert claimed["lease_seconds"] == 1 and claimed["lease_expires_at"]
    got = call(store, "get", BOB, id=issue_id)
    assert got["claim"]["lease_expires_at"] == claimed["lease_expires_at"] == got["issue"]["lease_expires_at"]
    assert got["ready"] is False and issue_id not in ready_ids(store)
    wait_past(store, claimed["lease_expires_at"])
    got = call(store, "get", BOB, id=issue_id)
    assert got["claim"]["expired"] is True and got["claim"]["expires_in_seconds"] <= 0
    assert got["ready"] is True
    assert issue_id in ready_ids(store)
    assert call(store, "ready", CAROL)["total"] == 1


def test_the_next_claim_takes_an_expired_claim_and_the_history_says_who_lost_it(store: SqlStore) -> None:
    issue_id, expired_at = expired_claim(store)
    taken = call(store, "claim", BOB, id=issue_id)
    assert (taken["claimed"], taken["already_held"], taken["assignee"]) == (True, False, BOB)
    assert taken["reclaimed_from"] == ALICE
    got = call(store, "get", BOB, id=issue_id)
    assert got["history"][-1]["actor"] == BOB
    assert got["history"][-1]["changes"]["reclaimed"] == {"from": ALICE, "expired_at": expired_at, "by": BOB}
    assert got["history"][-1]["changes"]["assignee"] == [ALICE, BOB]
    assert issue_id not in ready_ids(store)


def test_the_old_holders_writes_are_refused_naming_who_holds_it_now(store: SqlStore) -> None:
    issue_id, expired_at = expired_claim(store)
    call(store, "claim", BOB, id=issue_id)
    before = call(store, "get", BOB, id=issue_id)
    for tool, args in [
        ("add_note", {"text": "still on it"}),
        ("update", {"notes": "mine"}),
        ("complete", {"summary": "done"}),
        ("release", {}),
        ("handoff", {"done": "half"}),
        ("link", {"target": new(store, "other"), "type": "related"}),
    ]:
        error = refused(store, "conflict", tool, ALICE, id=issue_id, **args)
        assert "expired" in error.message and BOB in error.message, (tool, error.message)
        assert error.details is not None
        assert (error.details["holder"], error.details["expired_at"]) == (BOB, expired_at)
    after = call(store, "get", BOB, id=issue_id)
    assert (after["activity_revision"], after["comment_count"]) == (before["activity_revision"], 0)
    # Anyone else writes as before; once BOB's claim ends, ALICE may write again.
    call(store, "add_note", CAROL, id=issue_id, text="seen")
    call(store, "release", BOB, id=issue_id)
    call(store, "add_note", ALICE, id=issue_id, text="back")


def test_an_expired_holder_is_refused_before_anyone_takes_it_and_may_claim_it_again(store: SqlStore) -> None:
    issue_id, _ = expired_claim(store)
    error = refused(store, "conflict", "add_note", ALICE, id=issue_id, text="late")
    assert "Nobody holds the issue now" in error.message
    assert error.details is not None and error.details["holder"] is None
    again = call(store, "claim", ALICE, id=issue_id)
    assert (again["claimed"], again["already_held"], again["reclaimed_from"]) == (True, False, ALICE)
    call(store, "add_note", ALICE, id=issue_id, text="on it again")


def test_an_expired_claim_is_as_open_as_an_unclaimed_one(store: SqlStore) -> None:
    issue_id, expired_at = expired_claim(store)
    done = call(store, "complete", BOB, id=issue_id, summary="finished it myself")
    assert done["status"] == "closed"
    got = call(store, "get", BOB, id=issue_id)
    assert got["history"][-1]["changes"]["claim_expired"] == {"holder": ALICE, "at": expired_at}
    assert "claim" not in got and "lease_expires_at" not in got["issue"]


def test_claiming_again_renews_the_lease_and_may_change_its_length(store: SqlStore) -> None:
    issue_id = new(store)
    first = call(store, "claim", ALICE, id=issue_id, lease_seconds=1)
    longer = call(store, "claim", ALICE, id=issue_id, lease_seconds=3600)
    assert (longer["already_held"], longer["lease_seconds"]) == (True, 3600)
    wait_past(store, first["lease_expires_at"])
    assert call(store, "get", BOB, id=issue_id)["claim"]["expired"] is False
    assert issue_id not in ready_ids(store)
    error = refused(store, "conflict", "claim", BOB, id=issue_id)
    assert ALICE in error.message and longer["lease_expires_at"] in error.message


def test_any_write_of_the_holder_renews_its_lease(store: SqlStore) -> None:
    issue_id = new(store)
    call(store, "claim", ALICE, id=issue_id, lease_seconds=600)
    for tool, args in [("add_note", {"text": "progress"}), ("update", {"notes": "more"})]:
        got = call(store, "get", BOB, id=issue_id)
        before = got["claim"]["lease_expires_at"]
        wait_past(store, got["issue"]["heartbeat_at"])  # the database's clock moves on from the last renewal
        call(store, tool, ALICE, id=issue_id, **args)
        after = call(store, "get", BOB, id=issue_id)["claim"]["lease_expires_at"]
        assert epoch(after) > epoch(before), tool  # type: ignore[operator]
    # Someone else's write does not.
    before = call(store, "get", BOB, id=issue_id)["claim"]["lease_expires_at"]
    call(store, "add_note", BOB, id=issue_id, text="drive-by")
    assert call(store, "get", BOB, id=issue_id)["claim"]["lease_expires_at"] == before


@pytest.mark.parametrize("seconds", [0, 604801, -5])
def test_a_lease_out_of_bounds_is_refused_naming_the_bounds(store: SqlStore, seconds: int) -> None:
    issue_id = new(store)
    error = refused(store, "invalid_argument", "claim", ALICE, id=issue_id, lease_seconds=seconds)
    assert "lease_seconds" in error.message
    refused(store, "invalid_argument", "complete", ALICE, id=issue_id, claim_next=True, lease_seconds=seconds)
    assert call(store, "get", BOB, id=issue_id)["issue"]["status"] == "open"


def test_the_longest_lease_is_taken(store: SqlStore) -> None:
    claimed = call(store, "claim", ALICE, id=new(store), lease_seconds=604800)
    assert claimed["lease_seconds"] == 604800


@pytest.fixture
def leasing(store_url: str) -> Iterator[SqlStore]:
    """A store whose tracker gives every claim a lease of an hour by default (``--claim-ttl 3600``)."""
    opened = open_store(store_url, prefix="t", claim_ttl=3600)
    yield opened
    opened.close()


def test_the_trackers_default_lease_applies_to_claims_that_ask_for_none(leasing: SqlStore) -> None:
    assert call(leasing, "claim", ALICE, id=new(leasing))["lease_seconds"] == 3600
    assert call(leasing, "claim", ALICE, id=new(leasing), lease_seconds=5)["lease_seconds"] == 5


def test_expiry_is_the_databases_clock_whatever_a_replicas_own_clock_says(store_url: str) -> None:
    """Two trackers on one store, one of them a day fast: a lease it grants still lasts its length."""
    fast = SqlStore(open_store(store_url, prefix="t").db, clock=lambda: "2099-01-01T00:00:00.000000Z")
    fast.migrate()
    right = open_store(store_url, prefix="t")
    try:
        issue_id = new(fast)
        claimed = call(fast, "claim", ALICE, id=issue_id, lease_seconds=3600)
        when = epoch(claimed["lease_expires_at"])
        assert when is not None and when - right.clock() > 3000  # an hour from the database's now, not from 2099
        for replica in (fast, right):
            assert call(replica, "get", BOB, id=issue_id)["claim"]["expired"] is False
            refused(replica, "conflict", "claim", BOB, id=issue_id)
    finally:
        fast.close()
        right.close()


def test_a_forced_release_ends_the_lease(store: SqlStore) -> None:
    issue_id = new(store)
    call(store, "claim", ALICE, id=issue_id, lease_seconds=600)
    calls.release_forced(store, issue_id, actor="operator:root", reason="gone")
    assert store.claims() == []
    assert "claim" not in call(store, "get", BOB, id=issue_id)


def test_releasing_handing_over_and_completing_end_the_lease(store: SqlStore) -> None:
    for end in ("release", "handover", "complete", "handoff"):
        issue_id = new(store, end)
        call(store, "claim", ALICE, id=issue_id, lease_seconds=600)
        if end == "release":
            call(store, "release", ALICE, id=issue_id)
        elif end == "handover":
            call(store, "update", ALICE, id=issue_id, assignee=BOB)
        elif end == "complete":
            call(store, "complete", ALICE, id=issue_id, summary="done")
        else:
            call(store, "handoff", ALICE, id=issue_id, done="half", release=True)
        got = call(store, "get", BOB, id=issue_id)
        assert "lease_expires_at" not in got["issue"], end
        assert got.get("claim", {}).get("lease_seconds") is None, end
    assert [claim["holder"] for claim in store.claims()] == [BOB]  # the handed-over claim, without a lease


def test_claims_lists_live_and_expired_claims(store: SqlStore) -> None:
    stale, _ = expired_claim(store, "stale")
    live = new(store, "live")
    call(store, "claim", BOB, id=live, lease_seconds=3600)
    forever = new(store, "forever")
    call(store, "claim", CAROL, id=forever)
    listed = {claim["id"]: claim for claim in store.claims()}
    assert set(listed) == {stale, live, forever}
    assert (listed[stale]["expired"], listed[stale]["holder"]) == (True, ALICE)
    assert (listed[live]["expired"], listed[live]["lease_seconds"]) == (False, 3600)
    assert listed[forever]["lease_expires_at"] is None and listed[forever]["expired"] is False
    assert [claim["id"] for claim in store.claims(stale_only=True)] == [stale]


def test_the_next_lease_expiry_is_the_soonest_live_one(store: SqlStore) -> None:
    """What a host waits for to tell listeners that a claim expired (the seam of the listening work)."""
    assert store.next_lease_expiry() is None
    call(store, "claim", ALICE, id=new(store), lease_seconds=3600)
    soon = new(store, "soon")
    claimed = call(store, "claim", BOB, id=soon, lease_seconds=1)
    issue_id, expires, now = store.next_lease_expiry() or ("", 0.0, 0.0)
    assert issue_id == soon
    assert expires == pytest.approx(epoch(claimed["lease_expires_at"]), abs=1e-5)
    assert now < expires
    wait_past(store, claimed["lease_expires_at"])
    later = store.next_lease_expiry()
    assert later is not None and later[0] != soon


# -- the interchange forms ---------------------------------------------------------------------------------------


def _line(store: SqlStore, issue_id: str) -> dict[str, Any]:
    lines: list[dict[str, Any]] = [json.loads(text) for text in store.export_lines()]
    [line] = [line for line in lines if line.get("id") == issue_id]
    return line


@pytest.fixture
def other_url(store_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A second, empty store of the same kind."""
    if store_url.startswith("postgresql"):
        url: str = request.getfixturevalue("postgres_server").create_database()
        return url
    return str(tmp_path / "other.db")


def test_a_lease_is_exported_as_beads_writes_it_and_imported_back_as_it_was(store: SqlStore, other_url: str) -> None:
    issue_id = new(store)
    claimed = call(store, "claim", ALICE, id=issue_id, lease_seconds=600)
    line = _line(store, issue_id)
    assert line["lease_expires_at"] == claimed["lease_expires_at"]
    assert line["lease_granted_node"] == store.replica
    keys = list(line)
    assert keys.index("started_at") < keys.index("lease_expires_at") < keys.index("heartbeat_at")
    assert keys.index("heartbeat_at") < keys.index("lease_granted_node")
    exported = store.export_lines()

    other = open_store(other_url, prefix="t")
    try:
        other.import_lines(exported)
        got = call(other, "get", BOB, id=issue_id)
        assert got["claim"]["lease_expires_at"] == claimed["lease_expires_at"]
        assert got["claim"]["holder"] == ALICE and got["claim"]["expired"] is False
        assert other.export_lines() == exported
        refused(other, "conflict", "claim", BOB, id=issue_id)
    finally:
        other.close()


BEADS_LEASED = {
    "id": "bd-l1",
    "title": "leased in Beads",
    "status": "in_progress",
    "priority": 2,
    "issue_type": "task",
    "assignee": "worker-7",
    "created_at": "2026-07-01T10:00:00Z",
    "updated_at": "2026-07-01T10:00:00Z",
    "started_at": "2026-07-01T10:00:00Z",
    "lease_expires_at": "2026-07-01T10:05:00Z",
    "heartbeat_at": "2026-07-01T10:00:00Z",
    "lease_granted_node": "mini",
}


def test_a_lease_beads_wrote_is_restored_and_written_back_byte_for_byte(store: SqlStore) -> None:
    text = json.dumps(BEADS_LEASED, separators=(",", ":"))
    store.import_lines([text + "\n"])
    got = call(store, "get", BOB, id="bd-l1")
    assert got["claim"]["lease_expires_at"] == "2026-07-01T10:05:00Z"
    assert got["claim"]["lease_seconds"] == 300 and got["claim"]["expired"] is True  # long expired by now
    assert got["ready"] is True and "bd-l1" in ready_ids(store)
    assert store.export_lines() == [text]
    taken = call(store, "claim", BOB, id="bd-l1", lease_seconds=60)
    assert taken["reclaimed_from"] == "worker-7"
    line = _line(store, "bd-l1")
    assert (line["assignee"], line["lease_expires_at"]) == (BOB, taken["lease_expires_at"])
    assert list(line) == list(BEADS_LEASED)  # the keys where the line had them
    call(store, "release", BOB, id="bd-l1")
    assert "lease_expires_at" not in _line(store, "bd-l1")


def test_lease_keys_on_an_issue_that_is_not_claimed_stay_as_they_came(store: SqlStore) -> None:
    lines = [
        json.dumps({**BEADS_LEASED, "id": "bd-o1", "status": "open"}),
        json.dumps({**BEADS_LEASED, "id": "bd-o2", "assignee": None}),
        json.dumps({**BEADS_LEASED, "id": "bd-o3", "lease_expires_at": "soon"}),
    ]
    store.import_lines(lines)
    assert store.claims(stale_only=True) == []
    call(store, "update", BOB, id="bd-o1", title="touched")  # rebuilt from the store, not written back verbatim
    assert _line(store, "bd-o1")["lease_expires_at"] == BEADS_LEASED["lease_expires_at"]
    assert store.export_lines()[1:] == lines[1:]
