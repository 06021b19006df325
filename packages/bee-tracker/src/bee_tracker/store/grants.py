"""What the built-in authorization server keeps, in the store every replica shares: keys, clients, waiting
requests, grants, one-time codes and refresh tokens (tables of migration 7).

What grants access is kept only as a sha256 digest: an authorization code, a refresh token, a waiting request's id.
So someone who reads the database or a backup cannot present any of them. A registered client's secret is kept as
it is (the SDK's client authentication compares it in constant time), since it only says which client asks and
grants nothing without a code or a refresh token. The access-token signing keys are kept as they are, by necessity
(every replica signs and verifies with them): read access to the store is read access to them, as it is to the
tracker's data (see docs/operations.md).

A code and a refresh token are each spent by one conditional UPDATE (``… WHERE used_epoch IS NULL``): on PostgreSQL
the second of two racing replicas waits for the first's row lock and then finds the row spent, so exactly one wins;
SQLite serialises writers. What is spent stays until it would have expired, so a second use is recognised as a
replay (and the caller revokes the grant).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bee_tracker.model import timestamp
from bee_tracker.store.db import Database, Tx

#: How long a registered client may go without starting a grant before it is forgotten.
UNUSED_CLIENT_SECONDS = 86400

#: The kinds of requests that wait in a browser: a consent to give, a sign-in at the team's identity provider.
CONSENT, IDP_SIGNIN = "consent", "idp"


def digest(value: str) -> str:
    """The sha256 a secret value is stored and looked up by."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class StoredClient:
    """A client the server knows: ``kind`` is ``registered`` (dynamic registration) or ``document`` (a fetched
    Client ID Metadata Document)."""

    client_id: str
    kind: str
    metadata: dict[str, Any]
    secret: str | None
    fetched_epoch: float | None


@dataclass(frozen=True)
class Grant:
    """What a person allowed a client: its scopes for one resource, until revoked."""

    grant_id: str
    actor: str
    client_id: str
    client_name: str | None
    scopes: tuple[str, ...]
    resource: str
    created_at: str
    refreshed_epoch: float | None
    revoked_epoch: float | None
    revoked_reason: str | None

    @property
    def live(self) -> bool:
        return self.revoked_epoch is None


@dataclass(frozen=True)
class Code:
    """A one-time authorization code, looked up by its value."""

    grant: Grant
    payload: dict[str, Any]
    expires_epoch: float
    used: bool


@dataclass(frozen=True)
class Refresh:
    """A refresh token, looked up by its value: its grant, when it expires, and whether it was spent."""

    grant: Grant
    expires_epoch: float
    used: bool


_GRANT_COLUMNS = (
    "grant_id, actor, client_id, client_name, scopes, resource, created_at, refreshed_epoch, revoked_epoch, "
    "revoked_reason"
)


def _grant(row: tuple[Any, ...]) -> Grant:
    return Grant(
        grant_id=row[0],
        actor=row[1],
        client_id=row[2],
        client_name=row[3],
        scopes=tuple(row[4].split()),
        resource=row[5],
        created_at=row[6],
        refreshed_epoch=row[7],
        revoked_epoch=row[8],
        revoked_reason=row[9],
    )


class Grants:
    """The authorization server's state in ``db``; ``clock`` gives seconds since the epoch (tests pass their own)."""

    def __init__(self, db: Database, *, clock: Callable[[], float] = time.time) -> None:
        self.db = db
        self.clock = clock

    # -- signing keys --------------------------------------------------------------------------------------------

    def keys(self) -> dict[str, bytes]:
        """Every access-token key by its id (``kid``)."""
        with self.db.read() as tx:
            return {kid: bytes.fromhex(secret) for kid, secret in tx.rows("SELECT kid, secret FROM oauth_keys")}

    def signing_key(self) -> tuple[str, bytes]:
        """The newest key, ``(kid, secret)``; the first caller on a new store creates it (replicas racing to do so
        each add one, and every one verifies)."""
        with self.db.read() as tx:
            found = tx.row("SELECT kid, secret FROM oauth_keys ORDER BY created_epoch DESC, kid LIMIT 1")
        if found is not None:
            return found[0], bytes.fromhex(found[1])
        kid, secret = secrets.token_urlsafe(12), secrets.token_bytes(32)
        with self.db.write() as tx:
            tx.run(
                "INSERT INTO oauth_keys (kid, secret, created_epoch) VALUES (?, ?, ?)",
                [kid, secret.hex(), self.clock()],
            )
        return kid, secret

    # -- clients -------------------------------------------------------------------------------------------------

    def client(self, client_id: str) -> StoredClient | None:
        with self.db.read() as tx:
            found = tx.row(
                "SELECT kind, metadata, secret, fetched_epoch FROM oauth_clients WHERE client_id = ?", [client_id]
            )
        if found is None:
            return None
        return StoredClient(client_id, found[0], json.loads(found[1]), found[2], found[3])

    def save_client(self, client_id: str, kind: str, metadata: dict[str, Any], *, secret: str | None = None) -> None:
        """Record a registered client (with its secret, when it has one) or a fetched document.

        Registration needs no credentials, so what nobody used is not kept: a registered client that started no
        grant within :data:`UNUSED_CLIENT_SECONDS` is deleted as others register.
        """
        now = self.clock()
        fetched = now if kind == "document" else None
        with self.db.write() as tx:
            if kind == "registered":
                tx.run(
                    "DELETE FROM oauth_clients WHERE kind = 'registered' AND created_epoch <= ? AND NOT EXISTS "
                    "(SELECT 1 FROM oauth_grants g WHERE g.client_id = oauth_clients.client_id)",
                    [now - UNUSED_CLIENT_SECONDS],
                )
            tx.run(
                "INSERT INTO oauth_clients (client_id, kind, metadata, secret, created_epoch, fetched_epoch) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (client_id) DO UPDATE SET metadata = excluded.metadata, "
                "fetched_epoch = excluded.fetched_epoch",
                [client_id, kind, json.dumps(metadata), secret, now, fetched],
            )

    # -- requests waiting in a browser ---------------------------------------------------------------------------

    def hold(self, kind: str, payload: dict[str, Any], *, lifetime: float) -> str:
        """Keep ``payload`` for ``lifetime`` seconds under a new random id, which is returned (only its digest is
        stored). Expired requests are deleted on the way."""
        request_id = secrets.token_urlsafe(32)
        now = self.clock()
        with self.db.write() as tx:
            tx.run("DELETE FROM signin_requests WHERE expires_epoch <= ?", [now])
            tx.run(
                "INSERT INTO signin_requests (id_sha, kind, payload, expires_epoch) VALUES (?, ?, ?, ?)",
                [digest(request_id), kind, json.dumps(payload), now + lifetime],
            )
        return request_id

    def held(self, kind: str, request_id: str) -> dict[str, Any] | None:
        """The live request of ``kind`` with this id, or None (unknown, expired, or already taken)."""
        with self.db.read() as tx:
            found = tx.row(
                "SELECT payload FROM signin_requests WHERE id_sha = ? AND kind = ? AND expires_epoch > ?",
                [digest(request_id), kind, self.clock()],
            )
        return json.loads(found[0]) if found else None

    def take(self, kind: str, request_id: str) -> dict[str, Any] | None:
        """Remove and return the live request, once: a second taker (on any replica) gets None."""
        with self.db.write() as tx:
            found = tx.row(
                "SELECT payload FROM signin_requests WHERE id_sha = ? AND kind = ? AND expires_epoch > ?",
                [digest(request_id), kind, self.clock()],
            )
            if found is None or tx.run("DELETE FROM signin_requests WHERE id_sha = ?", [digest(request_id)]) != 1:
                return None
        loaded: dict[str, Any] = json.loads(found[0])
        return loaded

    # -- codes ---------------------------------------------------------------------------------------------------

    def add_code(self, code: str, grant: Grant, payload: dict[str, Any], *, lifetime: float) -> None:
        """Record an authorization code for the grant it will start (kept in the code's row until the code is
        spent: a grant exists only once its code is)."""
        now = self.clock()
        record = {**payload, "grant": _grant_record(grant)}
        with self.db.write() as tx:
            # Spent and expired codes go once they could not be replayed anyway.
            tx.run("DELETE FROM oauth_codes WHERE expires_epoch <= ?", [now - 3600])
            tx.run(
                "INSERT INTO oauth_codes (code_sha, grant_id, client_id, payload, expires_epoch) "
                "VALUES (?, ?, ?, ?, ?)",
                [digest(code), grant.grant_id, grant.client_id, json.dumps(record), now + lifetime],
            )

    def code(self, code: str) -> Code | None:
        with self.db.read() as tx:
            found = tx.row(
                "SELECT payload, expires_epoch, used_epoch FROM oauth_codes WHERE code_sha = ?", [digest(code)]
            )
        if found is None:
            return None
        payload = json.loads(found[0])
        return Code(_from_record(payload.pop("grant")), payload, float(found[1]), found[2] is not None)

    def spend_code(self, code: str, grant: Grant, refresh: str, *, refresh_lifetime: float) -> bool:
        """Spend ``code`` and start its grant with its first refresh token, in one transaction; False (nothing
        written) when the code was spent already, here or on another replica."""
        now = self.clock()
        with self.db.write() as tx:
            if (
                tx.run(
                    "UPDATE oauth_codes SET used_epoch = ? WHERE code_sha = ? AND used_epoch IS NULL",
                    [now, digest(code)],
                )
                != 1
            ):
                return False
            tx.run(
                f"INSERT INTO oauth_grants ({_GRANT_COLUMNS}, created_epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [*_grant_values(grant), now],
            )
            _add_refresh(tx, refresh, grant.grant_id, now + refresh_lifetime)
        return True

    # -- refresh tokens ------------------------------------------------------------------------------------------

    def refresh(self, token: str) -> Refresh | None:
        with self.db.read() as tx:
            found = tx.row(
                f"SELECT r.expires_epoch, r.used_epoch, {_qualified('g')} FROM oauth_refresh r "
                "JOIN oauth_grants g ON g.grant_id = r.grant_id WHERE r.token_sha = ?",
                [digest(token)],
            )
        if found is None:
            return None
        return Refresh(_grant(found[2:]), float(found[0]), found[1] is not None)

    def rotate(self, old: str, new: str, *, lifetime: float) -> bool:
        """Spend refresh token ``old`` and issue ``new`` for the same live grant; False (nothing written) when
        ``old`` was spent already, or its grant revoked meanwhile."""
        now = self.clock()
        with self.db.write() as tx:
            found = tx.row("SELECT grant_id FROM oauth_refresh WHERE token_sha = ?", [digest(old)])
            if found is None:
                return False
            grant_id = found[0]
            spent = tx.run(
                "UPDATE oauth_refresh SET used_epoch = ? WHERE token_sha = ? AND used_epoch IS NULL", [now, digest(old)]
            )
            live = tx.run(
                "UPDATE oauth_grants SET refreshed_epoch = ? WHERE grant_id = ? AND revoked_epoch IS NULL",
                [now, grant_id],
            )
            if spent != 1 or live != 1:
                return False
            tx.run("DELETE FROM oauth_refresh WHERE grant_id = ? AND expires_epoch <= ?", [grant_id, now])
            _add_refresh(tx, new, grant_id, now + lifetime)
        return True

    # -- grants --------------------------------------------------------------------------------------------------

    def grant(self, grant_id: str) -> Grant | None:
        with self.db.read() as tx:
            found = tx.row(f"SELECT {_GRANT_COLUMNS} FROM oauth_grants WHERE grant_id = ?", [grant_id])
        return _grant(found) if found else None

    def grants(self, *, actor: str | None = None, client_id: str | None = None, revoked: bool = False) -> list[Grant]:
        """Grants, oldest first: every one, or a person's or a client's; revoked ones only when asked."""
        where, params = _matching(actor=actor, client_id=client_id, revoked=revoked)
        with self.db.read() as tx:
            rows = tx.rows(f"SELECT {_GRANT_COLUMNS} FROM oauth_grants{where} ORDER BY created_epoch, grant_id", params)
        return [_grant(row) for row in rows]

    def revoke(
        self, *, grant_id: str | None = None, actor: str | None = None, client_id: str | None = None, reason: str
    ) -> list[str]:
        """Revoke the live grants that match (one by id, or a person's, a client's, or a person's with a client)
        and spend all their refresh tokens at once; return the ids revoked."""
        now = self.clock()
        where, params = _matching(actor=actor, client_id=client_id, revoked=False, grant_id=grant_id)
        with self.db.write() as tx:
            ids = [row[0] for row in tx.rows(f"SELECT grant_id FROM oauth_grants{where}", params)]
            for found in ids:
                tx.run(
                    "UPDATE oauth_grants SET revoked_epoch = ?, revoked_reason = ? WHERE grant_id = ? "
                    "AND revoked_epoch IS NULL",
                    [now, reason, found],
                )
                tx.run(
                    "UPDATE oauth_refresh SET used_epoch = ? WHERE grant_id = ? AND used_epoch IS NULL", [now, found]
                )
        return ids


def _qualified(alias: str) -> str:
    return ", ".join(f"{alias}.{column.strip()}" for column in _GRANT_COLUMNS.split(","))


def _matching(
    *, actor: str | None, client_id: str | None, revoked: bool, grant_id: str | None = None
) -> tuple[str, list[Any]]:
    clauses, params = [], []
    for column, value in (("grant_id", grant_id), ("actor", actor), ("client_id", client_id)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if not revoked:
        clauses.append("revoked_epoch IS NULL")
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def _add_refresh(tx: Tx, token: str, grant_id: str, expires: float) -> None:
    tx.run(
        "INSERT INTO oauth_refresh (token_sha, grant_id, expires_epoch) VALUES (?, ?, ?)",
        [digest(token), grant_id, expires],
    )


def _grant_values(grant: Grant) -> list[Any]:
    return [
        grant.grant_id,
        grant.actor,
        grant.client_id,
        grant.client_name,
        " ".join(grant.scopes),
        grant.resource,
        grant.created_at,
        grant.refreshed_epoch,
        grant.revoked_epoch,
        grant.revoked_reason,
    ]


def _grant_record(grant: Grant) -> dict[str, Any]:
    return dict(zip(_GRANT_COLUMNS.replace(" ", "").split(","), _grant_values(grant), strict=True))


def _from_record(record: dict[str, Any]) -> Grant:
    return _grant(tuple(record[column] for column in _GRANT_COLUMNS.replace(" ", "").split(",")))


def new_grant(
    *, actor: str, client_id: str, client_name: str | None, scopes: tuple[str, ...], resource: str, now: float
) -> Grant:
    """A grant not yet stored (a code carries it until it is spent)."""
    return Grant(
        grant_id=secrets.token_urlsafe(12),
        actor=actor,
        client_id=client_id,
        client_name=client_name,
        scopes=scopes,
        resource=resource,
        created_at=timestamp(now),
        refreshed_epoch=None,
        revoked_epoch=None,
        revoked_reason=None,
    )
