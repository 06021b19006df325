"""`bee tracker serve`'s sign-in options, and `bee tracker tokens`: the grants people gave MCP clients, listed and
revoked (see docs/hosts/tracker.md, "Signing in")."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from bee_tracker.cli_common import config_of, home_option, local_store, store_option
from bee_tracker.config import DEFAULT_ACCESS_TOKEN_SECONDS, DEFAULT_REFRESH_TOKEN_SECONDS

F = TypeVar("F", bound=Callable[..., Any])

_SIGNIN_OPTIONS: list[Callable[[F], F]] = [
    click.option(
        "--sign-in",
        type=click.Choice(["token", "builtin", "idp"]),
        default="token",
        show_default=True,
        help="How MCP clients get a token: token (each person pastes a JWT; nothing is published), builtin (this "
        "tracker is its own OAuth authorization server: people sign in through the board and consent), idp (clients "
        "sign in at your OpenID Provider, --oidc-issuer). Both sign-in modes publish protected resource metadata and "
        "name it in every 401.",
    ),
    click.option(
        "--public-url",
        default=None,
        help="The tracker's origin as clients reach it (https://tracker.example.com), for its metadata, issuer and "
        "token audience. Default: each request's own scheme and Host (one of the names the tracker answers for).",
    ),
    click.option(
        "--pasted-tokens/--no-pasted-tokens",
        default=True,
        show_default=True,
        help="In a sign-in mode, whether /mcp also takes pasted JWTs (from `bee tracker token` or the configured "
        "keys), as --sign-in token does.",
    ),
    click.option(
        "--access-token-lifetime",
        "access_token_lifetime_seconds",
        default=DEFAULT_ACCESS_TOKEN_SECONDS,
        show_default=True,
        type=click.IntRange(60, 3600),
        help="Seconds a built-in access token lives: revoking its grant ends it at the latest this long after.",
    ),
    click.option(
        "--refresh-token-lifetime",
        "refresh_token_lifetime_seconds",
        default=DEFAULT_REFRESH_TOKEN_SECONDS,
        show_default=True,
        type=click.IntRange(3600, 366 * 86400),
        help="Seconds a built-in refresh token lives unused (2592000 is 30 days); each use gives a new one.",
    ),
    click.option(
        "--client-metadata-host",
        "client_metadata_hosts",
        multiple=True,
        help="A host whose Client ID Metadata Documents the built-in server may fetch although it resolves to a "
        "private or loopback address (repeatable). Others must resolve to public addresses only.",
    ),
    click.option(
        "--oidc-issuer", default=None, help="Your OpenID Provider's issuer URL (--sign-in idp, or the board)."
    ),
    click.option(
        "--oidc-client-id",
        default=None,
        help="The board's client id at --oidc-issuer: people then sign in to the board (and to the built-in server's "
        "consent page) there. Its redirect URI is PUBLIC_URL/board/signin/idp/back.",
    ),
    click.option(
        "--oidc-client-secret-file",
        type=click.Path(dir_okay=False, exists=True, path_type=Path),
        default=None,
        help="A file holding the board's client secret at --oidc-issuer (none: a public client, with PKCE).",
    ),
]


def signin_options(command: F) -> F:
    """Add the sign-in options to ``command`` (`bee tracker serve`)."""
    for option in reversed(_SIGNIN_OPTIONS):
        command = option(command)
    return command


@click.group()
def tokens() -> None:
    """The grants people gave MCP clients through the built-in sign-in (--sign-in builtin): list and revoke them.

    Revoking a grant ends its refresh tokens at once, on every replica, and its access tokens when they expire
    (--access-token-lifetime, 10 minutes by default)."""


def _when(epoch: float | None) -> str | None:
    from bee_tracker.model import timestamp

    return None if epoch is None else timestamp(epoch)


def _shown(grant: Any) -> dict[str, Any]:
    return {
        "grant_id": grant.grant_id,
        "actor": grant.actor,
        "client_id": grant.client_id,
        "client_name": grant.client_name,
        "scopes": list(grant.scopes),
        "resource": grant.resource,
        "created_at": grant.created_at,
        "refreshed_at": _when(grant.refreshed_epoch),
        "revoked_at": _when(grant.revoked_epoch),
        "revoked_reason": grant.revoked_reason,
    }


@tokens.command(name="list")
@home_option
@store_option
@click.option("--actor", default=None, help="Only this person's grants.")
@click.option("--client", "client_id", default=None, help="Only this client's grants (its client id).")
@click.option("--revoked", is_flag=True, help="Include revoked grants.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: one object per grant.")
def list_(
    home: Path | None, store_url: str | None, actor: str | None, client_id: str | None, *, revoked: bool, as_json: bool
) -> None:
    """List the grants, oldest first: who allowed which client what, when it last refreshed."""
    from bee_tracker.store.grants import Grants

    store = local_store(config_of(home, store_url))
    try:
        found = Grants(store.db).grants(actor=actor, client_id=client_id, revoked=revoked)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps([_shown(grant) for grant in found], indent=2))
        return
    if not found:
        click.echo("no grants" + ("" if revoked else " (--revoked shows revoked ones)"))
    for grant in found:
        state = f"revoked {_when(grant.revoked_epoch)} ({grant.revoked_reason})" if grant.revoked_epoch else "live"
        name = grant.client_name or "(unnamed client)"
        click.echo(f"{grant.grant_id}  {grant.actor}  {name} [{grant.client_id}]  {' '.join(grant.scopes)}  {state}")


@tokens.command()
@home_option
@store_option
@click.option("--grant", "grant_id", default=None, help="The grant to revoke (its id, from `bee tracker tokens list`).")
@click.option("--actor", default=None, help="Revoke this person's grants (with --client: only that client's).")
@click.option("--client", "client_id", default=None, help="Revoke this client's grants (its client id).")
@click.option("--all", "everything", is_flag=True, help="Revoke every live grant: everyone signs in again.")
@click.option("--reason", default="revoked by the operator", show_default=True, help="Recorded with each grant.")
def revoke(
    home: Path | None,
    store_url: str | None,
    grant_id: str | None,
    actor: str | None,
    client_id: str | None,
    *,
    everything: bool,
    reason: str,
) -> None:
    """Revoke grants: one, a person's, a client's, or all of them."""
    from bee_tracker.store.grants import Grants

    if not (grant_id or actor or client_id or everything):
        raise click.UsageError("say which grants to revoke: --grant ID, --actor, --client, or --all")
    if everything and (grant_id or actor or client_id):
        raise click.UsageError("--all revokes every grant: give it alone")
    store = local_store(config_of(home, store_url))
    try:
        ids = Grants(store.db).revoke(grant_id=grant_id, actor=actor, client_id=client_id, reason=reason)
    finally:
        store.close()
    click.echo(f"revoked {len(ids)} grant{'' if len(ids) == 1 else 's'}")
