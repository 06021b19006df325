"""Leases (Bee's extension): a checkout's binding to a space, live until the tracker's clock says it expired.

Every test runs on SQLite and PostgreSQL. Time is the store's clock, set by the test, so expiry is provoked
exactly and without sleeping.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from bee_tracker.model import timestamp
from bee_tracker.store import SqlStore, leases, open_database
from bee_tracker.store import schema as migrations
from tests.tracker.calls import ALICE, BOB, call, new, refused

T0 = 1_900_000_000.0


class Clock:
    """The tracker's clock, as the test sets it."""

    def __init__(self) -> None:
        self.at = T0

    def __call__(self) -> str:
        return timestamp(self.at)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(store_url: str, clock: Clock) -> Iterator[SqlStore]:
    opened = SqlStore(open_database(store_url), prefix="t", clock=clock)
    opened.migrate()
    yield opened
    opened.close()


def join(
    store: SqlStore, actor: str = ALICE, *, space: str = "team", checkout: str = "chk-1", ttl: int = 60
) -> dict[str, Any]:
    return call(store, "lease_join", actor, space=space, checkout_id=checkout, ttl_seconds=ttl)


def test_a_joined_lease_is_live_until_the_tracker_clock_passes_its_expiry(store: SqlStore, clock: Clock) -> None:
    joined = join(store, ttl=60)
    assert joined["created"] is True and joined["live"] is True
    assert joined["id"].startswith("lease-") and len(joined["id"]) == len("lease-") + 32
    assert (joined["space"], joined["holder"], joined["checkout_id"]) == ("team", ALICE, "chk-1")
    assert joined["expires_at"] == timestamp(T0 + 60) and joined["now"] == timestamp(T0)
    assert joined["expires_in_seconds"] == 60

    clock.at = T0 + 59.5
    almost = call(store, "lease_get", BOB, id=joined["id"])
    assert almost["live"] is True and almost["expires_in_seconds"] == 0.5
    clock.at = T0 + 60
    expired = call(store, "lease_get", BOB, id=joined["id"])
    assert expired["live"] is False and expired["expires_in_seconds"] == 0 and expired["left_at"] is None
    assert expired["renewed_at"] == joined["renewed_at"]  # reading never renews


def test_joining_again_renews_the_live_lease_and_after_expiry_makes_a_new_one(store: SqlStore, clock: Clock) -> None:
    first = join(store, ttl=60)
    clock.at = T0 + 30
    again = join(store, ttl=120)
    assert (again["id"], again["created"]) == (first["id"], False)
    assert again["expires_at"] == timestamp(T0 + 150) and again["ttl_seconds"] == 120
    assert again["joined_at"] == first["joined_at"] and again["renewed_at"] == timestamp(T0 + 30)
    other_checkout = join(store, checkout="chk-2")
    other_space = join(store, space="elsewhere")
    assert len({first["id"], other_checkout["id"], other_space["id"]}) == 3

    clock.at = T0 + 150
    fresh = join(store, ttl=60)
    assert fresh["created"] is True and fresh["id"] != first["id"]
    assert call(store, "lease_get", id=first["id"])["live"] is False  # the old id stays dead


def test_renewing_extends_a_live_lease_and_an_expired_one_stays_dead(store: SqlStore, clock: Clock) -> None:
    lease = join(store, ttl=60)
    clock.at = T0 + 50
    renewed = call(store, "lease_renew", ALICE, id=lease["id"])
    assert renewed["expires_at"] == timestamp(T0 + 110) and renewed["ttl_seconds"] == 60
    clock.at = T0 + 100
    shorter = call(store, "lease_renew", ALICE, id=lease["id"], ttl_seconds=5)
    assert shorter["expires_at"] == timestamp(T0 + 105) and shorter["ttl_seconds"] == 5

    clock.at = T0 + 105
    error = refused(store, "binding_not_live", "lease_renew", ALICE, id=lease["id"])
    assert "expired at" in error.message and "join space 'team' again" in error.message
    assert error.retryable is False
    clock.at = T0 + 106
    assert call(store, "lease_get", id=lease["id"])["live"] is False


def test_only_the_holder_renews_or_leaves_a_lease_and_anyone_reads_it(store: SqlStore) -> None:
    lease = join(store, ALICE)
    for tool in ("lease_renew", "lease_leave"):
        error = refused(store, "forbidden", tool, BOB, id=lease["id"])
        assert error.details is not None
        assert ALICE in error.message and error.details["holder"] == ALICE
    seen = call(store, "lease_get", BOB, id=lease["id"])
    assert seen["live"] is True and seen["holder"] == ALICE


def test_leaving_ends_the_lease_for_good(store: SqlStore, clock: Clock) -> None:
    lease = join(store)
    clock.at = T0 + 10
    left = call(store, "lease_leave", ALICE, id=lease["id"])
    assert left["left"] is True and left["live"] is False
    assert left["left_at"] == left["expires_at"] == timestamp(T0 + 10)
    again = call(store, "lease_leave", ALICE, id=lease["id"])
    assert again["left"] is False and again["left_at"] == timestamp(T0 + 10)
    assert "was left at" in refused(store, "binding_not_live", "lease_renew", ALICE, id=lease["id"]).message
    rejoined = join(store)
    assert rejoined["created"] is True and rejoined["id"] != lease["id"]


def test_unknown_leases_are_not_found_and_bad_arguments_are_refused(store: SqlStore) -> None:
    unknown = "lease-" + "0" * 32
    for tool in ("lease_get", "lease_renew", "lease_leave"):
        assert "no lease" in refused(store, "not_found", tool, ALICE, id=unknown).message
    refused(store, "invalid_argument", "lease_get", ALICE, id="t-1")
    refused(store, "invalid_argument", "lease_join", ALICE, space="team", checkout_id="c", ttl_seconds=0)
    refused(store, "invalid_argument", "lease_join", ALICE, space="team", checkout_id="c", ttl_seconds=86401)
    refused(store, "invalid_argument", "lease_join", ALICE, space="no spaces", checkout_id="c")
    refused(store, "invalid_argument", "lease_join", ALICE, space="x" * 65, checkout_id="c")
    refused(store, "invalid_argument", "lease_join", ALICE, space="team", checkout_id="../c")
    lease = join(store)
    refused(store, "invalid_argument", "lease_renew", ALICE, id=lease["id"], ttl_seconds=86401)


def test_an_actor_holds_a_bounded_number_of_live_leases(store: SqlStore, clock: Clock) -> None:
    for n in range(leases.MAX_LIVE_PER_HOLDER):
        join(store, checkout=f"chk-{n}", ttl=60)
    error = refused(store, "forbidden", "lease_join", ALICE, space="team", checkout_id="one-more")
    assert error.details == {"live": leases.MAX_LIVE_PER_HOLDER, "limit": leases.MAX_LIVE_PER_HOLDER}
    assert join(store, BOB)["created"] is True  # the bound is per actor
    assert join(store, checkout="chk-0")["created"] is False  # renewing a held lease is not a new one
    clock.at = T0 + 60
    assert join(store, checkout="one-more")["created"] is True  # expired leases do not count


def test_ended_leases_are_forgotten_a_week_after_they_end(store: SqlStore, clock: Clock) -> None:
    lease = join(store, ttl=60)
    clock.at = T0 + 60 + leases.FORGET_AFTER_SECONDS - 1
    join(store, checkout="another")
    assert call(store, "lease_get", id=lease["id"])["live"] is False
    clock.at = T0 + 60 + leases.FORGET_AFTER_SECONDS + 1
    join(store, checkout="another")
    refused(store, "not_found", "lease_get", ALICE, id=lease["id"])


def test_concurrent_joins_of_one_checkout_make_one_lease(store: SqlStore) -> None:
    start = threading.Barrier(6)
    ids: list[str] = []

    def joiner() -> None:
        start.wait()
        ids.append(join(store)["id"])

    threads = [threading.Thread(target=joiner) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(ids) == 6 and len(set(ids)) == 1


def test_leases_write_no_issue_history(store: SqlStore) -> None:
    issue = new(store, "unrelated")
    join(store)
    assert call(store, "get", id=issue)["history_count"] == 1


def test_a_store_at_schema_2_migrates_to_leases_and_keeps_its_issues(store_url: str, clock: Clock) -> None:
    db = open_database(store_url)
    steps = migrations.SQLITE if db.dialect == "sqlite" else migrations.POSTGRES
    with db.write() as tx:
        migrations.apply(tx, steps[:2], has_meta=False)
        assert tx.row("SELECT value FROM meta WHERE key = 'schema_version'") == ("2",)
        tx.run(  # an issue written at schema 2
            "INSERT INTO issues (id, title, status, last_activity_at) VALUES ('t-old', 'from before leases', "
            "'open', '2026-01-01T00:00:00Z')"
        )
    old = SqlStore(db, prefix="t", clock=clock)
    issue = "t-old"
    assert old.migrate() == migrations.LATEST
    assert call(old, "get", id=issue)["issue"]["title"] == "from before leases"
    assert join(old)["live"] is True
    old.close()
