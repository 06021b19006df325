"""Verifying the signed JWT every /mcp request carries, and minting local tokens.

HS256 with a shared secret for one host; RS*/PS*/ES*/EdDSA with a PEM public key or a JWKS (file or URL) for teams.
``exp`` is required; issuer and audience are checked when configured; ``alg: none`` and algorithm confusion (an
HMAC token checked with a public key, or any algorithm outside the key's family) are refused before verification.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key

HMAC_ALGORITHMS = ("HS256", "HS384", "HS512")
RSA_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
EC_ALGORITHMS = ("ES256", "ES384", "ES512")
OKP_ALGORITHMS = ("EdDSA",)


class AuthError(Exception):
    """Why a token was refused; safe to show (it never contains the token)."""


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

    def actor(self, token: str) -> str:
        """The actor named by a valid token.

        Raises:
            AuthError: the token is malformed, unsigned, signed with another algorithm or key, expired, lacks
                ``exp``, has the wrong issuer or audience, or names no actor.
        """
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise AuthError("malformed token") from None
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm.lower() == "none":
            raise AuthError("unsigned tokens (alg none) are refused")
        if algorithm not in self.algorithms:
            raise AuthError(f"algorithm {algorithm} is not accepted here")
        key = self._key_for(token, header)
        options: jwt.types.Options = {"require": ["exp"], "verify_aud": self.audience is not None}
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                issuer=self.issuer,
                audience=self.audience,
                options=options,
                leeway=self.leeway_seconds,
            )
        except jwt.ExpiredSignatureError:
            raise AuthError("token expired") from None
        except jwt.MissingRequiredClaimError as exc:
            raise AuthError(f"token lacks the {exc.claim} claim") from None
        except jwt.InvalidIssuerError:
            raise AuthError("wrong issuer") from None
        except jwt.InvalidAudienceError:
            raise AuthError("wrong audience") from None
        except jwt.PyJWTError:
            raise AuthError("invalid signature or claims") from None
        for claim in (self.actor_claim, "sub"):
            value = claims.get(claim)
            if isinstance(value, str) and value.strip():
                return value.strip()
        raise AuthError(f"token names no actor (no {self.actor_claim} or sub claim)")

    def _key_for(self, token: str, header: dict[str, Any]) -> Any:
        if self.jwks is None:
            return self.key
        try:
            if isinstance(self.jwks, jwt.PyJWKClient):
                return self.jwks.get_signing_key_from_jwt(token).key
            kid = header.get("kid")
            keys = [k for k in self.jwks.keys if kid is None or k.key_id == kid]
            if not keys:
                raise AuthError("no key in the JWKS matches the token's kid")
            return keys[0].key
        except jwt.PyJWTError:
            raise AuthError("no usable key in the JWKS for this token") from None


def algorithms_for(public_key: Any) -> tuple[str, ...]:
    """The algorithms a public key may verify: only its own family (no HMAC with a public key)."""
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
    public_key = load_pem_public_key(pem)
    return Verifier(algorithms=algorithms_for(public_key), key=public_key, **options)


def jwks_verifier(source: str, **options: Any) -> Verifier:
    """A verifier over a JWKS given as a URL (fetched and cached by PyJWT) or a file path."""
    if source.startswith(("https://", "http://")):
        client = jwt.PyJWKClient(source, cache_keys=True, lifespan=300)
        return Verifier(algorithms=RSA_ALGORITHMS + EC_ALGORITHMS + OKP_ALGORITHMS, jwks=client, **options)
    keyset = jwt.PyJWKSet.from_json(Path(source).read_text(encoding="utf-8"))
    allowed: list[str] = []
    for key in keyset.keys:
        allowed.extend(a for a in algorithms_for(key.key) if a not in allowed)
    return Verifier(algorithms=tuple(allowed), jwks=keyset, **options)


def load_or_create_secret(path: Path) -> bytes:
    """The embedded default HS256 key: created on first use with 0600 permissions, then reused."""
    if path.exists():
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_bytes(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process created it first: use theirs
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(secret.hex() + "\n")
    return secret


def mint(
    secret: bytes, actor: str, *, ttl_seconds: int = 8 * 3600, issuer: str | None = None, audience: str | None = None
) -> str:
    """An HS256 token for ``actor`` (as both ``sub`` and ``email``), valid for ``ttl_seconds``."""
    issued = int(time.time())
    claims: dict[str, Any] = {"sub": actor, "email": actor, "iat": issued, "exp": issued + ttl_seconds}
    if issuer:
        claims["iss"] = issuer
    if audience:
        claims["aud"] = audience
    return jwt.encode(claims, secret, algorithm="HS256")
