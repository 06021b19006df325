"""Failures every caller can act on: driver errors mapped once per dialect, a missing actor refused."""

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import BeeError
from bee_hostkit import local_call
from bee_tracker.host import handlers
from bee_tracker.store import SqlStore, open_store
from bee_tracker.store.db import Database
from bee_tracker.store.ops import Write
from bee_tracker.store.sqlite import SqliteDatabase
from tests.conftest import BACKENDS
from tests.tracker.calls import ALICE, call, new, refused


def short_lock_store(url: str) -> SqlStore:
    """A store that gives up waiting for a lock after 0.2 s."""
    db: Database
    if url.startswith("postgresql://"):
        from bee_tracker.store.postgres import PostgresDatabase

        db = PostgresDatabase(url, lock_timeout=0.2)
    else:
        db = SqliteDatabase(Path(url), busy_timeout=0.2)
    store = SqlStore(db, prefix="t")
    store.migrate()
    return store


def hold_lock(url: str, issue_id: str) -> Any:
    """Another process's transaction holding the issue's row (PostgreSQL) or the database's write lock (SQLite)."""
    if url.startswith("postgresql://"):
        import psycopg

        other = psycopg.connect(url)
        other.execute("SELECT 1 FROM issues WHERE id = %s FOR UPDATE", [issue_id])
        return other
    lite = sqlite3.connect(url, isolation_level=None)
    lite.execute("BEGIN IMMEDIATE")
    return lite


def test_a_lock_held_elsewhere_is_busy_and_retryable(store_url: str) -> None:
    store = short_lock_store(store_url)
    try:
        issue_id = new(store)
        other = hold_lock(store_url, issue_id)
        try:
            error = refused(store, "busy", "claim", id=issue_id)
            assert error.retryable is True and error.outcome_unknown is False
        finally:
            other.rollback()
            other.close()
        assert call(store, "claim", id=issue_id)["assignee"] == ALICE  # the retry succeeds
    finally:
        store.close()


def test_a_damaged_database_is_internal_not_busy(tmp_path: Path) -> None:
    path = tmp_path / "tracker.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(BeeError) as info:
        open_store(str(path))
    assert info.value.code == "internal" and "DatabaseError" in info.value.message


@pytest.mark.parametrize("store_url", [BACKENDS[1]], indirect=True)
def test_a_value_postgres_cannot_hold_is_invalid_even_past_the_tools_checks(store_url: str) -> None:
    store = open_store(store_url, prefix="t")
    try:

        def careless(
            op: Write, args: dict[str, Any]
        ) -> dict[str, Any]:  # a tool function that skipped the input checks
            op.tx.run("UPDATE meta SET value = ? WHERE key = 'schema_version'", ["nul \x00"])
            return {}

        with pytest.raises(BeeError) as info:
            store.write("careless", ALICE, {}, careless)
        assert info.value.code == "invalid_argument"
    finally:
        store.close()


def test_a_call_without_a_verified_actor_is_unauthorized(store: SqlStore) -> None:
    issue_id = new(store)
    handler = handlers(store)["get"]
    with pytest.raises(BeeError) as info:
        handler(local_call("get", {"id": issue_id, "comments_limit": 50}))
    assert info.value.code == "unauthorized"
    answer = handler(local_call("get", {"id": issue_id, "comments_limit": 50}, caller=ALICE))
    assert isinstance(answer, Mapping)  # the tracker's handlers are synchronous
    assert answer["data"]["issue"]


def test_in_process_calls_are_validated_like_the_hosts(store: SqlStore) -> None:
    assert "priority" in refused(store, "invalid_argument", "create", title="x", priority=9).message
    assert "unknown tool" in refused(store, "invalid_argument", "delete", id="t-x").message
