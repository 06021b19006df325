"""The built-in authorization server's decisions, as the SDK's provider interface asks for them.

The SDK's handlers (``mcp.server.auth.handlers``) parse and answer every request of ``/authorize``, ``/token``,
``/register`` and ``/revoke``, check PKCE, redirect URIs, scopes and client authentication; this provider decides
what they cannot: which clients exist (registered ones, and Client ID Metadata Documents, :mod:`.documents`), where
a person consents (the board's consent page: :meth:`Provider.authorize` returns its address), and what a code, a
refresh token and a revocation do to a grant (:mod:`bee_tracker.store.grants`).

- A code works once. Used a second time (here or on another replica, even racing the first use), it is refused and
  the grant it started is revoked (RFC 6749 §4.1.2): whoever replays it, the tokens it gave are ended.
- A refresh token works once: each use returns a new one (rotation). Presented again after that, it is a replay:
  the grant is revoked, and every token of it ends (refresh tokens at once, access tokens when they expire).
- Each step's refusal says what happened; the SDK shows it to the client as ``error_description``.
"""

from __future__ import annotations

import logging
import re
import secrets
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from bee_tracker.auth import AuthError
from bee_tracker.oauth import origin, scopes
from bee_tracker.oauth.clients import check_metadata, client_from
from bee_tracker.oauth.documents import DocumentError, Documents, is_document_id
from bee_tracker.oauth.tokens import ACCESS_TOKEN_TYPE, AccessTokens
from bee_tracker.store.grants import CONSENT, Grant, Grants

logger = logging.getLogger("bee.tracker.oauth")

#: A PKCE S256 challenge: BASE64URL(SHA-256(verifier)), 43 characters (RFC 7636 §4.2).
_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")
#: The longest ``state`` carried through a sign-in.
MAX_STATE_CHARS = 4096
_CODE_REUSED = "this authorization code was already used; every token it gave is revoked: sign in again"


@dataclass(frozen=True)
class Lifetimes:
    """How long each thing lives, in seconds."""

    access: int
    refresh: int
    code: int = 120
    consent: int = 600


class BeeCode(AuthorizationCode):
    """A code as the store has it: the grant it starts, its issuer, and whether it was used already."""

    grant: dict[str, Any]
    issuer: str
    spent: bool = False


class BeeRefresh(RefreshToken):
    """A refresh token as the store has it: its grant, and why it can no longer be used (None: it can)."""

    grant: dict[str, Any]
    refused: str | None = None


def _grant_of(record: dict[str, Any]) -> Grant:
    return Grant(**{**record, "scopes": tuple(record["scopes"])})


def _record(grant: Grant) -> dict[str, Any]:
    return {**grant.__dict__, "scopes": list(grant.scopes)}


class Provider(OAuthAuthorizationServerProvider[BeeCode, BeeRefresh, AccessToken]):
    """The tracker's authorization server over the store's :class:`~bee_tracker.store.grants.Grants`."""

    def __init__(self, grants: Grants, tokens: AccessTokens, documents: Documents, lifetimes: Lifetimes) -> None:
        self.grants = grants
        self.tokens = tokens
        self.documents = documents
        self.lifetimes = lifetimes

    async def _run(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        return await anyio.to_thread.run_sync(lambda: function(*args, **kwargs))

    # -- clients -------------------------------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if is_document_id(client_id):
            try:
                return await self.documents.client(client_id)
            except DocumentError as exc:
                logger.info("refused a client metadata document: %s", exc)
                return None
        stored = await self._run(self.grants.client, client_id)
        if stored is None or stored.kind != "registered":
            return None
        return client_from(client_id, stored.metadata, secret=stored.secret)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        check_metadata(client_info)
        if client_info.client_id is None or is_document_id(client_info.client_id):
            raise RegistrationError("invalid_client_metadata", "a registered client's id is the server's to choose")
        metadata = client_info.model_dump(
            mode="json", exclude_none=True, exclude={"client_id", "client_secret", "issuer"}
        )
        await self._run(
            self.grants.save_client, client_info.client_id, "registered", metadata, secret=client_info.client_secret
        )

    # -- authorization -------------------------------------------------------------------------------------------

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        here = origin.CURRENT.get()
        resource = origin.resource(here)
        if params.resource is not None and params.resource.rstrip("/") != resource:
            raise AuthorizeError(
                "invalid_target", f"this server signs in for {resource} only, not for another resource"
            )
        if not _CHALLENGE.fullmatch(params.code_challenge):
            raise AuthorizeError(
                "invalid_request", "code_challenge must be a PKCE S256 challenge (43 base64url characters)"
            )
        if params.state is not None and len(params.state) > MAX_STATE_CHARS:
            raise AuthorizeError("invalid_request", f"state is longer than {MAX_STATE_CHARS} characters")
        wanted = tuple(params.scopes or scopes.FOR_MCP)
        if scopes.READ not in wanted:
            raise AuthorizeError("invalid_scope", f"a sign-in for the tracker asks for {scopes.READ} at least")
        payload = {
            "client_id": client.client_id,
            "client_name": client.client_name,
            "redirect_uri": str(params.redirect_uri),
            "explicit": params.redirect_uri_provided_explicitly,
            "code_challenge": params.code_challenge,
            "state": params.state,
            "scopes": list(wanted),
            "resource": resource,
            "issuer": here,
        }
        request_id = await self._run(self.grants.hold, CONSENT, payload, lifetime=self.lifetimes.consent)
        return f"{here}{origin.BOARD_PATH}/consent?request={request_id}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> BeeCode | None:
        found = await self._run(self.grants.code, authorization_code)
        if found is None or found.grant.client_id != client.client_id:
            return None
        if found.used:
            revoked = await self._run(
                self.grants.revoke, grant_id=found.grant.grant_id, reason="authorization code used twice"
            )
            if revoked:
                logger.warning("an authorization code was used twice: grant %s revoked", found.grant.grant_id)
        payload = found.payload
        return BeeCode(
            code=authorization_code,
            scopes=list(found.grant.scopes),
            expires_at=found.expires_epoch,
            client_id=found.grant.client_id,
            code_challenge=payload["code_challenge"],
            redirect_uri=payload["redirect_uri"],
            redirect_uri_provided_explicitly=payload["explicit"],
            resource=found.grant.resource,
            subject=found.grant.actor,
            grant=_record(found.grant),
            issuer=payload["issuer"],
            spent=found.used,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: BeeCode
    ) -> OAuthToken:
        grant = _grant_of(authorization_code.grant)
        refresh = secrets.token_urlsafe(32)
        if authorization_code.spent:  # its grant was revoked as it was loaded
            raise TokenError("invalid_grant", _CODE_REUSED)
        if not await self._run(
            self.grants.spend_code, authorization_code.code, grant, refresh, refresh_lifetime=self.lifetimes.refresh
        ):
            # Spent between our read and our write: on another replica, or by a racing request here.
            await self._run(self.grants.revoke, grant_id=grant.grant_id, reason="authorization code used twice")
            logger.warning("an authorization code was used twice: grant %s revoked", grant.grant_id)
            raise TokenError("invalid_grant", _CODE_REUSED)
        return self._tokens(grant, authorization_code.issuer, refresh, grant.scopes)

    def _tokens(self, grant: Grant, issuer: str, refresh: str, granted: tuple[str, ...]) -> OAuthToken:
        return OAuthToken(
            access_token=self.tokens.mint(grant, issuer=issuer, granted=granted),
            expires_in=self.tokens.lifetime,
            scope=scopes.shown(granted),
            refresh_token=refresh,
        )

    # -- refresh -------------------------------------------------------------------------------------------------

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> BeeRefresh | None:
        found = await self._run(self.grants.refresh, refresh_token)
        if found is None or found.grant.client_id != client.client_id:
            return None
        refused = None
        if not found.grant.live:
            refused = "the grant of this refresh token was revoked; sign in again"
        elif found.used:
            await self._run(self.grants.revoke, grant_id=found.grant.grant_id, reason="refresh token replayed")
            logger.warning("a refresh token was used twice: grant %s revoked", found.grant.grant_id)
            refused = "this refresh token was already used, so its grant is revoked (a replay); sign in again"
        return BeeRefresh(
            token=refresh_token,
            client_id=found.grant.client_id,
            scopes=list(found.grant.scopes),
            expires_at=int(found.expires_epoch),
            resource=found.grant.resource,
            subject=found.grant.actor,
            grant=_record(found.grant),
            refused=refused,
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: BeeRefresh, scopes_wanted: list[str]
    ) -> OAuthToken:
        if refresh_token.refused:
            raise TokenError("invalid_grant", refresh_token.refused)
        grant = _grant_of(refresh_token.grant)
        new = secrets.token_urlsafe(32)
        if not await self._run(self.grants.rotate, refresh_token.token, new, lifetime=self.lifetimes.refresh):
            await self._run(self.grants.revoke, grant_id=grant.grant_id, reason="refresh token replayed")
            logger.warning("a refresh token was used twice: grant %s revoked", grant.grant_id)
            raise TokenError(
                "invalid_grant", "this refresh token was already used, so its grant is revoked; sign in again"
            )
        return self._tokens(grant, origin.issuer_of(grant.resource), new, tuple(scopes_wanted))

    # -- access tokens and revocation ----------------------------------------------------------------------------

    async def load_access_token(self, token: str) -> AccessToken | None:
        import jwt

        try:
            header = jwt.get_unverified_header(token)
            if header.get("typ") != ACCESS_TOKEN_TYPE:
                return None
            claims = self.tokens.claims(token, header, issuer=origin.CURRENT.get(), audience=None)
        except (jwt.PyJWTError, AuthError):
            return None
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id")),
            scopes=sorted(scopes.parse(claims.get("scope"))),
            expires_at=int(claims["exp"]),
            resource=str(claims["aud"]),
            subject=str(claims["sub"]),
            claims={"gid": claims.get("gid"), "iss": claims.get("iss")},
        )

    async def revoke_token(self, token: AccessToken | BeeRefresh) -> None:
        grant_id = token.grant["grant_id"] if isinstance(token, BeeRefresh) else (token.claims or {}).get("gid")
        if isinstance(grant_id, str):
            await self._run(self.grants.revoke, grant_id=grant_id, reason="revoked by the client")
