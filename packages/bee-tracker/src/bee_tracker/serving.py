"""How `bee tracker serve` runs: one process, or several worker processes on one PostgreSQL store.

With ``workers`` above one, everything that can be wrong is checked once in the parent before a port is bound — the
store answers and is migrated, the token key is usable, the limits divide — and each worker then builds its own app
(its own connection pool) from the same settings. The per-process limits are shares of the totals the options
give: ``--max-in-flight`` and ``--max-connections`` are divided evenly among the workers (rounded down), so the
tracker as a whole never holds more requests or database connections than they say.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bee_tracker.config import TrackerConfig

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from bee_hostkit.http.limits import EdgeLimits
    from bee_tracker.auth import Verifier

#: Why several workers need PostgreSQL (the answer to --workers N on SQLite).
SQLITE_WORKERS = (
    "--workers {workers} needs a PostgreSQL store (--store postgresql://…): SQLite lets one process write at a "
    "time, so more workers add no write capacity, and their writers would queue in SQLite's busy handler instead "
    "of Bee's fair in-process queue; run one worker on SQLite"
)


def configure_logging(log_level: str) -> None:
    """Logs to stderr at ``log_level``; the SDK's per-request chatter only from warning up."""
    logging.basicConfig(
        stream=sys.stderr, level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("mcp").setLevel(max(logging.WARNING, logging.getLevelName(log_level.upper())))


def verifier_for(config: TrackerConfig) -> Verifier:
    """The token verifier the configuration names: JWKS, a PEM public key, an HS256 secret file, or else the home's
    own key (created if needed).

    Raises:
        ValueError: more than one key source is given, or the key cannot be used.
    """
    from bee_tracker.auth import hmac_verifier, jwks_verifier, pem_verifier
    from bee_tracker.home import ensure_key

    options = {
        "issuer": config.issuer,
        "audience": config.audience,
        "actor_claim": config.actor_claim,
        "max_lifetime_seconds": config.max_token_lifetime_seconds,
    }
    chosen = [x for x in (config.jwks, config.jwt_public_key_file, config.jwt_secret_file) if x]
    if len(chosen) > 1:
        raise ValueError("give at most one of --jwks, --jwt-public-key, --jwt-secret-file")
    try:
        if config.jwks:
            return jwks_verifier(config.jwks, **options)
        if config.jwt_public_key_file:
            return pem_verifier(config.jwt_public_key_file.read_bytes(), **options)
        if config.jwt_secret_file:
            return hmac_verifier(config.jwt_secret_file.read_bytes().strip(), **options)
    except (ValueError, OSError) as exc:
        raise ValueError(f"cannot use the configured key: {exc}") from None
    return hmac_verifier(ensure_key(config.home)[0], **options)


def worker_share(config: TrackerConfig, workers: int) -> TrackerConfig:
    """``config`` with the limits of one of ``workers`` processes: its share of --max-in-flight and
    --max-connections, rounded down.

    Raises:
        ValueError: the store is SQLite, or a limit is smaller than the number of workers.
    """
    if not config.store.startswith(("postgresql://", "postgres://")):
        raise ValueError(SQLITE_WORKERS.format(workers=workers))
    for option, total in (("--max-in-flight", config.max_in_flight), ("--max-connections", config.max_connections)):
        if total < workers:
            raise ValueError(f"{option} {total} cannot be shared by {workers} workers: give at least {workers}")
    return dataclasses.replace(
        config, max_in_flight=config.max_in_flight // workers, max_connections=config.max_connections // workers
    )


def build(config: TrackerConfig, verifier: Verifier) -> Starlette:
    """The tracker app on a freshly opened store. Not migrated here: the app's startup migrates and checks the
    store before the server listens."""
    from bee_tracker.host import build_app
    from bee_tracker.store import open_store

    if config.store_in_home:
        from bee_tracker.home import init_home

        init_home(config.home)
    store = open_store(
        config.store,
        prefix=config.prefix,
        migrate=False,
        max_connections=config.max_connections,
        claim_ttl=config.claim_ttl,
        replica=config.replica_id,
    )
    return build_app(store, verifier, config)


def worker_app(config: TrackerConfig, log_level: str) -> Starlette:
    """One worker's app, built in the worker process (uvicorn calls it there)."""
    configure_logging(log_level)
    return build(config, verifier_for(config))


def check_store(config: TrackerConfig) -> None:
    """Open, migrate and check the store once and register the custom statuses and types, then close it: what
    every worker's startup does, done before any worker starts, so that a problem stops `serve` with its message.

    Raises:
        BeeError: the store cannot be opened, migrated or read, or a custom status or type is refused.
    """
    from bee_tracker.store import open_store

    store = open_store(config.store, prefix=config.prefix, max_connections=1)
    try:
        store.check()
        if config.custom_statuses or config.custom_types:
            store.register(statuses=config.custom_statuses, types=config.custom_types)
    finally:
        store.close()


def _limits(config: TrackerConfig) -> EdgeLimits:
    from bee_tracker.host import edge_limits

    try:
        return edge_limits(config)
    except ValueError as exc:
        raise ValueError(f"cannot use these HTTP limits: {exc}") from None


def serve(
    config: TrackerConfig,
    *,
    workers: int,
    log_level: str,
    access_log: bool,
    fds: Sequence[int] = (),
    spare_fd: int | None = None,
) -> None:
    """Serve the tracker until SIGTERM or SIGINT: in this process, or in ``workers`` worker processes.

    ``fds`` are inherited listening sockets to serve on instead of binding (one process; see ``--fd``). With
    ``spare_fd`` the process is a supervisor's spare: it builds the app, then waits to be told to serve
    (:mod:`bee_contracts.spare`).

    Raises:
        ValueError: the settings cannot work (the key, the limits, SQLite with several workers).
        BeeError: with several workers, the store cannot be opened, migrated or read.
    """
    configure_logging(log_level)
    from bee_tracker.oauth.assembly import check

    check(config)
    if workers == 1:
        from bee_hostkit.http.serve import serve_http

        limits = _limits(config)
        app = build(config, verifier_for(config))
        if spare_fd is not None:
            import uvicorn  # noqa: F401 -- imported now, while nobody waits: what serving needs is loaded

            from bee_contracts.spare import wait_to_serve
            from bee_tracker.host import preload

            preload()
            wait_to_serve(spare_fd)
        serve_http(
            app,
            host=config.host,
            port=config.port,
            limits=limits,
            log_level=log_level,
            access_log=access_log,
            fds=fds,
        )
        return
    from bee_hostkit.http.workers import serve_http_workers

    share = worker_share(config, workers)
    limits = _limits(share)
    verifier_for(share)  # a key that cannot be used stops us here, not in every worker
    check_store(share)
    serve_http_workers(
        functools.partial(worker_app, share, log_level),
        workers=workers,
        host=config.host,
        port=config.port,
        limits=limits,
        log_level=log_level,
        access_log=access_log,
    )
