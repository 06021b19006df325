"""Whose request it is, for the HTTP edge's fair shares: its bearer token, else the address it came from.

The edge decides admission before the app has verified anything (:mod:`.admission`), so the client is read from
the request as it stands: the ``Authorization`` header the app will check (the last one, as the tracker's
authentication reads it), else the peer address. A forged token is a client of its own, but the app refuses it
before any work is done, so it never holds a slot for long; a real token is one client however it is spelled. The
signature part of a JWT is compared decoded, because it has more than one spelling that verifies (PyJWT accepts it
with or without base64 padding; a laxer library ignores unused bits and stray characters too), and each spelling
would otherwise be a client of its own, with a share of its own. The signed part (header and payload) cannot be
respelled without failing the signature check.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable

#: A request's client: ``("bearer", signed part, signature bytes)`` or ``("bearer", token)``, else ``("peer", host)``.
Client = tuple[object, ...]


def _signature(segment: bytes) -> bytes:
    """A JWT's signature segment decoded as the token library decodes it (PyJWT's ``base64url_decode``)."""
    padded = segment + b"=" * (-len(segment) % 4)
    return base64.urlsafe_b64decode(padded)


def client_of(headers: Iterable[tuple[bytes, bytes]], peer: str) -> Client:
    """The client a request with these (lower-cased) ``headers`` from ``peer`` belongs to."""
    authorization = None
    for name, value in headers:
        if name == b"authorization":
            authorization = value
    if authorization is not None:
        scheme, _, credentials = authorization.decode("latin-1").partition(" ")
        token = credentials.strip()
        if scheme.lower() == "bearer" and token:
            signed, dot, segment = token.encode("utf-8").rpartition(b".")
            if dot:
                try:
                    return ("bearer", signed, _signature(segment))
                except (binascii.Error, ValueError):
                    pass  # not a signature the token library could read: the app refuses it, as the raw token
            return ("bearer", token)
    return ("peer", peer)
