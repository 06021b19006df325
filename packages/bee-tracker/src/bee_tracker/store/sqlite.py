"""SQLite in WAL mode: the embedded default. One connection per thread; writers serialise on BEGIN IMMEDIATE."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bee_contracts import BeeError, ErrorCode
from bee_tracker.store import schema
from bee_tracker.store.db import Row, Statement, fts_terms

_BUSY_TIMEOUT_SECONDS = 10.0

#: Primary result codes meaning another connection holds the lock (extended codes carry them in the low byte).
_LOCKED = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})


def _busy(message: str) -> BeeError:
    return BeeError(ErrorCode.BUSY, message, details={"retryAfterSeconds": 1})


def _mapped(exc: sqlite3.Error, *, writing: bool) -> BeeError:
    """The one place SQLite's errors become contract errors, by result code (never by message text)."""
    primary = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if primary in _LOCKED:
        return _busy("the tracker database is busy; retry shortly")
    return BeeError(
        ErrorCode.INTERNAL, f"the tracker database failed: {exc.__class__.__name__}", outcome_unknown=writing
    )


#: SQLite's clock in seconds since the epoch (millisecond resolution; one value throughout a statement).
CLOCK = "((julianday('now') - 2440587.5) * 86400.0)"


class _SqliteTx:
    clock = CLOCK

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self.conn.execute(sql, tuple(params)).fetchall()

    def row(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        found: Row | None = self.conn.execute(sql, tuple(params)).fetchone()
        return found

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self.conn.execute(sql, tuple(params)).rowcount

    def batch(self, statements: Sequence[Statement]) -> list[list[Row]]:
        # In process there is no round trip to save: the statements run in turn.
        return [self.rows(sql, params) for sql, params in statements]

    def load(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *, skip_duplicates: bool) -> None:
        skip = " ON CONFLICT DO NOTHING" if skip_duplicates else ""
        self.conn.executemany(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)}){skip}", rows
        )

    def stream(self, sql: str, params: Sequence[Any] = ()) -> Iterator[Row]:
        # A cursor of its own: SQLite steps it row by row while other statements run on the connection.
        cursor = self.conn.execute(sql, tuple(params))
        try:
            yield from cursor
        finally:
            cursor.close()

    def pause_search_index(self) -> None:
        # Dropped inside the transaction: other connections never see the table without its trigger, and a
        # rollback brings it back.
        self.conn.execute("DROP TRIGGER issues_fts_insert")

    def resume_search_index(self, from_position: int) -> None:
        self.conn.execute(
            "INSERT INTO issues_fts (rowid, title, description, design, acceptance_criteria, notes) "
            "SELECT rowid, title, description, design, acceptance_criteria, notes FROM issues WHERE position >= ?",
            (from_position,),
        )
        self.conn.execute(schema.SQLITE_FTS_INSERT_TRIGGER)

    def expect_growth(self) -> None:
        """Nothing to do: SQLite plans each statement from its indexes, whatever the tables' size."""

    def lock_issue(self, issue_id: str) -> None:
        """Nothing to do: BEGIN IMMEDIATE already holds the database's single write lock."""

    def lock_issues(self, issue_ids: Sequence[str]) -> None:
        """Nothing to do, for the same reason."""

    def lock_first_free(self, sql: str, params: Sequence[Any], alias: str) -> Row | None:
        # The single writer holds the whole database: the first row is free.
        return self.row(sql, params)

    def lock_graph(self) -> None:
        """Nothing to do, for the same reason."""

    def lock_name(self, name: str) -> None:
        """Nothing to do, for the same reason."""

    def next_comment_id(self) -> int:
        found = self.row("SELECT COALESCE(MAX(int_id), 0) + 1 FROM comments")
        return int(found[0]) if found else 1

    def reserve_comment_ids(self, highest: int) -> None:
        """Nothing to do: ids come from MAX(int_id), which already counts the imported ones."""

    def word_matches(self, text: str) -> tuple[str, list[Any]]:
        terms = list(fts_terms(text))
        if not terms:
            return "SELECT id FROM issues WHERE 1 = 0", []
        # Each word quoted: user text never reaches FTS5's query syntax.
        query = " AND ".join('"' + term.replace('"', '""') + '"' for term in terms)
        return "SELECT id FROM issues WHERE rowid IN (SELECT rowid FROM issues_fts WHERE issues_fts MATCH ?)", [query]


class SqliteDatabase:
    """The tracker store on one SQLite file."""

    dialect = "sqlite"

    def __init__(self, path: Path, *, busy_timeout: float = _BUSY_TIMEOUT_SECONDS) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        # Writers of this process queue here rather than in SQLite's busy handler, which sleeps with growing
        # back-off and starves some writers for seconds under load (measured: p99 of 2 s at 32 writers).
        self._writer = threading.Lock()

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=self.busy_timeout)
            conn.execute("PRAGMA journal_mode = WAL")
            # NORMAL in WAL mode: a committed write survives the process being killed (not a power cut).
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    @contextmanager
    def _transaction(self, begin: str, *, writing: bool) -> Iterator[_SqliteTx]:
        conn = self._connection()
        try:
            conn.execute(begin)
        except sqlite3.Error as exc:
            raise _mapped(exc, writing=False) from None
        try:
            yield _SqliteTx(conn)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            conn.execute("ROLLBACK")
            raise _mapped(exc, writing=writing) from None

    @contextmanager
    def read(self) -> Iterator[_SqliteTx]:
        try:
            with self._transaction("BEGIN", writing=False) as tx:
                yield tx
        except sqlite3.Error as exc:
            raise _mapped(exc, writing=False) from None

    @contextmanager
    def write(self) -> Iterator[_SqliteTx]:
        if not self._writer.acquire(timeout=self.busy_timeout):
            raise _busy("the tracker database is busy with other writes; retry shortly")
        try:
            with self._transaction("BEGIN IMMEDIATE", writing=True) as tx:
                yield tx
        except sqlite3.Error as exc:
            raise _mapped(exc, writing=True) from None
        finally:
            self._writer.release()

    def migrate(self) -> int:
        with self.write() as tx:
            exists = tx.row("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'")
            return schema.apply(tx, schema.SQLITE, has_meta=exists is not None)

    def check(self) -> None:
        with self.read() as tx:
            tx.row("SELECT COUNT(*) FROM issues")

    def analyze(self) -> None:
        self._connection().execute("ANALYZE")

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()
