"""Client ID Metadata Documents: a client whose id is an ``https://`` URL publishes its metadata there, and the
tracker fetches it — a request to an address a stranger chose, so it is made under every cap at once.

- **Where**: ``https`` only, with a path, no user name and no fragment. The host is resolved first and every
  address it resolves to must be a public one (not loopback, private, link-local, shared, reserved or multicast),
  unless the operator named the host with ``--client-metadata-host``. The request then goes to the address that was
  checked (the TLS name and ``Host`` header are the URL's), so a second resolution cannot point it elsewhere (DNS
  rebinding), and redirects are not followed.
- **How much**: at most :data:`MAX_DOCUMENT_BYTES`, read as it arrives (a bigger one is refused without reading
  the rest), within :data:`FETCH_SECONDS` for the whole exchange (a slow drip is cut off).
- **What**: a JSON object whose ``client_id`` is the URL itself, with the metadata rules every client follows
  (:func:`bee_tracker.oauth.clients.check_metadata`) and no client secret (``token_endpoint_auth_method`` none).

A fetched document is kept in the store and used for :data:`KEEP_SECONDS`, then fetched again. A refusal is
remembered for :data:`REFUSED_SECONDS` (in the process, for at most :data:`REMEMBERED` URLs), so asking again and
again cannot turn the tracker into a client that fetches on anyone's behalf.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import ssl
import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread

from bee_tracker.oauth.clients import BeeClient, check_metadata, client_from
from bee_tracker.oauth.scopes import FOR_CLIENTS
from bee_tracker.store.grants import Grants

MAX_DOCUMENT_BYTES = 16 * 1024
FETCH_SECONDS = 5.0
KEEP_SECONDS = 600.0
REFUSED_SECONDS = 60.0
REMEMBERED = 1024
MAX_URL_CHARS = 2000


class DocumentError(Exception):
    """Why a client's metadata document cannot be used; safe to show (it names the host, never the body)."""


def is_document_id(client_id: str) -> bool:
    """Whether ``client_id`` names a metadata document (an https URL) rather than a registered client."""
    return client_id.startswith("https://")


def _target(url: str) -> tuple[str, int, str]:
    """The host, port and request path of a document URL.

    Raises:
        DocumentError: it is not an https URL with a host and a path, or has a user name or a fragment.
    """
    if len(url) > MAX_URL_CHARS:
        raise DocumentError(f"a client id URL is longer than {MAX_URL_CHARS} characters")
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise DocumentError("a client id that is a URL must be https://HOST/PATH")
    if parts.path in ("", "/"):
        raise DocumentError("a client id URL must have a path (RFC: not the bare origin)")
    if parts.username or parts.password or parts.fragment or "#" in url:
        raise DocumentError("a client id URL may not carry a user name, a password or a fragment")
    try:
        port = parts.port or 443
    except ValueError:
        raise DocumentError("a client id URL has a port that is not a number") from None
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    return parts.hostname.lower(), port, path


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


async def _addresses(host: str, port: int, allowed: Iterable[str]) -> list[str]:
    """The addresses to try for ``host``: all of them public, unless the operator allowed the host.

    Raises:
        DocumentError: it does not resolve, or resolves to an address that is not public.
    """
    try:
        found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        raise DocumentError(f"the client's metadata host {host} does not resolve") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if host not in allowed and not all(_public(address) for address in addresses):
        raise DocumentError(
            f"the client's metadata host {host} resolves to a private or local address, which this tracker does not "
            "fetch from (an operator may allow the host with --client-metadata-host)"
        )
    return addresses


async def _get(address: str, host: str, port: int, path: str) -> bytes:
    import httpx

    shown_address = f"[{address}]" if ":" in address else address
    context = ssl.create_default_context()  # the system's CAs (SSL_CERT_FILE honoured), hostname checked
    async with (
        httpx.AsyncClient(verify=context, trust_env=False, follow_redirects=False, timeout=FETCH_SECONDS) as http,
        http.stream(
            "GET",
            f"https://{shown_address}:{port}{path}",
            headers={"Host": host if port == 443 else f"{host}:{port}", "Accept": "application/json"},
            extensions={"sni_hostname": host},
        ) as response,
    ):
        if response.status_code != 200:
            raise DocumentError(f"the client's metadata document at {host} answered HTTP {response.status_code}")
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_DOCUMENT_BYTES:
            raise DocumentError(f"the client's metadata document is larger than {MAX_DOCUMENT_BYTES} bytes")
        body = bytearray()
        async for chunk in response.aiter_raw():
            body += chunk
            if len(body) > MAX_DOCUMENT_BYTES:
                raise DocumentError(f"the client's metadata document is larger than {MAX_DOCUMENT_BYTES} bytes")
        return bytes(body)


async def fetch(url: str, *, allowed_hosts: Iterable[str] = ()) -> dict[str, Any]:
    """The metadata document at ``url``, fetched under the caps above.

    Raises:
        DocumentError: the URL, its address, the answer or its size is refused, or it took too long.
    """
    import httpx

    host, port, path = _target(url)
    body = b""
    with anyio.move_on_after(FETCH_SECONDS) as waited:
        addresses = await _addresses(host, port, set(allowed_hosts))
        try:
            body = await _get(addresses[0], host, port, path)
        except httpx.HTTPError as exc:
            raise DocumentError(
                f"the client's metadata document at {host} could not be fetched ({type(exc).__name__})"
            ) from None
    if waited.cancelled_caught:
        raise DocumentError(f"the client's metadata document at {host} took longer than {FETCH_SECONDS:g} seconds")
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        raise DocumentError(f"the client's metadata document at {host} is not JSON") from None
    if not isinstance(document, dict):
        raise DocumentError(f"the client's metadata document at {host} is not a JSON object")
    return document


def client_of(url: str, document: dict[str, Any]) -> BeeClient:
    """The client a fetched document describes.

    Raises:
        DocumentError: its ``client_id`` is not ``url``, it asks for a client secret, or its metadata is refused.
    """
    from mcp.server.auth.provider import RegistrationError

    if document.get("client_id") != url:
        raise DocumentError("the client's metadata document names another client_id than its own URL")
    if document.get("client_secret") is not None or document.get("token_endpoint_auth_method", "none") != "none":
        raise DocumentError(
            "a client known by a metadata document has no secret: its token_endpoint_auth_method is none"
        )
    metadata = {key: value for key, value in document.items() if key not in ("client_id", "client_secret")}
    metadata.setdefault("scope", " ".join(FOR_CLIENTS))
    metadata.setdefault("token_endpoint_auth_method", "none")
    try:
        client = client_from(url, metadata)
        check_metadata(client)
    except ValueError:
        raise DocumentError("the client's metadata document is not valid client metadata") from None
    except RegistrationError as exc:
        raise DocumentError(f"the client's metadata document is refused: {exc.error_description}") from None
    return client


class Documents:
    """Metadata documents, fetched when first needed and kept in the store for :data:`KEEP_SECONDS`."""

    def __init__(self, grants: Grants, *, allowed_hosts: Iterable[str] = ()) -> None:
        self.grants = grants
        self.allowed_hosts = frozenset(host.lower() for host in allowed_hosts)
        self._refused: OrderedDict[str, tuple[float, str]] = OrderedDict()

    async def client(self, url: str) -> BeeClient:
        """The client of the document at ``url``, fetched unless a fresh copy is kept.

        Raises:
            DocumentError: it cannot be fetched or is refused (see :func:`fetch`, :func:`client_of`).
        """
        kept = await anyio.to_thread.run_sync(self.grants.client, url)
        if (
            kept is not None
            and kept.fetched_epoch is not None
            and self.grants.clock() - kept.fetched_epoch < KEEP_SECONDS
        ):
            return client_from(url, kept.metadata)
        refused = self._refused.get(url)
        if refused is not None and time.monotonic() - refused[0] < REFUSED_SECONDS:
            raise DocumentError(f"{refused[1]} (refused less than {REFUSED_SECONDS:g} seconds ago)")
        try:
            client = client_of(url, await fetch(url, allowed_hosts=self.allowed_hosts))
        except DocumentError as exc:
            self._refused[url] = (time.monotonic(), str(exc))
            self._refused.move_to_end(url)
            while len(self._refused) > REMEMBERED:
                self._refused.popitem(last=False)
            raise
        metadata = client.model_dump(mode="json", exclude_none=True, exclude={"client_id", "client_secret"})
        await anyio.to_thread.run_sync(lambda: self.grants.save_client(url, "document", metadata))
        return client
