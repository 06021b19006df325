"""The tracker as a client (a relying party) of the team's OpenID Provider, for signing people in to the board: the
authorization URL it sends a browser to, and the code it gets back turned into a verified actor.

The authorization code flow with PKCE (S256) and a ``nonce``; the code is exchanged at the provider's token
endpoint (with the client secret from ``--oidc-client-secret-file`` when there is one, else as a public client),
and the ID token verified: signature by the provider's JWKS, ``iss``, ``aud`` this client, times, ``nonce``. Its
actor claim (``--actor-claim``) names who signs in, under the rules every actor follows. The pages around it are
:mod:`bee_tracker.board.idp`'s.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from urllib.parse import urlencode, urlparse

from bee_tracker.auth import AuthError
from bee_tracker.oauth.idp import OpenIdProvider, read_json
from bee_tracker.store.grants import Grants

SCOPE = "openid email profile"


@dataclass
class RelyingParty:
    """The tracker as a client of ``provider``; ``grants`` keeps the sign-ins under way."""

    provider: OpenIdProvider
    client_id: str
    client_secret: str | None
    grants: Grants
    #: The tracker's ``--public-url``, when set: the provider sends people back there.
    public_origin: str | None = None

    @property
    def name(self) -> str:
        """What the sign-in button calls the provider: its host."""
        return urlparse(self.provider.issuer).netloc or self.provider.issuer

    def authorization_url(self, state: str, nonce: str, verifier: str, back: str) -> str:
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
        query = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": back,
            "scope": SCOPE,
            "state": state,
            "nonce": nonce,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        return f"{self.provider.configuration()['authorization_endpoint']}?{urlencode(query)}"

    def actor(self, code: str, verifier: str, back: str, nonce: str) -> str:
        """The actor of the ID token the provider gives for ``code``.

        Raises:
            AuthError: the exchange or the ID token is refused, saying why.
        """
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": back, "code_verifier": verifier}
        auth = None
        if self.client_secret is not None:
            auth = (self.client_id, self.client_secret)
        else:
            form["client_id"] = self.client_id
        answer = read_json("POST", self.provider.configuration()["token_endpoint"], data=form, auth=auth)
        id_token = answer.get("id_token")
        if not isinstance(id_token, str):
            raise AuthError("the identity provider gave no ID token (is openid among the client's scopes?)")
        actor, claims = self.provider.verified(id_token, audience=self.client_id)
        found = claims.get("nonce")
        if not isinstance(found, str) or not hmac.compare_digest(found.encode(), nonce.encode()):
            raise AuthError("the ID token's nonce is not this sign-in's")
        return actor
