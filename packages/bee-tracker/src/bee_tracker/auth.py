"""Verifying the signed JWT every /mcp request carries, and minting local tokens.

HS256 with a shared secret for one host; RS*/PS*/ES*/EdDSA with a PEM public key or a JWKS (file or URL) for teams.
A numeric ``exp`` is required, and a token may live at most ``max_lifetime_seconds`` (``exp`` from now, and from
``iat`` when present); issuer and audience are checked when configured; ``alg: none`` and algorithm confusion (an
HMAC token checked with a public key, or any algorithm outside the key's family) are refused before verification.

The actor is the configured claim (default ``email``), else ``sub``: a string of at most :data:`MAX_ACTOR_CHARS`
printable characters (no control characters, no lone surrogates, no line or paragraph separators), or the token is
refused, since the actor is written into the store with every write and shown on every board page. Even signed, a
token's claims are someone else's data: an identity provider may carry whatever a user typed into their profile.

A one-time board sign-in link carries a token typed ``bee-board-link+jwt`` (its ``typ`` header, RFC 8725's explicit
typing): :meth:`Verifier.link_actor` accepts only such a token, and :meth:`Verifier.actor` (``/mcp`` and the board's
sign-in form) refuses it, so a link's token signs in once, at its link, and is good for nothing else.

Everything in a token is attacker-controlled data until its signature is verified: a refusal's message names the
offending field in words of its own and shows a value only through :func:`shown` (printable ASCII without quotes or
backslashes, bounded), so it is safe in a log line, a JSON body and a ``WWW-Authenticate`` header alike.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bee_tracker.config import DEFAULT_MAX_TOKEN_LIFETIME_SECONDS

if TYPE_CHECKING:
    import jwt

# PyJWT (and cryptography under it) is imported where a token is read or made, not with this module: it is among the
# largest imports a tracker would make before it listens, and `/health` need not wait for it (the app's start-up
# loads it in the background: bee_tracker.host).

RSA_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
EC_ALGORITHMS = ("ES256", "ES384", "ES512")
OKP_ALGORITHMS = ("EdDSA",)

#: Longest actor accepted, in characters (an e-mail address is at most 320).
MAX_ACTOR_CHARS = 320
#: The ``typ`` header of a one-time board sign-in link's token (see the module docstring).
LINK_TOKEN_TYPE = "bee-board-link+jwt"  # noqa: S105 -- a media type naming a kind of token, not a secret

#: Characters :func:`shown` lets through: RFC 6750's error_description set (%x20-21 / %x23-5B / %x5D-7E).
_SHOWABLE = frozenset(chr(c) for c in range(0x20, 0x7F)) - {'"', "\\"}


class AuthError(Exception):
    """Why a token was refused; safe to show and log (it never contains the token or unsanitized token text)."""


def shown(value: str, limit: int = 32) -> str:
    """``value`` made safe to show: other characters than printable ASCII (and quotes, backslashes) become ``?``,
    and at most ``limit`` characters are kept (``...`` marks a cut)."""
    text = "".join(c if c in _SHOWABLE else "?" for c in value[: limit + 1])
    return text if len(text) <= limit else text[:limit] + "..."


def _span(seconds: int) -> str:
    return f"{seconds // 86400} days" if seconds % 86400 == 0 else f"{seconds} seconds"


@dataclass
class Verifier:
    """Verifies tokens against one configured key source and returns the actor."""

    algorithms: tuple[str, ...]
    key: Any = None  # HMAC secret (bytes) or a public key object
    jwks: jwt.PyJWKClient | jwt.PyJWKSet | None = None
    issuer: str | None = None
    audience: str | None = None
    actor_claim: str = "email"
    leeway_seconds: int = 30
    max_lifetime_seconds: int = DEFAULT_MAX_TOKEN_LIFETIME_SECONDS

    @property
    def fetches_keys(self) -> bool:
        """Whether verifying may fetch a JWKS over the network (so it must not run on the event loop)."""
        import jwt

        return isinstance(self.jwks, jwt.PyJWKClient)

    def actor(self, token: str) -> str:
        """The actor named by a valid token (not a sign-in link's: see :meth:`link_actor`).

        Raises:
            AuthError: the token is malformed, unsigned, signed with another algorithm or key, expired, lacks a
                numeric ``exp``, lives longer than the maximum, has the wrong issuer or audience, names no actor or
                an actor that is not a printable string of at most :data:`MAX_ACTOR_CHARS` characters, or is a
                one-time sign-in link's token.
        """
        header = _header(token)
        if _is_link(header):
            raise AuthError(
                "this is a one-time sign-in link's token, which works only by opening its link once; use a token "
                "from `bee tracker token` (or your identity provider) here"
            )
        return self._verified(token, header, self.audience)[0]

    def verified(self, token: str, *, audience: str | None) -> tuple[str, dict[str, Any]]:
        """The actor and the claims of a valid token (not a sign-in link's) whose ``aud`` names ``audience`` (None:
        no audience is required), checked as :meth:`actor` checks any token otherwise.

        Raises:
            AuthError: :meth:`actor` would refuse it, or its audience is not ``audience``.
        """
        header = _header(token)
        if _is_link(header):
            raise AuthError("this is a one-time sign-in link's token, which works only by opening its link once")
        return self._verified(token, header, audience)

    def link_actor(self, token: str) -> str:
        """The actor of a valid one-time sign-in link's token (typed :data:`LINK_TOKEN_TYPE`), checked exactly as
        :meth:`actor` checks any other token.

        Raises:
            AuthError: it is not a link's token, or :meth:`actor` would refuse it for any other reason.
        """
        header = _header(token)
        if not _is_link(header):
            raise AuthError("this is not a sign-in link's token; get a link with `bee tracker open`")
        return self._verified(token, header, self.audience)[0]

    def _verified(self, token: str, header: dict[str, Any], audience: str | None) -> tuple[str, dict[str, Any]]:
        import jwt

        algorithm = header.get("alg")
        if not isinstance(algorithm, str):
            raise AuthError("the token header's alg must be a string")
        if algorithm.lower() == "none":
            raise AuthError("unsigned tokens (alg none) are refused")
        if algorithm not in self.algorithms:
            accepted = ", ".join(self.algorithms)
            raise AuthError(f"algorithm {shown(algorithm)} is not accepted here (accepted: {accepted})")
        key = self._key_for(header, algorithm)
        options: jwt.types.Options = {
            "require": ["exp"],
            # The time claims are checked below, strictly: PyJWT would take "exp": "9999999999" or true.
            "verify_exp": False,
            "verify_iat": False,
            "verify_nbf": False,
            "verify_aud": audience is not None,
        }
        try:
            claims = jwt.decode(
                token, key, algorithms=[algorithm], issuer=self.issuer, audience=audience, options=options
            )
        except jwt.MissingRequiredClaimError as exc:
            raise AuthError(f"token lacks the {exc.claim} claim") from None
        except jwt.InvalidIssuerError:
            raise AuthError("wrong issuer") from None
        except jwt.InvalidAudienceError:
            raise AuthError("wrong audience") from None
        except jwt.PyJWTError:
            raise AuthError("invalid signature or claims") from None
        self._check_times(claims, time.time())
        for claim in dict.fromkeys((self.actor_claim, "sub")):
            value = claims.get(claim)
            if value is None:
                continue
            if not isinstance(value, str):
                raise AuthError(f"the token's {shown(claim)} claim (its actor) must be a string")
            # Only spaces are trimmed: any other character at either end (a tab, a paragraph separator) is refused
            # below rather than quietly removed, so two different claims never become one actor.
            if value.strip(" "):
                return checked_actor(value.strip(" "), claim), claims
        raise AuthError(f"token names no actor (no {shown(self.actor_claim)} or sub claim)")

    def _check_times(self, claims: dict[str, Any], now: float) -> None:
        exp = _seconds(claims, "exp")
        assert exp is not None  # required above
        leeway, longest = self.leeway_seconds, self.max_lifetime_seconds
        if exp <= now - leeway:
            raise AuthError("token expired")
        if exp - now > longest + leeway:
            raise AuthError(f"token expires more than {_span(longest)} from now, longer than this server accepts")
        iat = _seconds(claims, "iat")
        if iat is not None and iat > now + leeway:
            raise AuthError("token issued in the future (iat)")
        if iat is not None and exp - iat > longest:
            raise AuthError(f"token lives longer than {_span(longest)} (exp - iat), longer than this server accepts")
        nbf = _seconds(claims, "nbf")
        if nbf is not None and nbf > now + leeway:
            raise AuthError("token not yet valid (nbf)")

    def _key_for(self, header: dict[str, Any], algorithm: str) -> Any:
        """The key that verifies ``algorithm`` for this header: the configured one, or the JWKS key its kid names."""
        import jwt

        if self.jwks is None:
            return self.key
        kid = header.get("kid")  # a string or absent: PyJWT refused any other kid already
        if isinstance(self.jwks, jwt.PyJWKClient):
            if kid is None:
                raise AuthError("token has no kid, which a JWKS needs to pick its key")
            try:
                candidates = [self.jwks.get_signing_key(kid)]
            except jwt.PyJWTError:
                raise AuthError("no key in the JWKS matches the token's kid") from None
        else:
            candidates = [k for k in self.jwks.keys if kid is None or k.key_id == kid]
            if not candidates:
                raise AuthError("no key in the JWKS matches the token's kid")
        for candidate in candidates:
            if algorithm in _family_of(candidate.key):
                return candidate.key
        # A key of another family would make the library fail in ways of its own (or, for HMAC, verify with
        # public key bytes as the secret): refuse here, by name.
        raise AuthError(f"the JWKS key for this token cannot verify {algorithm}")


def unverified_claims(token: str) -> dict[str, Any]:
    """The claims of a token read without checking anything (to choose how to verify it), or ``{}``."""
    import base64
    import json

    parts = token.split(".")
    if len(parts) != 3 or len(parts[1]) > 64 * 1024:
        return {}
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, RecursionError):
        return {}
    return claims if isinstance(claims, dict) else {}


def header_of(token: str) -> dict[str, Any]:
    """The token's header, unverified.

    Raises:
        AuthError: it is not a JWT with a JSON object header, saying what is wrong.
    """
    return _header(token)


def _header(token: str) -> dict[str, Any]:
    import jwt

    try:
        header: dict[str, Any] = jwt.get_unverified_header(token)
    except jwt.PyJWTError as exc:
        # Say which part is wrong: most often the token was cut when it was copied, and local tokens have no kid.
        if token.count(".") != 2:
            problem = "a JWT is three base64url parts joined by dots (header.payload.signature); copy the whole token"
        elif "Key ID" in str(exc):
            problem = "its header's kid (key id) is not a string"
        else:
            problem = "its header is not a base64url-encoded JSON object; copy the whole token"
        raise AuthError(f"malformed token: {problem}") from None
    return header


def _is_link(header: dict[str, Any]) -> bool:
    """Whether the header types the token as a sign-in link's (media types are case-insensitive, and RFC 7515 lets
    ``application/`` be left out)."""
    typ = header.get("typ")
    return isinstance(typ, str) and typ.lower().removeprefix("application/") == LINK_TOKEN_TYPE


def checked_actor(actor: str, claim: str = "actor") -> str:
    """``actor`` when it is a usable actor: at most :data:`MAX_ACTOR_CHARS` characters, every one printable (no
    control or format characters, lone surrogates, unassigned code points, or line and paragraph separators).

    Raises:
        AuthError: it is not, saying why (never quoting it).
    """
    if len(actor) > MAX_ACTOR_CHARS:
        raise AuthError(f"the token's {shown(claim)} claim (its actor) is longer than {MAX_ACTOR_CHARS} characters")
    if not actor.isprintable():
        # str.isprintable is False for every character in Unicode's Other and Separator categories but the space:
        # controls, format characters (bidirectional overrides), surrogates, private use, unassigned, and line and
        # paragraph separators. A lone surrogate cannot even be written to the store as UTF-8.
        raise AuthError(
            f"the token's {shown(claim)} claim (its actor) holds a character that is not printable text (a control "
            "or format character, a lone surrogate, or a line break)"
        )
    return actor


def _seconds(claims: dict[str, Any], name: str) -> float | None:
    """A time claim as a finite number of seconds since the epoch, None when absent.

    Raises:
        AuthError: it is present but not a number (a string, a boolean, null, an object, an infinity).
    """
    if name not in claims:
        return None
    value = claims[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise AuthError(f"the token's {name} claim must be a number of seconds since the epoch")
    return float(value)


def _family_of(key: Any) -> tuple[str, ...]:
    try:
        return algorithms_for(key)
    except ValueError:
        return ()


def algorithms_for(public_key: Any) -> tuple[str, ...]:
    """The algorithms a public key may verify: only its own family (no HMAC with a public key)."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa

    if isinstance(public_key, rsa.RSAPublicKey):
        return RSA_ALGORITHMS
    if isinstance(public_key, ec.EllipticCurvePublicKey):
        return EC_ALGORITHMS
    if isinstance(public_key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey):
        return OKP_ALGORITHMS
    raise ValueError(f"unsupported public key type {type(public_key).__name__}")


def hmac_verifier(secret: bytes, **options: Any) -> Verifier:
    if len(secret) < 32:
        raise ValueError("an HS256 secret must be at least 32 bytes")
    return Verifier(algorithms=("HS256",), key=secret, **options)


def pem_verifier(pem: bytes, **options: Any) -> Verifier:
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    public_key = load_pem_public_key(pem)
    return Verifier(algorithms=algorithms_for(public_key), key=public_key, **options)


def jwks_verifier(source: str, **options: Any) -> Verifier:
    """A verifier over a JWKS given as a URL (fetched and cached by PyJWT) or a file path."""
    import jwt

    if source.startswith(("https://", "http://")):
        client = jwt.PyJWKClient(source, cache_keys=True, lifespan=300, timeout=10)
        return Verifier(algorithms=RSA_ALGORITHMS + EC_ALGORITHMS + OKP_ALGORITHMS, jwks=client, **options)
    keyset = jwt.PyJWKSet.from_json(Path(source).read_text(encoding="utf-8"))
    allowed: list[str] = []
    for key in keyset.keys:
        allowed.extend(a for a in algorithms_for(key.key) if a not in allowed)
    return Verifier(algorithms=tuple(allowed), jwks=keyset, **options)


def mint(
    secret: bytes,
    actor: str,
    *,
    ttl_seconds: int = 8 * 3600,
    issuer: str | None = None,
    audience: str | None = None,
    max_lifetime_seconds: int = DEFAULT_MAX_TOKEN_LIFETIME_SECONDS,
) -> str:
    """An HS256 token for ``actor`` (as both ``sub`` and ``email``), valid for ``ttl_seconds``.

    Raises:
        ValueError: ``ttl_seconds`` is not positive or exceeds ``max_lifetime_seconds`` (a server with that maximum
            would refuse the token).
    """
    if not 0 < ttl_seconds <= max_lifetime_seconds:
        raise ValueError(f"a token lifetime must be between 1 second and {_span(max_lifetime_seconds)}")
    issued = int(time.time())
    claims: dict[str, Any] = {"sub": actor, "email": actor, "iat": issued, "exp": issued + ttl_seconds}
    if issuer:
        claims["iss"] = issuer
    if audience:
        claims["aud"] = audience
    import jwt

    return jwt.encode(claims, secret, algorithm="HS256")
