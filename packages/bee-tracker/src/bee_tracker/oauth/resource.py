"""The tracker as a protected resource: which tokens ``/mcp`` takes in each sign-in mode, and what its challenge
tells a client that has none.

=========  ===================================================================================================
mode       tokens ``/mcp`` takes
=========  ===================================================================================================
token      pasted JWTs only, verified as configured (the home's key, a secret file, a PEM key or a JWKS): today's
           mode, with today's challenge (no metadata is published, since no server signs anyone in)
builtin    the built-in authorization server's access tokens (``at+jwt``, ``iss`` this origin, ``aud`` its
           ``/mcp``), and pasted JWTs unless ``--no-pasted-tokens``
idp        the team's OpenID Provider's tokens (``iss`` its issuer, ``aud`` this origin's ``/mcp``, keys from its
           JWKS), and pasted JWTs unless ``--no-pasted-tokens``
=========  ===================================================================================================

Which verifier a token meets is chosen by its unverified ``iss`` (and, for the built-in server's, its ``typ``);
the chosen one then checks everything, the signature first. In the two sign-in modes a 401 names the protected
resource metadata and the scopes ``/mcp`` needs (RFC 9728 §5.1, RFC 6750 §3), and a token without a scope the
request needs is answered 403 ``insufficient_scope`` with the same challenge (:mod:`bee_tracker.middleware`).
"""

from __future__ import annotations

from dataclasses import dataclass

from bee_tracker.auth import AuthError, Verifier, header_of, unverified_claims
from bee_tracker.oauth import origin, scopes
from bee_tracker.oauth.idp import OpenIdProvider
from bee_tracker.oauth.tokens import ACCESS_TOKEN_TYPE, AccessTokens, Principal

TOKEN, BUILTIN, IDP = "token", "builtin", "idp"
MODES = (TOKEN, BUILTIN, IDP)


@dataclass
class SignIn:
    """How the tracker checks the tokens of ``/mcp`` and what it advertises, in one of :data:`MODES`."""

    mode: str
    pasted: Verifier | None
    access: AccessTokens | None = None
    idp: OpenIdProvider | None = None
    public_origin: str | None = None

    @property
    def advertises(self) -> bool:
        """Whether the tracker publishes protected resource metadata (a sign-in mode)."""
        return self.mode != TOKEN

    @property
    def fetches_keys(self) -> bool:
        """Whether verifying may fetch a JWKS over the network (so it must not run on the event loop)."""
        return any(v is not None and v.fetches_keys for v in (self.pasted, self.idp))

    def authorization_server(self, here: str) -> str:
        """The issuer clients sign in at: this origin, or the team's OpenID Provider."""
        if self.mode == IDP and self.idp is not None:
            return self.idp.issuer
        return here

    def challenge(self, here: str) -> list[tuple[str, str]]:
        """The parameters a challenge adds in a sign-in mode: where the metadata is, and the scopes to ask for."""
        if not self.advertises:
            return []
        return [("resource_metadata", origin.metadata_url(here)), ("scope", scopes.shown(scopes.FOR_MCP))]

    def principal(self, token: str, here: str) -> Principal:
        """Who a valid token for this origin's ``/mcp`` speaks for.

        Raises:
            AuthError: no verifier of this mode takes it, saying why.
        """
        if self.mode == TOKEN:
            return self._pasted(token)
        issuer = unverified_claims(token).get("iss")
        if self.access is not None and issuer == here:
            header = header_of(token)
            if header.get("typ") == ACCESS_TOKEN_TYPE:
                return self.access.principal(token, header, issuer=here, audience=origin.resource(here))
        if self.idp is not None and issuer == self.idp.issuer:
            actor, claims = self.idp.verified(token, audience=origin.resource(here))
            return Principal(actor=actor, scopes=granted(claims), client_id=_text(claims.get("client_id")))
        return self._pasted(token)

    def _pasted(self, token: str) -> Principal:
        if self.pasted is None:
            raise AuthError(
                "this tracker takes only tokens from signing in (pasted tokens are turned off): sign in through your "
                "MCP client"
            )
        return Principal(actor=self.pasted.actor(token))


def granted(claims: dict[str, object]) -> frozenset[str] | None:
    """The scopes an identity provider's token grants: its ``scope`` (a string) or ``scp`` (a list); None (every
    scope) when it names none, since the provider then decides access by the audience alone."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return scopes.parse(scope)
    listed = claims.get("scp")
    if isinstance(listed, list):
        return frozenset(item for item in listed if isinstance(item, str))
    return None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
