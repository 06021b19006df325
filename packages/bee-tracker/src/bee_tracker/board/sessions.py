"""Sessions of people signed in to the board, held in the store, and the one-time sign-in links already spent.

A session is server-side: the browser holds a random 256-bit id in an HttpOnly cookie, and the store holds only the
id's sha256, the actor, the session's CSRF token and its expiry. So signing out ends the session for every copy of
the cookie, every replica and worker on the same store sees the same sessions, and someone who can read the
database (or a backup of it) still cannot present a session. A one-time link's token id (``jti``) is recorded when
the link is used, in the same store, so a link works once across replicas too.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from bee_tracker.model import timestamp
from bee_tracker.store.db import Database

#: The longest a board session lives (and a pasted token's own expiry, when sooner, ends it earlier).
SESSION_MAX_SECONDS = 8 * 3600

#: Random bytes in a session id (the cookie's value) and a CSRF token.
_ID_BYTES = 32

#: Cookie values longer than this are not looked up (an id is 43 characters).
_MAX_COOKIE_CHARS = 128


def _sha(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Session:
    """A live session: who is signed in, the CSRF token every write form must carry, when it ends, and the scopes it
    was opened with (None: every scope, as a session opened by a link or a token without a ``scope`` has)."""

    actor: str
    csrf: str
    expires_epoch: float
    scopes: frozenset[str] | None = None

    def allows(self, scope: str) -> bool:
        return self.scopes is None or scope in self.scopes


@dataclass(frozen=True)
class Opened:
    """A session just opened: the cookie value to hand to the browser, and the session."""

    cookie: str
    session: Session


class Sessions:
    """The board's sessions and spent links in ``db`` (tables of migration 4)."""

    def __init__(self, db: Database, *, clock: Callable[[], float] = time.time) -> None:
        self.db = db
        self._clock = clock

    def now(self) -> float:
        """The time sessions are measured by (seconds since the epoch)."""
        return self._clock()

    def open(self, actor: str, *, ends_by: float | None = None, scopes: frozenset[str] | None = None) -> Opened:
        """Open a session for ``actor`` lasting :data:`SESSION_MAX_SECONDS`, or until ``ends_by`` when sooner, with
        ``scopes`` (None: every scope).

        Expired sessions and links are deleted on the way, so the tables hold only live rows and a few stale ones.

        Raises:
            BeeError: ``busy`` when the database is locked elsewhere (nothing written).
        """
        now = self._clock()
        expires = now + SESSION_MAX_SECONDS if ends_by is None else min(now + SESSION_MAX_SECONDS, ends_by)
        cookie = secrets.token_urlsafe(_ID_BYTES)
        csrf = secrets.token_urlsafe(_ID_BYTES)
        with self.db.write() as tx:
            tx.run("DELETE FROM board_sessions WHERE expires_epoch <= ?", [now])
            tx.run("DELETE FROM board_links WHERE expires_epoch <= ?", [now])
            tx.run(
                "INSERT INTO board_sessions (id_sha, actor, csrf, created_at, expires_epoch, scopes) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    _sha(cookie),
                    actor,
                    csrf,
                    timestamp(now),
                    expires,
                    None if scopes is None else " ".join(sorted(scopes)),
                ],
            )
        return Opened(cookie, Session(actor, csrf, expires, scopes))

    def find(self, cookie: str | None) -> Session | None:
        """The live session whose cookie is ``cookie``, or None (no cookie, unknown, forged or expired)."""
        if not cookie or len(cookie) > _MAX_COOKIE_CHARS:
            return None
        with self.db.read() as tx:
            found = tx.row(
                "SELECT actor, csrf, expires_epoch, scopes FROM board_sessions WHERE id_sha = ? AND expires_epoch > ?",
                [_sha(cookie), self._clock()],
            )
        if not found:
            return None
        return Session(found[0], found[1], float(found[2]), None if found[3] is None else frozenset(found[3].split()))

    def close(self, cookie: str | None) -> bool:
        """End the session of ``cookie`` for good; return whether there was one."""
        if not cookie or len(cookie) > _MAX_COOKIE_CHARS:
            return False
        with self.db.write() as tx:
            return tx.run("DELETE FROM board_sessions WHERE id_sha = ?", [_sha(cookie)]) > 0

    def spend_link(self, link_id: str, *, expires_epoch: float) -> bool:
        """Record the one-time link ``link_id`` as used; False when it was used before (on any replica).

        The record is kept until ``expires_epoch``, after which the link's token is refused as expired anyway.
        """
        with self.db.write() as tx:
            added = tx.run(
                "INSERT INTO board_links (jti_sha, expires_epoch) VALUES (?, ?) ON CONFLICT (jti_sha) DO NOTHING",
                [_sha(link_id), expires_epoch],
            )
        return added > 0
