"""The team's OpenID Provider, as the tracker uses it: its discovery document, and its tokens verified by JWKS.

``--oidc-issuer`` names it. Its configuration is read from ``<issuer>/.well-known/openid-configuration`` when
first needed (and kept), and must name that exact issuer (OpenID Connect Discovery §4.3: a document that names
another is refused, as SEP-2468 asks of clients). Its keys come from its ``jwks_uri`` through PyJWT's JWKS client
(fetched off the event loop, cached five minutes). The provider is the operator's choice, not a caller's, yet its
answers are still read under a byte cap and a timeout, like every remote answer.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from bee_tracker.auth import EC_ALGORITHMS, OKP_ALGORITHMS, RSA_ALGORITHMS, AuthError, Verifier, shown

#: The largest discovery document or token response read, in bytes.
MAX_ANSWER_BYTES = 256 * 1024
TIMEOUT_SECONDS = 10.0


def read_json(method: str, url: str, **request: Any) -> dict[str, Any]:
    """A JSON object from ``url``, read under :data:`MAX_ANSWER_BYTES` and :data:`TIMEOUT_SECONDS`.

    Raises:
        AuthError: it cannot be reached, answers an error status, is too large, or is not a JSON object.
    """
    import httpx

    where = shown(url, 96)
    try:
        with (
            httpx.Client(timeout=TIMEOUT_SECONDS, trust_env=False, follow_redirects=False) as http,
            http.stream(method, url, **request) as response,
        ):
            body = bytearray()
            for chunk in response.iter_raw():
                body += chunk
                if len(body) > MAX_ANSWER_BYTES:
                    raise AuthError(
                        f"the identity provider's answer at {where} is larger than {MAX_ANSWER_BYTES} bytes"
                    )
            status = response.status_code
    except httpx.HTTPError as exc:
        raise AuthError(f"the identity provider at {where} cannot be reached ({type(exc).__name__})") from None
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        document = None
    if not isinstance(document, dict):
        raise AuthError(f"the identity provider's answer at {where} (HTTP {status}) is not a JSON object")
    if status >= 400:
        error = shown(str(document.get("error_description") or document.get("error") or ""), 200)
        raise AuthError(f"the identity provider refused (HTTP {status}): {error}")
    return document


class OpenIdProvider:
    """An OpenID Provider at ``issuer``; tokens' actor from ``actor_claim`` (else ``sub``), as for pasted ones."""

    fetches_keys = True

    def __init__(self, issuer: str, *, actor_claim: str = "email", max_lifetime_seconds: int = 7 * 86400) -> None:
        self.issuer = issuer
        self.actor_claim = actor_claim
        self.max_lifetime_seconds = max_lifetime_seconds
        self._configuration: dict[str, Any] | None = None
        self._verifier: Verifier | None = None
        self._lock = threading.Lock()

    def configuration(self) -> dict[str, Any]:
        """Its discovery document (read once).

        Raises:
            AuthError: it cannot be read, names another issuer, or lacks what the tracker uses.
        """
        with self._lock:
            if self._configuration is None:
                found = read_json("GET", self.issuer.rstrip("/") + "/.well-known/openid-configuration")
                if found.get("issuer") != self.issuer:
                    named = shown(str(found.get("issuer")), 96)
                    raise AuthError(
                        f"the identity provider's discovery document names the issuer {named}, not "
                        f"{shown(self.issuer, 96)} (--oidc-issuer must be exactly its issuer)"
                    )
                for key in ("jwks_uri", "authorization_endpoint", "token_endpoint"):
                    if not isinstance(found.get(key), str):
                        raise AuthError(f"the identity provider's discovery document has no {key}")
                self._configuration = found
            return self._configuration

    def _keys(self) -> Verifier:
        import jwt

        if self._verifier is None:
            client = jwt.PyJWKClient(self.configuration()["jwks_uri"], cache_keys=True, lifespan=300, timeout=10)
            self._verifier = Verifier(
                algorithms=RSA_ALGORITHMS + EC_ALGORITHMS + OKP_ALGORITHMS,
                jwks=client,
                issuer=self.issuer,
                actor_claim=self.actor_claim,
                max_lifetime_seconds=self.max_lifetime_seconds,
            )
        return self._verifier

    def verified(self, token: str, *, audience: str) -> tuple[str, dict[str, Any]]:
        """The actor and claims of a token this provider signed for ``audience``.

        Raises:
            AuthError: the provider cannot be read, or the token is refused (signature, ``iss``, ``aud``, times,
                actor), saying why.
        """
        return self._keys().verified(token, audience=audience)
