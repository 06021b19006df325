"""Tracker settings: where the store and keys live, how tokens are verified, and the admission limits."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from bee_contracts.layout import tracker_home
from bee_contracts.limits import DEFAULT_DEADLINE_SECONDS
from bee_hostkit.http.limits import (
    DEFAULT_HEADER_TIMEOUT_SECONDS,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_CONNECTIONS_PER_PEER,
    DEFAULT_MAX_HEADER_BYTES,
    DEFAULT_MAX_HEADER_LINE_BYTES,
    DEFAULT_MAX_QUEUE_SECONDS,
    DEFAULT_MIN_IN_FLIGHT,
    DEFAULT_REQUEST_TIMEOUT_SECONDS,
    DEFAULT_STREAM_STALL_SECONDS,
)
from bee_tracker.home import STORE_FILE
from bee_tracker.listening.limits import (
    DEFAULT_LISTEN_BUFFER,
    DEFAULT_MAX_LISTEN_URIS,
    DEFAULT_MAX_LISTENS,
    DEFAULT_MAX_LISTENS_PER_ACTOR,
)

ENV_STORE = "BEE_TRACKER_STORE"
DEFAULT_PORT = 8765
DEFAULT_MAX_IN_FLIGHT = 100
#: The longest token lifetime accepted (exp from now, or exp - iat), and the most `bee tracker token --ttl` mints.
DEFAULT_MAX_TOKEN_LIFETIME_SECONDS = 7 * 86400
#: How long an access token of the built-in authorization server lives: revoking its grant ends it within this.
DEFAULT_ACCESS_TOKEN_SECONDS = 600
#: How long a refresh token of the built-in authorization server lives unused (each use gives a new one).
DEFAULT_REFRESH_TOKEN_SECONDS = 30 * 86400


def default_home(cwd: Path | None = None) -> Path:
    """Where the tracker keeps its state when ``--home`` is not given: :func:`bee_contracts.layout.tracker_home`
    from ``cwd`` (default: the working directory)."""
    return tracker_home(cwd or Path.cwd())


@dataclass
class TrackerConfig:
    """Everything `bee tracker serve` needs; every field has a CLI option (see docs/hosts/tracker.md)."""

    home: Path = field(default_factory=default_home)
    store_url: str | None = None
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    prefix: str | None = None
    # Token verification: the embedded HS256 key unless one of these is given.
    jwt_secret_file: Path | None = None
    jwt_public_key_file: Path | None = None
    jwks: str | None = None
    issuer: str | None = None
    audience: str | None = None
    actor_claim: str = "email"
    max_token_lifetime_seconds: int = DEFAULT_MAX_TOKEN_LIFETIME_SECONDS
    # Sign-in (bee_tracker.oauth): pasted tokens only, the built-in authorization server, or the team's OpenID
    # Provider; where clients reach the tracker; the built-in server's lifetimes and the hosts of client metadata
    # documents it may fetch although they are private; the OpenID Provider and the board's client there.
    sign_in: str = "token"
    public_url: str | None = None
    pasted_tokens: bool = True
    access_token_lifetime_seconds: int = DEFAULT_ACCESS_TOKEN_SECONDS
    refresh_token_lifetime_seconds: int = DEFAULT_REFRESH_TOKEN_SECONDS
    client_metadata_hosts: tuple[str, ...] = ()
    oidc_issuer: str | None = None
    oidc_client_id: str | None = None
    oidc_client_secret_file: Path | None = None
    # The HTTP edge: admission of /mcp requests, connection caps, header caps and timeouts (bee_hostkit.http.edge).
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    max_queue_seconds: float = DEFAULT_MAX_QUEUE_SECONDS  # 0: admission by count alone
    min_in_flight: int = DEFAULT_MIN_IN_FLIGHT
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    max_header_line_bytes: int = DEFAULT_MAX_HEADER_LINE_BYTES
    request_timeout_seconds: float = DEFAULT_REQUEST_TIMEOUT_SECONDS
    header_timeout_seconds: float = DEFAULT_HEADER_TIMEOUT_SECONDS
    max_http_connections: int = DEFAULT_MAX_CONNECTIONS
    max_http_connections_per_peer: int = DEFAULT_MAX_CONNECTIONS_PER_PEER
    deadline_seconds: float = DEFAULT_DEADLINE_SECONDS
    max_connections: int = 20
    allowed_hosts: tuple[str, ...] = ()
    custom_statuses: tuple[str, ...] = ()
    custom_types: tuple[str, ...] = ()
    # Claims (bee_tracker.store.claimlease): the lease of a claim that asks for none (None: claims never expire),
    # and this process's name in the audit log (None: host and process id).
    claim_ttl: int | None = None
    replica_id: str | None = None
    # Listening (bee_tracker.listening): open listen streams in a process (the edge's separate count), per actor,
    # resources per stream, and the undelivered events at which a slow listener's stream is ended.
    max_listens: int = DEFAULT_MAX_LISTENS
    max_listens_per_actor: int = DEFAULT_MAX_LISTENS_PER_ACTOR
    max_listen_uris: int = DEFAULT_MAX_LISTEN_URIS
    listen_buffer: int = DEFAULT_LISTEN_BUFFER
    listen_stall_seconds: float = DEFAULT_STREAM_STALL_SECONDS

    @property
    def store(self) -> str:
        return self.store_url or os.environ.get(ENV_STORE) or str(self.home / STORE_FILE)

    @property
    def store_in_home(self) -> bool:
        """Whether the store is the embedded SQLite database inside the home."""
        return not (self.store_url or os.environ.get(ENV_STORE))
