"""Where the tracker is, as its clients reach it: its origin, the resources under it and their metadata's URLs.

With ``--public-url`` the origin is that URL. Without it, it is the request's own scheme and ``Host``: the name a
client used (``127.0.0.1:8765``, ``localhost:8765``, an ``--allowed-host``) is the one its metadata, its tokens'
issuer and their audience name, as RFC 8707 and RFC 9728 want (a client checks that the resource it is told is the
one it asked). The ``Host`` was already checked against the names the tracker answers for (DNS-rebinding guard),
so a request cannot make it name another server. Origins are spelled as the SDK's URL models spell them (default
ports dropped, no trailing slash), since issuers are compared as strings.
"""

from __future__ import annotations

import contextvars
from functools import lru_cache
from urllib.parse import urlsplit

from starlette.types import Scope

#: The origin of the request being answered, for the code the SDK calls without the request (the provider).
CURRENT: contextvars.ContextVar[str] = contextvars.ContextVar("bee.tracker.origin")

MCP_PATH = "/mcp"
BOARD_PATH = "/board"
#: RFC 9728 §3.1: the metadata of the resource at PATH is at this prefix followed by PATH.
METADATA_PREFIX = "/.well-known/oauth-protected-resource"


_DEFAULT_PORTS = {"http": 80, "https": 443}


@lru_cache(maxsize=256)
def canonical(origin: str) -> str:
    """``scheme://host[:port]`` as the SDK's URL models spell it: scheme and host in lower case, the default port
    left out, no trailing slash (pydantic is not used here: this runs on the request path, before the SDK loads).

    Raises:
        ValueError: it is not an http(s) origin (a path, query, fragment or user name in it, a host that is not
            ASCII, a bad port, or no host).
    """
    parts = urlsplit(origin)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"{origin[:200]!r} has a port that is not a number") from None
    host = parts.hostname or ""
    if scheme not in _DEFAULT_PORTS or not host or not host.isascii():
        raise ValueError(f"{origin[:200]!r} is not an http:// or https:// origin with an ASCII host name")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"{origin[:200]!r} must be only scheme://host[:port], with nothing after it")
    shown_host = f"[{host}]" if ":" in host else host
    shown_port = f":{port}" if port is not None and port != _DEFAULT_PORTS[scheme] else ""
    return f"{scheme}://{shown_host}{shown_port}"


def of_request(scope: Scope, configured: str | None) -> str:
    """The origin a request reached: ``configured`` (``--public-url``) or its scheme and Host header."""
    if configured:
        return configured
    host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
    if not host:
        server = scope.get("server") or ("127.0.0.1", 80)
        host = f"{server[0]}:{server[1]}"
    try:
        return canonical(f"{scope.get('scheme', 'http')}://{host.lower()}")
    except ValueError:
        return canonical(f"{scope.get('scheme', 'http')}://127.0.0.1")


def resource(origin: str, path: str = MCP_PATH) -> str:
    """The resource identifier (RFC 8707) of the tracker's ``path``."""
    return origin + path


def metadata_url(origin: str, path: str = MCP_PATH) -> str:
    """Where the protected resource metadata of ``path`` is."""
    return origin + METADATA_PREFIX + path


def issuer_of(resource_url: str) -> str:
    """The built-in authorization server's issuer for one of its resources: the resource's origin."""
    for path in (MCP_PATH, BOARD_PATH):
        if resource_url.endswith(path):
            return resource_url[: -len(path)]
    return resource_url
