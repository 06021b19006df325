"""How a tracker's settings become its sign-in: what ``/mcp`` takes (built with the app: it loads nothing heavy)
and the routes and pages of a sign-in mode (built in the background with the board, since they load the SDK).

Every combination that cannot work is refused by :func:`check` before the tracker listens, with what to change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from bee_tracker.auth import Verifier
from bee_tracker.config import TrackerConfig
from bee_tracker.oauth import origin
from bee_tracker.oauth.idp import OpenIdProvider
from bee_tracker.oauth.resource import BUILTIN, IDP, MODES, TOKEN, SignIn
from bee_tracker.oauth.tokens import AccessTokens, KeyRing
from bee_tracker.store.grants import Grants

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from bee_tracker.oauth.party import RelyingParty
    from bee_tracker.store import SqlStore

_LOCAL = frozenset({"127.0.0.1", "localhost", "[::1]"})


def _issuer_problem(issuer: str) -> str | None:
    parts = urlsplit(issuer)
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.query or parts.fragment:
        return "--oidc-issuer must be the provider's issuer URL (https://…, no query or fragment)"
    if parts.scheme == "http" and parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        return "--oidc-issuer must be https:// (http:// only for a provider on this machine)"
    return None


def check(config: TrackerConfig) -> None:
    """Refuse settings that cannot work together.

    Raises:
        ValueError: saying which option to change and why.
    """
    if config.sign_in not in MODES:
        raise ValueError(f"--sign-in must be one of {', '.join(MODES)}")
    if config.sign_in == IDP and not config.oidc_issuer:
        raise ValueError("--sign-in idp needs --oidc-issuer (your OpenID Provider's issuer URL)")
    if config.sign_in == TOKEN and not config.pasted_tokens:
        raise ValueError("--no-pasted-tokens leaves --sign-in token no token to take: choose builtin or idp")
    if config.oidc_client_id and not config.oidc_issuer:
        raise ValueError("--oidc-client-id needs --oidc-issuer")
    if config.oidc_client_secret_file and not config.oidc_client_id:
        raise ValueError("--oidc-client-secret-file needs --oidc-client-id")
    if config.oidc_issuer and (problem := _issuer_problem(config.oidc_issuer)):
        raise ValueError(problem)
    if config.public_url:
        origin.canonical(config.public_url.rstrip("/"))  # raises ValueError saying what is wrong
    if config.oidc_client_secret_file is not None and not client_secret(config):
        raise ValueError(f"--oidc-client-secret-file {config.oidc_client_secret_file} is empty")


def client_secret(config: TrackerConfig) -> str | None:
    """The board's client secret at the provider, read from its file (None without one)."""
    if config.oidc_client_secret_file is None:
        return None
    try:
        return config.oidc_client_secret_file.read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read --oidc-client-secret-file: {exc}") from None


def resource_side(config: TrackerConfig, pasted: Verifier, store: SqlStore) -> SignIn:
    """What ``/mcp`` takes and advertises under ``config`` (``pasted`` verifies pasted tokens)."""
    public = origin.canonical(config.public_url.rstrip("/")) if config.public_url else None
    access = None
    if config.sign_in == BUILTIN:
        access = AccessTokens(KeyRing(Grants(store.db)), lifetime=config.access_token_lifetime_seconds)
    idp = None
    if config.sign_in == IDP and config.oidc_issuer:
        idp = OpenIdProvider(
            config.oidc_issuer, actor_claim=config.actor_claim, max_lifetime_seconds=config.max_token_lifetime_seconds
        )
    return SignIn(
        config.sign_in, pasted=pasted if config.pasted_tokens else None, access=access, idp=idp, public_origin=public
    )


def names(config: TrackerConfig) -> frozenset[str]:
    """The host names the tracker answers for."""
    return frozenset(name.lower() for name in (*_LOCAL, config.host, *config.allowed_hosts))


def board_parts(
    config: TrackerConfig, signin: SignIn, store: SqlStore
) -> tuple[list[BaseRoute], Grants | None, RelyingParty | None]:
    """The sign-in's routes, the store state the consent page uses (built-in server), and the board's client at the
    team's provider (``--oidc-client-id``). With pasted tokens only, nothing (and the SDK is not imported)."""
    if not signin.advertises and not config.oidc_client_id:
        return [], None, None
    from bee_tracker.oauth.documents import Documents
    from bee_tracker.oauth.party import RelyingParty
    from bee_tracker.oauth.provider import Lifetimes, Provider
    from bee_tracker.oauth.routes import signin_routes

    grants = Grants(store.db)
    provider = None
    if signin.access is not None:
        lifetimes = Lifetimes(
            access=config.access_token_lifetime_seconds, refresh=config.refresh_token_lifetime_seconds
        )
        documents = Documents(grants, allowed_hosts=config.client_metadata_hosts)
        provider = Provider(grants, signin.access, documents, lifetimes)
    party = None
    if config.oidc_client_id and config.oidc_issuer:
        provider_of_people = signin.idp or OpenIdProvider(
            config.oidc_issuer, actor_claim=config.actor_claim, max_lifetime_seconds=config.max_token_lifetime_seconds
        )
        party = RelyingParty(
            provider_of_people, config.oidc_client_id, client_secret(config), grants, signin.public_origin
        )
    routes: list[BaseRoute] = list(signin_routes(signin, provider, names=names(config))) if signin.advertises else []
    return routes, grants if provider is not None else None, party
