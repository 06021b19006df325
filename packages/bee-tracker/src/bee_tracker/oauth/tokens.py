"""The built-in authorization server's access tokens: short-lived JWTs (RFC 9068) signed with a key from the store.

An access token is typed ``at+jwt`` and carries ``iss`` (the tracker's origin), ``aud`` (the resource it is for,
``<origin>/mcp``), ``sub`` (the actor), ``client_id``, ``scope``, ``gid`` (its grant) and ``jti``, ``iat`` and
``exp``. It is verified as a pasted token is, by signature and claims alone, with no store lookup per request: so
its cost per request is today's (``tests/perf/bench_signin.py``), and revoking its grant ends it only when it
expires, within :attr:`AccessTokens.lifetime` seconds, while its refresh tokens end at once.

The keys come from the store (so every replica signs and verifies with the same ones) and are cached in the
process; a token naming a key this process has not seen makes it reread them (off the event loop), at most once
every :data:`RELOAD_SECONDS`, so forged key ids cannot turn each request into a database read.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bee_tracker.auth import AuthError, checked_actor, shown
from bee_tracker.oauth import scopes
from bee_tracker.store.grants import Grant, Grants

ACCESS_TOKEN_TYPE = "at+jwt"  # noqa: S105 -- RFC 9068's media type, not a secret
#: The fewest seconds between two rereads of the keys caused by an unknown key id.
RELOAD_SECONDS = 5.0
#: Clock skew allowed on a token's times; the tokens are the tracker's own, so little is needed.
LEEWAY_SECONDS = 5


@dataclass(frozen=True)
class Principal:
    """Who a request speaks for: the actor, the scopes it may use (None: every scope), and, for a token from a
    sign-in, the client and the grant."""

    actor: str
    scopes: frozenset[str] | None = None
    client_id: str | None = None
    grant_id: str | None = None

    def allows(self, needed: frozenset[str]) -> bool:
        return self.scopes is None or needed <= self.scopes


class UnknownKey(AuthError):
    """The token names a key this process does not know (yet: another replica may have just made it)."""


class KeyRing:
    """The store's signing keys, cached in this process. Looking a key up never reads the store: :meth:`load` (at
    start-up) and :meth:`reload` (off the event loop, when a token names an unknown key) do."""

    def __init__(self, grants: Grants, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.grants = grants
        self._clock = clock
        self._keys: dict[str, bytes] = {}
        self._signing: tuple[str, bytes] | None = None
        self._loaded_at = float("-inf")

    def load(self) -> None:
        """Read every key, making the first one on a new store."""
        self._signing = self.grants.signing_key()
        self.reload()

    def reload(self) -> None:
        self._loaded_at = self._clock()
        self._keys = {**self._keys, **self.grants.keys()}

    def reload_due(self) -> bool:
        """Whether a reread is allowed now (at most one every :data:`RELOAD_SECONDS`)."""
        return self._clock() - self._loaded_at >= RELOAD_SECONDS

    def signing(self) -> tuple[str, bytes]:
        if self._signing is None:
            self.load()
        assert self._signing is not None
        return self._signing

    def key(self, kid: str) -> bytes | None:
        return self._keys.get(kid)


class AccessTokens:
    """Mints and verifies access tokens; ``lifetime`` is how long one lives, in seconds."""

    def __init__(self, keys: KeyRing, *, lifetime: int, clock: Callable[[], float] = time.time) -> None:
        self.keys = keys
        self.lifetime = lifetime
        self._clock = clock

    def mint(self, grant: Grant, *, issuer: str, granted: tuple[str, ...] | None = None) -> str:
        """An access token for ``grant`` (with ``granted``, a subset of its scopes, when given)."""
        import jwt

        kid, secret = self.keys.signing()
        now = int(self._clock())
        claims = {
            "iss": issuer,
            "aud": grant.resource,
            "sub": grant.actor,
            "client_id": grant.client_id,
            "scope": scopes.shown(granted if granted is not None else grant.scopes),
            "gid": grant.grant_id,
            "jti": secrets.token_urlsafe(12),
            "iat": now,
            "exp": now + self.lifetime,
        }
        return jwt.encode(claims, secret, algorithm="HS256", headers={"typ": ACCESS_TOKEN_TYPE, "kid": kid})

    def claims(self, token: str, header: dict[str, Any], *, issuer: str, audience: str | None) -> dict[str, Any]:
        """The claims of a valid access token of this server (``audience`` None: any resource of it).

        Raises:
            AuthError: not signed by a key of this server, expired, for another issuer or resource, or malformed.
        """
        import jwt

        kid = header.get("kid")
        if header.get("alg") != "HS256" or not isinstance(kid, str):
            raise AuthError("the token is not one this tracker's sign-in issued; sign in again")
        key = self.keys.key(kid)
        if key is None:
            raise UnknownKey("the token is not one this tracker's sign-in issued (unknown key); sign in again")
        options: jwt.types.Options = {
            "require": ["exp", "iat", "sub", "aud", "iss"],
            "verify_aud": audience is not None,
        }
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=["HS256"],
                issuer=issuer,
                audience=audience,
                leeway=LEEWAY_SECONDS,
                options=options,
            )
        except jwt.ExpiredSignatureError:
            raise AuthError("token expired; your client refreshes it or signs in again") from None
        except jwt.InvalidIssuerError:
            raise AuthError(f"the token was issued by another server, not {shown(issuer, 96)}") from None
        except jwt.InvalidAudienceError:
            raise AuthError(f"the token is for another resource, not {shown(audience or '', 96)}") from None
        except jwt.PyJWTError:
            raise AuthError("invalid signature or claims") from None
        return claims

    def principal(self, token: str, header: dict[str, Any], *, issuer: str, audience: str) -> Principal:
        """Who a valid access token for ``audience`` speaks for.

        Raises:
            AuthError: as :meth:`claims`, or its subject is not a usable actor.
        """
        claims = self.claims(token, header, issuer=issuer, audience=audience)
        subject = claims["sub"]
        if not isinstance(subject, str):
            raise AuthError("the token's sub claim (its actor) must be a string")
        scope = claims.get("scope")
        return Principal(
            actor=checked_actor(subject, "sub"),
            scopes=scopes.parse(scope if isinstance(scope, str) else ""),
            client_id=str(claims.get("client_id")),
            grant_id=str(claims.get("gid")),
        )
