"""``get`` reads in one batch: the same answers as its former one-statement-at-a-time reads on both stores, and on
PostgreSQL one round trip (two for a blocked or held issue), counted in libpq's protocol trace."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bee_contracts import BeeError
from bee_tracker.handlers.get import get
from bee_tracker.store import SqlStore
from bee_tracker.store.ops import Read
from bee_tracker.store.postgres import PostgresDatabase
from bee_tracker.store.readiness import Rule
from tests.conftest import FIXTURES
from tests.tracker.calls import ALICE, call
from tests.tracker.readiness_helpers import FUTURE, NOW, PAST, clocked_store, dep, line
from tests.tracker.sequential_get import sequential_get

EXPORTS = sorted((FIXTURES / "beads").glob("*.jsonl"))
ANY_CHILDREN = json.dumps({"gate": "any-children"})

#: Issues that take every branch of get: blocked (blocks, conditional-blocks, waits-for with either gate, a bad
#: gate), held by a blocked parent and by a held one (which holds only by the transitive rule), deferred directly
#: and through a parent, a deleted and a missing target, and the counts a Beads line can carry.
EDGES = [
    line("t-blocker"),
    line("t-blocked", dependencies=[dep("t-blocked", "t-blocker"), dep("t-blocked", "t-gone")]),
    line("t-cond", dependencies=[dep("t-cond", "t-blocker", "conditional-blocks")]),
    line("t-child", dependencies=[dep("t-child", "t-blocked", "parent-child")]),
    line("t-grandchild", dependencies=[dep("t-grandchild", "t-child", "parent-child")]),
    line("t-spawner", status="closed"),
    line("t-spawner.1", dependencies=[dep("t-spawner.1", "t-spawner", "parent-child")]),
    line("t-spawner.2", status="closed", dependencies=[dep("t-spawner.2", "t-spawner", "parent-child")]),
    line("t-all", dependencies=[dep("t-all", "t-spawner", "waits-for"), dep("t-all", "t-blocker")]),
    line("t-any", dependencies=[dep("t-any", "t-spawner", "waits-for", metadata=ANY_CHILDREN)]),
    line("t-bad-meta", dependencies=[dep("t-bad-meta", "t-spawner", "waits-for", metadata="{not json")]),
    line("t-lost", dependencies=[dep("t-lost", "t-nowhere", "waits-for")]),
    line("t-later", defer_until=FUTURE),
    line("t-was-later", defer_until=PAST),
    line("t-under-later", dependencies=[dep("t-under-later", "t-later", "parent-child")]),
    line(
        "t-counted",
        dependencies=[dep("t-counted", "t-blocker"), dep("t-counted", "t-later", "related")],
        dependency_count=7,
        dependent_count=7,
        comment_count=7,
    ),
    line("t-counts-ref", dependencies=[dep("t-counts-ref", "t-counted")]),
    line("t-closed", status="closed", dependencies=[dep("t-closed", "t-blocker")]),
    json.dumps({"id": "t-gone", "title": "deleted", "status": "tombstone", "deleted_by": "stevey"}),
]


def answer(store: SqlStore, handler: Callable[[Read, Any], Any], issue_id: str, limit: int) -> Any:
    """What ``handler`` answers for ``issue_id``: its data, or its error's code, message and details."""
    try:
        return store.read(handler, {"id": issue_id, "comments_limit": limit})
    except BeeError as error:
        return {"error": (error.code, error.message, error.details)}


def assert_same_answers(store: SqlStore, ids: list[str]) -> None:
    for issue_id in ids:
        for limit in (0, 1, 20):
            assert answer(store, get, issue_id, limit) == answer(store, sequential_get, issue_id, limit), issue_id


def every_id(store: SqlStore) -> list[str]:
    with store.db.read() as tx:
        issues = [row[0] for row in tx.rows("SELECT id FROM issues ORDER BY id")]
        kept = [row[0] for row in tx.rows("SELECT issue_id FROM kept_records WHERE issue_id IS NOT NULL")]
    return [*issues, *sorted(set(kept)), "t-never-was"]


@pytest.fixture
def store(store_url: str) -> Iterator[SqlStore]:
    opened = clocked_store(store_url)
    yield opened
    opened.close()


@pytest.mark.parametrize("export", EXPORTS, ids=[p.stem for p in EXPORTS])
def test_get_answers_as_its_sequential_reads_did_on_every_real_export(store: SqlStore, export: Path) -> None:
    store.import_lines(export.read_bytes().splitlines())
    ids = every_id(store)
    with store.db.read() as tx:
        live = [row[0] for row in tx.rows("SELECT id FROM issues ORDER BY id LIMIT 2")]
    for issue_id in live:  # comments and history beyond what the import brought
        call(store, "add_note", ALICE, id=issue_id, text="one more")
    assert_same_answers(store, ids)


def test_get_answers_as_its_sequential_reads_did_on_every_branch_by_either_rule(store: SqlStore) -> None:
    store.import_lines(EDGES)
    for n in range(3):
        call(store, "add_note", ALICE, id="t-counted", text=f"note {n}")
    call(store, "claim", ALICE, id="t-child")
    ids = every_id(store)
    assert_same_answers(store, ids)
    # The branches were taken: blocked by each kind, held, deferred, deleted, and the Beads counts kept.
    got = {issue_id: call(store, "get", id=issue_id) for issue_id in ("t-all", "t-child", "t-grandchild")}
    assert got["t-all"]["blocked_by"] == ["t-spawner", "t-blocker"]
    assert got["t-child"]["blocked_by"] == ["t-blocked"] and got["t-grandchild"]["blocked_by"] == []
    counted = call(store, "get", id="t-counted", comments_limit=2)
    assert counted["issue"]["comment_count"] == 3 and len(counted["issue"]["comments"]) == 2
    assert counted["issue"]["dependency_count"] == 1 and counted["issue"]["dependent_count"] == 1
    assert not call(store, "get", id="t-under-later")["ready"] and call(store, "get", id="t-was-later")["ready"]
    store.set_rule(Rule(transitive=True))
    assert call(store, "get", id="t-grandchild")["blocked_by"] == ["t-child"]
    assert_same_answers(store, ids)


# -- round trips on PostgreSQL -------------------------------------------------------------------------------


class Traced:
    """A PostgreSQL store on a pool of one connection whose libpq protocol trace the test reads: a round trip is
    one ReadyForQuery from the server (the answer to a Sync, or to a simple Query)."""

    def __init__(self, url: str) -> None:
        self.db = PostgresDatabase(url, max_connections=1)
        self.store = SqlStore(self.db, prefix="t", clock=lambda: NOW)
        self.store.migrate()

    def round_trips(self, handler: Callable[[Read, Any], Any], issue_id: str) -> int:
        with tempfile.TemporaryFile("w+") as trace:
            with self.db.pool.connection() as conn:  # the pool's only connection: the one the call will use
                conn.pgconn.trace(os.dup(trace.fileno()))
                conn.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
            try:
                answer(self.store, handler, issue_id, 20)
            finally:
                with self.db.pool.connection() as conn:
                    conn.pgconn.untrace()
            trace.seek(0)
            messages = [fields[2] for fields in (text.split("\t") for text in trace) if len(fields) > 2]
        return sum(1 for message in messages if message == "ReadyForQuery")


@pytest.fixture
def traced(postgres_server: Any) -> Iterator[Traced]:
    opened = Traced(postgres_server.create_database())
    opened.store.import_lines(EDGES)
    yield opened
    opened.store.close()


@pytest.mark.parametrize(
    ("issue_id", "expected"),
    [
        ("t-blocker", 1),  # ready
        ("t-counted", 2),  # blocked: why, in a second batch
        ("t-all", 2),  # blocked by a waits-for as well
        ("t-child", 2),  # held by its blocked parent
        ("t-gone", 1),  # deleted: not_found from the same batch
        ("t-never-was", 1),
    ],
)
def test_get_on_postgres_takes_one_round_trip_and_two_for_a_blocked_or_held_issue(
    traced: Traced, issue_id: str, expected: int
) -> None:
    assert traced.round_trips(get, issue_id) == expected
    # The trace counts what the former reads cost: BEGIN, about a dozen statements, COMMIT.
    assert traced.round_trips(sequential_get, issue_id) >= (4 if issue_id in ("t-gone", "t-never-was") else 12)


# -- the batch seam (both stores) ----------------------------------------------------------------------------


_PROBE = ("SELECT value FROM meta WHERE key = ?", ["probe"])


def write_then_fail(store: SqlStore, *, batch_first: bool) -> None:
    """Write a probe row in a write transaction, with batches before and after it, then fail it."""
    with store.db.write() as tx:
        if batch_first:  # on PostgreSQL the write after it begins the transaction
            assert tx.batch([_PROBE]) == [[]]
        tx.run("INSERT INTO meta (key, value) VALUES (?, ?)", ["probe", "written"])
        assert tx.batch([_PROBE, ("SELECT COUNT(*) FROM meta WHERE key = ?", ["none"])]) == [[("written",)], [(0,)]]
        raise RuntimeError("roll back")


@pytest.mark.parametrize("batch_first", [False, True], ids=["write-first", "batch-first"])
def test_a_batch_reads_in_its_transaction_and_a_rollback_still_undoes_the_write(
    store: SqlStore, batch_first: bool
) -> None:
    with pytest.raises(RuntimeError, match="roll back"):
        write_then_fail(store, batch_first=batch_first)
    with store.db.read() as tx:
        assert tx.batch([_PROBE]) == [[]] and tx.batch([]) == []


def test_a_failing_statement_in_a_batch_is_the_stores_error_and_the_store_answers_after(store: SqlStore) -> None:
    store.import_lines(EDGES)
    with pytest.raises(BeeError) as info, store.db.read() as tx:
        tx.batch([("SELECT 1", []), ("SELECT id FROM no_such_table", []), ("SELECT 2", [])])
    assert info.value.code == "internal" and "database failed" in info.value.message
    assert call(store, "get", id="t-blocker")["issue"]["id"] == "t-blocker"
