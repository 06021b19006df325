"""Board sessions in the store, on SQLite and PostgreSQL: found by cookie, ended by time or sign-out, links once."""

from bee_tracker.board.sessions import SESSION_MAX_SECONDS, Sessions
from bee_tracker.store import SqlStore


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_session_is_found_by_its_cookie_and_the_store_holds_only_its_digest(store: SqlStore) -> None:
    clock = Clock()
    sessions = Sessions(store.db, clock=clock)
    opened = sessions.open("alice@example.com")
    found = sessions.find(opened.cookie)
    assert found == opened.session
    assert found.actor == "alice@example.com" and len(found.csrf) >= 43
    assert found.expires_epoch == clock.now + SESSION_MAX_SECONDS
    with store.db.read() as tx:
        stored = tx.rows("SELECT id_sha, actor FROM board_sessions")
    assert stored == [(stored[0][0], "alice@example.com")]
    assert opened.cookie not in stored[0][0] and len(stored[0][0]) == 64


def test_forged_empty_and_oversized_cookies_find_nothing(store: SqlStore) -> None:
    sessions = Sessions(store.db)
    opened = sessions.open("alice@example.com")
    for cookie in (None, "", opened.cookie[:-1] + ("A" if opened.cookie[-1] != "A" else "B"), "x" * 10_000):
        assert sessions.find(cookie) is None


def test_a_session_ends_at_its_lifetime_or_sooner_with_its_token(store: SqlStore) -> None:
    clock = Clock()
    sessions = Sessions(store.db, clock=clock)
    bounded = sessions.open("alice@example.com", ends_by=clock.now + 60)
    assert bounded.session.expires_epoch == clock.now + 60
    full = sessions.open("bob@example.com", ends_by=clock.now + 10 * SESSION_MAX_SECONDS)
    assert full.session.expires_epoch == clock.now + SESSION_MAX_SECONDS
    clock.now += 61
    assert sessions.find(bounded.cookie) is None
    assert sessions.find(full.cookie) is not None
    clock.now += SESSION_MAX_SECONDS
    assert sessions.find(full.cookie) is None
    sessions.open("carol@example.com")  # opening a session sweeps the expired ones
    with store.db.read() as tx:
        assert tx.rows("SELECT actor FROM board_sessions") == [("carol@example.com",)]


def test_closing_ends_the_session_for_every_copy_of_the_cookie(store: SqlStore) -> None:
    sessions = Sessions(store.db)
    opened = sessions.open("alice@example.com")
    other = sessions.open("alice@example.com")
    assert sessions.close(opened.cookie) is True
    assert sessions.find(opened.cookie) is None
    assert Sessions(store.db).find(opened.cookie) is None  # another replica on the same store agrees
    assert sessions.find(other.cookie) is not None  # the same person's other session lives on
    assert sessions.close(opened.cookie) is False


def test_a_link_is_spent_once_and_forgotten_after_it_expires(store: SqlStore) -> None:
    clock = Clock()
    sessions = Sessions(store.db, clock=clock)
    assert sessions.spend_link("jti-1", expires_epoch=clock.now + 90) is True
    assert sessions.spend_link("jti-1", expires_epoch=clock.now + 90) is False
    assert Sessions(store.db, clock=clock).spend_link("jti-1", expires_epoch=clock.now + 90) is False
    assert sessions.spend_link("jti-2", expires_epoch=clock.now + 90) is True
    clock.now += 91
    sessions.open("alice@example.com")  # sweeps spent links whose tokens have expired
    with store.db.read() as tx:
        found = tx.row("SELECT COUNT(*) FROM board_links")
        assert found is not None
        assert found[0] == 0
