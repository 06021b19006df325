"""The clients the built-in authorization server accepts: the rules their metadata follows, however it arrives
(dynamic registration, RFC 7591, or a Client ID Metadata Document), and the one place a redirect is matched.

Redirect URIs are where the server sends a person's browser with a code, so they are checked when a client is
known and matched exactly at every request: ``https`` anywhere, ``http`` only to a loopback address (a native
client's own listener, RFC 8252 §7.3, on any port: the port is the client's to choose at each sign-in), or a
private-use scheme (``cursor://…``, RFC 8252 §7.1) that is none of the schemes a browser would run or read
(``javascript:``, ``data:``, ``file:``, …). No fragment, no userinfo, at most :data:`MAX_REDIRECT_URIS` of
:data:`MAX_URI_CHARS` characters. What the consent page shows of a client (its name) must be printable text of at
most :data:`MAX_NAME_CHARS` characters.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from mcp.server.auth.provider import RegistrationError
from mcp.shared.auth import InvalidRedirectUriError, OAuthClientInformationFull, OAuthClientMetadata
from pydantic import AnyUrl, ValidationError

from bee_tracker.oauth import scopes

MAX_NAME_CHARS = 200
MAX_REDIRECT_URIS = 10
MAX_URI_CHARS = 2000
#: The grant types a client may have: the code flow and its refresh tokens, nothing else.
GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})
#: How a client may authenticate at the token endpoint.
AUTH_METHODS = frozenset({"none", "client_secret_post", "client_secret_basic"})

_LOOPBACK = frozenset({"127.0.0.1", "[::1]", "::1", "localhost"})
#: Schemes a browser runs, reads or hands to something else: never a place to send a code.
_REFUSED_SCHEMES = frozenset(
    {"javascript", "data", "file", "vbscript", "blob", "about", "filesystem", "ftp", "ws", "wss", "view-source"}
)


def _host(uri: AnyUrl) -> str:
    return (uri.host or "").lower()


def uri_problem(uri: str) -> str | None:
    """Why ``uri`` cannot be a redirect URI, or None when it can."""
    if len(uri) > MAX_URI_CHARS:
        return f"a redirect URI longer than {MAX_URI_CHARS} characters"
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if parts.fragment or "#" in uri:
        return "a redirect URI with a fragment (#…)"
    if "@" in parts.netloc:
        return "a redirect URI with a user name or password in it"
    if scheme == "https":
        return None if parts.hostname else "an https redirect URI without a host"
    if scheme == "http":
        return None if (parts.hostname or "") in _LOOPBACK else "an http redirect URI to a host that is not loopback"
    if not scheme or scheme in _REFUSED_SCHEMES:
        return f"a redirect URI of the {scheme or 'missing'} scheme"
    return None


def printable_problem(name: str, value: str, limit: int) -> str | None:
    if len(value) > limit:
        return f"{name} is longer than {limit} characters"
    if not value.isprintable():
        return f"{name} holds a character that is not printable text (a control or format character, or a line break)"
    return None


class BeeClient(OAuthClientInformationFull):
    """A client as the server keeps it, matching a loopback redirect URI on any port (RFC 8252 §7.3)."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        registered = self.redirect_uris or []
        if (
            redirect_uri is not None
            and redirect_uri not in registered
            and any(_same_but_port(redirect_uri, uri) for uri in registered)
        ):
            return redirect_uri
        return super().validate_redirect_uri(redirect_uri)


def _same_but_port(given: AnyUrl, registered: AnyUrl) -> bool:
    return (
        given.scheme == registered.scheme == "http"
        and _host(given) in _LOOPBACK
        and _host(given) == _host(registered)
        and given.path == registered.path
        and given.query == registered.query
    )


def check_metadata(metadata: OAuthClientMetadata | OAuthClientInformationFull) -> None:
    """Refuse metadata the server will not act on.

    Raises:
        RegistrationError: ``invalid_redirect_uri`` or ``invalid_client_metadata``, saying what to change.
    """
    uris = metadata.redirect_uris or []
    if not uris:
        raise RegistrationError("invalid_redirect_uri", "a client needs at least one redirect URI")
    if len(uris) > MAX_REDIRECT_URIS:
        raise RegistrationError("invalid_redirect_uri", f"a client may have at most {MAX_REDIRECT_URIS} redirect URIs")
    for uri in uris:
        problem = uri_problem(str(uri))
        if problem:
            raise RegistrationError("invalid_redirect_uri", f"{problem} is not accepted")
    unknown = set(metadata.grant_types) - GRANT_TYPES
    if unknown:
        raise RegistrationError(
            "invalid_client_metadata", f"grant types {', '.join(sorted(unknown))} are not served here"
        )
    if metadata.token_endpoint_auth_method not in (None, *AUTH_METHODS):
        raise RegistrationError("invalid_client_metadata", "token_endpoint_auth_method must be none or a client secret")
    extra = scopes.parse(metadata.scope) - set(scopes.FOR_CLIENTS)
    if extra:
        raise RegistrationError("invalid_client_metadata", f"scopes {', '.join(sorted(extra))} are not offered here")
    for field in ("client_name", "software_id", "software_version"):
        value = getattr(metadata, field)
        problem = printable_problem(field, value, MAX_NAME_CHARS) if isinstance(value, str) else None
        if problem:
            raise RegistrationError("invalid_client_metadata", problem)


def client_from(client_id: str, metadata: dict[str, Any], *, secret: str | None = None) -> BeeClient:
    """The client ``client_id`` with stored ``metadata`` (and, for a registered confidential client, its secret).

    Raises:
        ValueError: the metadata does not describe a client (a stored row the model refuses).
    """
    try:
        return BeeClient.model_validate({**metadata, "client_id": client_id, "client_secret": secret})
    except ValidationError as exc:
        raise ValueError(f"client {client_id} has unusable metadata: {exc.error_count()} problems") from None


__all__ = ["BeeClient", "InvalidRedirectUriError", "check_metadata", "client_from", "uri_problem"]
