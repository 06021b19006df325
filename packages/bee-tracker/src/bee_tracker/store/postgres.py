"""PostgreSQL through psycopg 3 and a connection pool: the team store that several tracker replicas share."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from bee_contracts import BeeError, ErrorCode
from bee_tracker.store import schema
from bee_tracker.store.db import Row, Statement

# Arbitrary constants naming the advisory locks this store takes.
_MIGRATION_LOCK = 0x62656501
_GRAPH_LOCK = 0x62656502
_NAME_LOCKS = 0x62656503
_PLACEHOLDER = re.compile(r"\?")
#: Rows a streamed query fetches from the server at a time.
_STREAM_ROWS = 2000
#: Names for server-side cursors (unique within a connection).
_CURSORS = itertools.count()


def _sql(statement: str) -> str:
    # The store writes `?` placeholders once for both dialects; psycopg wants `%s` (and no other `%` appears).
    return _PLACEHOLDER.sub("%s", statement)


#: The server's clock in seconds since the epoch, as of the statement's start: every replica asks the same server.
CLOCK = "EXTRACT(EPOCH FROM statement_timestamp())::float8"


class _PgTx:
    """A transaction on a pooled connection (in autocommit) that begins only at its first statement outside a
    batch: a tool that reads only in batches never waits for a BEGIN or a COMMIT."""

    clock = CLOCK

    def __init__(self, conn: psycopg.Connection[Any], finish: ExitStack) -> None:
        self._conn = conn
        self._finish = finish
        self._begun = False

    @property
    def conn(self) -> psycopg.Connection[Any]:
        """The connection, inside this transaction (begun here on first use; committed or rolled back by
        :meth:`PostgresDatabase._transaction`)."""
        if not self._begun:
            self._finish.enter_context(self._conn.transaction())
            self._begun = True
        return self._conn

    def batch(self, statements: Sequence[Statement]) -> list[list[Row]]:
        # One pipeline: every statement goes out before the one Sync, so the batch is one round trip. Before the
        # transaction has begun, the statements up to that Sync run as PostgreSQL's implicit transaction (a
        # failing one aborts the rest and raises here); at READ COMMITTED, PostgreSQL's default, which the store
        # never changes, each statement sees what was committed when it started either way. (psycopg's
        # transaction() inside a pipeline would sync its BEGIN and its COMMIT apart: four round trips, counted in
        # the libpq trace.)
        conn = self._conn
        with conn.pipeline():
            cursors = [conn.execute(_sql(sql), tuple(params)) for sql, params in statements]
        return [cursor.fetchall() for cursor in cursors]

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self.conn.execute(_sql(sql), tuple(params)).fetchall()

    def row(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        found: Row | None = self.conn.execute(_sql(sql), tuple(params)).fetchone()
        return found

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self.conn.execute(_sql(sql), tuple(params)).rowcount

    def load(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *, skip_duplicates: bool) -> None:
        names = ", ".join(columns)
        # COPY: a third less time than the same rows as INSERTs (measured on the issues table). It cannot skip a
        # row, so rows that may repeat a key go to a staging table of this transaction first, then in with one
        # INSERT that skips the taken keys (one statement to plan, where INSERTs row by row were one each: an
        # import plans every statement afresh, see expect_growth). A fresh heap is read in the order it was
        # written, so of two rows with one key the first is kept, as the INSERTs kept it.
        into = f"bee_staging_{table}" if skip_duplicates else table
        with self.conn.cursor() as cursor:
            if skip_duplicates:
                cursor.execute(
                    f"CREATE TEMP TABLE IF NOT EXISTS {into} ON COMMIT DROP AS SELECT {names} FROM {table} WITH NO DATA"
                )
            with cursor.copy(f"COPY {into} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            if skip_duplicates:
                cursor.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {into} ON CONFLICT DO NOTHING")
                cursor.execute(f"TRUNCATE {into}")

    def stream(self, sql: str, params: Sequence[Any] = ()) -> Iterator[Row]:
        # A server-side cursor: the result stays on the server and arrives in pieces of itersize rows.
        with self.conn.cursor(name=f"bee_stream_{next(_CURSORS)}") as cursor:
            cursor.itersize = _STREAM_ROWS
            cursor.execute(_sql(sql), tuple(params))
            yield from cursor

    def pause_search_index(self) -> None:
        """Nothing to do: the search column is computed by PostgreSQL as each row is written."""

    def resume_search_index(self, from_position: int) -> None:
        """Nothing to do, for the same reason."""

    def expect_growth(self) -> None:
        # psycopg prepares a statement run five times, and PostgreSQL then keeps one generic plan for it. An
        # import's deletes, one a line, planned while `issues` held a few rows scanned it whole for every line as it
        # grew: quadratic (into a store of tombstones, 10.8 s in them for 20,000 lines, 53 s for 40,000; 1.8 s for
        # 20,000 planned as they ran). Statements that carry many rows (COPY, one INSERT for a staged batch) keep
        # the planning per statement small.
        self.conn.execute("SET LOCAL plan_cache_mode = force_custom_plan")

    def lock_issue(self, issue_id: str) -> None:
        self.conn.execute("SELECT 1 FROM issues WHERE id = %s FOR UPDATE", (issue_id,))

    def lock_issues(self, issue_ids: Sequence[str]) -> None:
        self.conn.execute("SELECT 1 FROM issues WHERE id = ANY(%s) FOR UPDATE", (list(issue_ids),))

    def lock_first_free(self, sql: str, params: Sequence[Any], alias: str) -> Row | None:
        # SKIP LOCKED: a row another claimer holds is passed over, not waited for (and rechecked by the caller once
        # held: at READ COMMITTED a row changed since this statement began is re-read, the rest of the join is not).
        locked = f"{sql} FOR UPDATE OF {alias} SKIP LOCKED"
        found: Row | None = self.conn.execute(_sql(locked), tuple(params)).fetchone()
        return found

    def lock_graph(self) -> None:
        self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (_GRAPH_LOCK,))

    def lock_name(self, name: str) -> None:
        # Two advisory-lock key spaces: (int, int) keys never meet the single-bigint locks above.
        self.conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_NAME_LOCKS, name))

    def next_comment_id(self) -> int:
        found = self.conn.execute("SELECT nextval('comment_ids')").fetchone()
        return int(found[0]) if found else 1

    def reserve_comment_ids(self, highest: int) -> None:
        self.conn.execute(
            "SELECT setval('comment_ids', GREATEST(%s, (SELECT last_value FROM comment_ids)))", (highest,)
        )

    def word_matches(self, text: str) -> tuple[str, list[Any]]:
        return "SELECT id FROM issues WHERE search @@ plainto_tsquery('simple', ?)", [text]


#: Failures where nothing was written and the same call can succeed a moment later.
_CONTENDED = (
    psycopg.errors.LockNotAvailable,
    psycopg.errors.SerializationFailure,
    psycopg.errors.DeadlockDetected,
    # A concurrent writer inserted the same row first (two adds of one dependency); this transaction rolled back.
    psycopg.errors.UniqueViolation,
)


def _mapped(exc: Exception, *, writing: bool) -> BeeError:
    """The one place PostgreSQL's errors become contract errors, by exception class (never by message text)."""
    if isinstance(exc, PoolTimeout):
        return BeeError(
            ErrorCode.BUSY,
            "no database connection became free in time; retry shortly",
            details={"retryAfterSeconds": 1},
        )
    if isinstance(exc, _CONTENDED):
        return BeeError(ErrorCode.BUSY, "the tracker database is busy; retry shortly", details={"retryAfterSeconds": 1})
    if isinstance(exc, psycopg.errors.DataError):
        # SQLSTATE class 22: a value the database cannot hold. The tools check their input first; this is the
        # backstop that keeps such input from ever reading as a server fault.
        return BeeError(ErrorCode.INVALID_ARGUMENT, "a value cannot be stored by the tracker database; change it")
    return BeeError(
        ErrorCode.INTERNAL, f"the tracker database failed: {exc.__class__.__name__}", outcome_unknown=writing
    )


class PostgresDatabase:
    """The tracker store on a PostgreSQL database (``postgresql://…``)."""

    dialect = "postgres"

    def __init__(
        self, conninfo: str, *, max_connections: int = 20, timeout: float = 10.0, lock_timeout: float = 10.0
    ) -> None:
        # A write that waits longer than lock_timeout for a row another transaction holds is answered busy
        # (retryable) instead of hanging until the operation's deadline.
        lock_ms = int(lock_timeout * 1000)

        def configure(conn: psycopg.Connection[Any]) -> None:
            conn.execute(f"SET lock_timeout = {lock_ms}")

        self.pool = ConnectionPool(
            conninfo,
            min_size=1,
            max_size=max_connections,
            timeout=timeout,
            open=True,
            kwargs={"autocommit": True},
            configure=configure,
            name="bee-tracker",
        )

    @contextmanager
    def _transaction(self, *, writing: bool) -> Iterator[_PgTx]:
        try:
            with self.pool.connection() as conn, ExitStack() as finish:
                yield _PgTx(conn, finish)
        except psycopg.Error as exc:
            raise _mapped(exc, writing=writing) from None
        except PoolTimeout as exc:
            raise _mapped(exc, writing=False) from None

    @contextmanager
    def read(self) -> Iterator[_PgTx]:
        with self._transaction(writing=False) as tx:
            yield tx

    @contextmanager
    def write(self) -> Iterator[_PgTx]:
        with self._transaction(writing=True) as tx:
            yield tx

    def migrate(self) -> int:
        with self.write() as tx:
            # Replicas starting together must not both migrate.
            tx.conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            exists = tx.row("SELECT to_regclass('public.meta')")
            return schema.apply(tx, schema.POSTGRES, has_meta=exists is not None and exists[0] is not None)

    def check(self) -> None:
        with self.read() as tx:
            tx.row("SELECT COUNT(*) FROM issues")

    def analyze(self) -> None:
        # VACUUM as well: a bulk load leaves no page marked all-visible, so every count and list would read the
        # table's rows beside its index (a count of 18,000 ready issues at 100,000: 29 ms, against 1-5 ms after).
        with self.pool.connection() as conn:  # the pool's connections are in autocommit, which VACUUM needs
            conn.execute("VACUUM (ANALYZE) issues, labels, dependencies, comments, readiness")

    def close(self) -> None:
        self.pool.close()
