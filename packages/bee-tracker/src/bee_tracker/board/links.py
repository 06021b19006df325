"""One-time sign-in links: what `bee tracker open` mints, and what makes a token good for a link.

A link carries a token of this tracker typed as a link's (its ``typ`` header is
:data:`~bee_tracker.auth.LINK_TOKEN_TYPE`), verified by the same :class:`~bee_tracker.auth.Verifier`, so the issuer,
audience, keys and algorithms configured for ``/mcp`` apply unchanged, that lives at most :data:`LINK_MAX_SECONDS`
and has a token id (``jti``). Only the link route takes it (:meth:`~bee_tracker.auth.Verifier.link_actor`): ``/mcp``
and the sign-in form refuse it, and the link route refuses every other token. The board records the id when the
link is used, in the store (:meth:`~.sessions.Sessions.spend_link`), so it signs in once, on any replica; and then
redirects, so the token does not stay in the address bar. No access log line holds it: the HTTP edge never logs a
query string (:mod:`bee_hostkit.http.access_log`).
"""

from __future__ import annotations

import math
import secrets
import time
from dataclasses import dataclass
from typing import Any

import jwt

from bee_tracker.auth import LINK_TOKEN_TYPE, AuthError

#: The longest a link's token may live (exp - iat), in seconds.
LINK_MAX_SECONDS = 60
_MAX_ID_CHARS = 200


@dataclass(frozen=True)
class LinkClaims:
    """What the board needs from a verified link token: its id and when it expires."""

    link_id: str
    expires: float


def mint_link_token(
    secret: bytes,
    actor: str,
    *,
    issuer: str | None = None,
    audience: str | None = None,
    lifetime: int = 30,
    scope: str | None = None,
) -> str:
    """An HS256 token for ``actor``, typed as a link's, that a board accepts once, as a sign-in link, within
    ``lifetime`` seconds (and that nothing else accepts); with ``scope``, the session it opens has only those
    scopes.

    Raises:
        ValueError: ``lifetime`` is not between 1 and :data:`LINK_MAX_SECONDS`.
    """
    if not 0 < lifetime <= LINK_MAX_SECONDS:
        raise ValueError(f"a sign-in link lives between 1 and {LINK_MAX_SECONDS} seconds")
    issued = int(time.time())
    claims: dict[str, Any] = {
        "sub": actor,
        "email": actor,
        "iat": issued,
        "exp": issued + lifetime,
        "jti": secrets.token_urlsafe(16),
    }
    if issuer:
        claims["iss"] = issuer
    if audience:
        claims["aud"] = audience
    if scope:
        claims["scope"] = scope
    return jwt.encode(claims, secret, algorithm="HS256", headers={"typ": LINK_TOKEN_TYPE})


def claims_of(token: str) -> dict[str, Any]:
    """The claims of a token the verifier has already accepted (its signature is not checked again here)."""
    claims: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
    return claims


def link_claims(token: str) -> LinkClaims:
    """What makes a verified token a sign-in link.

    Raises:
        AuthError: it has no string ``jti``, no numeric ``iat``, or lives longer than :data:`LINK_MAX_SECONDS`.
    """
    claims = claims_of(token)
    link_id = claims.get("jti")
    if not isinstance(link_id, str) or not 0 < len(link_id) <= _MAX_ID_CHARS:
        raise AuthError("a sign-in link's token needs a token id (jti); get a new link with `bee tracker open`")
    issued, expires = _seconds(claims.get("iat")), _seconds(claims.get("exp"))
    if issued is None or expires is None:
        raise AuthError("a sign-in link's token needs numeric iat and exp")
    if expires - issued > LINK_MAX_SECONDS:
        raise AuthError(
            f"a sign-in link's token may live at most {LINK_MAX_SECONDS} seconds; paste a longer-lived token on the "
            "sign-in page instead"
        )
    return LinkClaims(link_id, expires)


def session_end(token: str) -> float | None:
    """When a verified token expires (its ``exp``), which a session opened with it never outlives."""
    return _seconds(claims_of(token).get("exp"))


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)
