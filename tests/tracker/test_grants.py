"""The built-in authorization server's state in the store, on SQLite and PostgreSQL: codes and refresh tokens spent
once across replicas (racing ones too), only digests of what grants access kept, waiting requests taken once,
revocation ending refresh tokens at once, keys shared."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from bee_tracker.store import SqlStore, open_store
from bee_tracker.store.grants import CONSENT, Grant, Grants, digest, new_grant

NOW = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def replica(store_url: str, store: SqlStore) -> Iterator[SqlStore]:
    """A second tracker's own connection to the same store."""
    other = open_store(store_url)
    yield other
    other.close()


def _grant(actor: str = "ann@example.com") -> Grant:
    return new_grant(
        actor=actor,
        client_id="client-1",
        client_name="Editor",
        scopes=("tracker:read", "tracker:write"),
        resource="http://127.0.0.1:8765/mcp",
        now=NOW,
    )


def _code(grants: Grants, code: str = "the-code") -> Grant:
    grant = _grant()
    grants.add_code(code, grant, {"redirect_uri": "http://127.0.0.1:1/cb"}, lifetime=120)
    return grant


def test_a_code_is_spent_once_and_only_its_digest_is_kept(store: SqlStore, replica: SqlStore) -> None:
    here, there = Grants(store.db, clock=Clock()), Grants(replica.db, clock=Clock())
    grant = _code(here)
    found = there.code("the-code")
    assert found is not None and not found.used and found.grant == grant
    assert here.spend_code("the-code", grant, "refresh-1", refresh_lifetime=3600) is True
    assert there.spend_code("the-code", grant, "refresh-2", refresh_lifetime=3600) is False
    spent = there.code("the-code")
    assert spent is not None and spent.used
    assert there.refresh("refresh-2") is None and there.refresh("refresh-1") is not None
    with store.db.read() as tx:
        stored = tx.rows("SELECT code_sha FROM oauth_codes") + tx.rows("SELECT token_sha FROM oauth_refresh")
    assert sorted(row[0] for row in stored) == sorted([digest("the-code"), digest("refresh-1")])


def test_a_code_raced_by_two_replicas_is_spent_by_exactly_one(store: SqlStore, replica: SqlStore) -> None:
    def race(code: str) -> list[bool]:
        grant = _code(Grants(store.db), code)
        sides = {"here": Grants(store.db), "there": Grants(replica.db)}
        with ThreadPoolExecutor(2) as pool:
            return list(
                pool.map(lambda name: sides[name].spend_code(code, grant, f"{code}-{name}", refresh_lifetime=60), sides)
            )

    for round_ in range(5):
        won = race(f"raced-{round_}")
        assert sorted(won) == [False, True], won
        assert len(Grants(store.db).grants()) == round_ + 1  # one grant per code, never two


def test_a_refresh_token_rotates_once_and_a_revoked_grant_refreshes_no_more(store: SqlStore, replica: SqlStore) -> None:
    grants = Grants(store.db, clock=Clock())
    grant = _code(grants)
    grants.spend_code("the-code", grant, "refresh-1", refresh_lifetime=3600)
    assert grants.rotate("refresh-1", "refresh-2", lifetime=3600) is True
    assert Grants(replica.db).rotate("refresh-1", "refresh-3", lifetime=3600) is False  # spent: a replay
    spent = grants.refresh("refresh-1")
    assert spent is not None and spent.used and spent.grant.live
    assert grants.revoke(grant_id=spent.grant.grant_id, reason="replayed") == [spent.grant.grant_id]
    live = grants.refresh("refresh-2")
    assert live is not None and live.used and not live.grant.live  # revoking spent every refresh token at once
    assert grants.rotate("refresh-2", "refresh-4", lifetime=3600) is False
    assert grants.grants() == [] and [g.revoked_reason for g in grants.grants(revoked=True)] == ["replayed"]


def test_revoking_by_person_and_by_client(store: SqlStore) -> None:
    grants = Grants(store.db, clock=Clock())
    for number, actor in enumerate(("ann@example.com", "ann@example.com", "bob@example.com")):
        grant = new_grant(
            actor=actor,
            client_id=f"client-{number % 2}",
            client_name=None,
            scopes=("tracker:read",),
            resource="r",
            now=NOW,
        )
        grants.add_code(f"code-{number}", grant, {}, lifetime=60)
        grants.spend_code(f"code-{number}", grant, f"refresh-{number}", refresh_lifetime=60)
    assert len(grants.revoke(actor="ann@example.com", client_id="client-1", reason="x")) == 1
    assert sorted(g.actor for g in grants.grants()) == ["ann@example.com", "bob@example.com"]
    assert len(grants.revoke(client_id="client-0", reason="x")) == 2
    assert grants.grants() == [] and grants.revoke(reason="x") == []


def test_a_waiting_request_is_taken_once_and_expires(store: SqlStore, replica: SqlStore) -> None:
    clock = Clock()
    grants = Grants(store.db, clock=clock)
    request_id = grants.hold(CONSENT, {"client_id": "c"}, lifetime=600)
    assert Grants(replica.db, clock=clock).held(CONSENT, request_id) == {"client_id": "c"}
    assert grants.held("idp", request_id) is None  # another kind's id finds nothing
    assert Grants(replica.db, clock=clock).take(CONSENT, request_id) == {"client_id": "c"}
    assert grants.take(CONSENT, request_id) is None
    late = grants.hold(CONSENT, {}, lifetime=600)
    clock.now += 601
    assert grants.held(CONSENT, late) is None and grants.take(CONSENT, late) is None
    with store.db.read() as tx:
        assert all(request_id not in row[0] for row in tx.rows("SELECT id_sha FROM signin_requests"))


def test_replicas_share_the_signing_keys(store: SqlStore, replica: SqlStore) -> None:
    kid, secret = Grants(store.db).signing_key()
    assert Grants(replica.db).signing_key() == (kid, secret) and len(secret) == 32
    assert Grants(replica.db).keys() == {kid: secret}


def test_a_registered_client_nobody_used_is_forgotten_after_a_day(store: SqlStore) -> None:
    from bee_tracker.store.grants import UNUSED_CLIENT_SECONDS

    clock = Clock()
    grants = Grants(store.db, clock=clock)
    grants.save_client("unused", "registered", {"redirect_uris": ["http://127.0.0.1:1/cb"]})
    grants.save_client("client-1", "registered", {"redirect_uris": ["http://127.0.0.1:1/cb"]})
    grant = _code(grants)  # client-1 starts a grant
    grants.spend_code("the-code", grant, "refresh", refresh_lifetime=60)
    clock.now += UNUSED_CLIENT_SECONDS - 1
    grants.save_client("new", "registered", {"redirect_uris": ["http://127.0.0.1:1/cb"]})
    assert grants.client("unused") is not None  # not yet a day
    clock.now += 2
    grants.save_client("newer", "registered", {"redirect_uris": ["http://127.0.0.1:1/cb"]})
    assert grants.client("unused") is None and grants.client("client-1") is not None and grants.client("new")
