"""The tracker's task store: one implementation of the Beads model over SQLite or PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from bee_tracker.store.db import Database
from bee_tracker.store.sql import SqlStore

__all__ = ["Database", "SqlStore", "open_database", "open_store"]


def open_database(url: str, *, max_connections: int = 20) -> Database:
    """``postgresql://…`` (or ``postgres://…``) opens PostgreSQL; ``sqlite:///path`` or a plain path opens SQLite."""
    if url.startswith(("postgresql://", "postgres://")):
        from bee_tracker.store.postgres import PostgresDatabase

        return PostgresDatabase(url, max_connections=max_connections)
    from bee_tracker.store.sqlite import SqliteDatabase

    path = url.removeprefix("sqlite://") if url.startswith("sqlite://") else url
    return SqliteDatabase(Path(path).expanduser())


def open_store(
    url: str,
    *,
    prefix: str | None = None,
    migrate: bool = True,
    max_connections: int = 20,
    claim_ttl: int | None = None,
    replica: str | None = None,
) -> SqlStore:
    """Open (and by default migrate) the store at ``url``; ``claim_ttl`` is the lease of a claim that asks for none
    (None: no lease), ``replica`` this process's name in the audit log (default: host and process id)."""
    store = SqlStore(
        open_database(url, max_connections=max_connections), prefix=prefix, claim_ttl=claim_ttl, replica=replica
    )
    if migrate:
        store.migrate()
    return store
