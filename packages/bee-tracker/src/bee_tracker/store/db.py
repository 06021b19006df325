"""The one seam between the store's SQL and a database driver: transactions that run ``?``-style SQL.

:class:`Database` has two implementations (SQLite in :mod:`.sqlite`, PostgreSQL in :mod:`.postgres`); the store
above them writes each statement once. Driver exceptions never leave this layer unmapped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

Row = tuple[Any, ...]
#: One ``?``-style statement and its parameters.
Statement = tuple[str, Sequence[Any]]


class Tx(Protocol):
    """One open transaction."""

    #: SQL (no parameters) for the database's own clock in seconds since the epoch, as a floating-point number: what
    #: judges a claim's lease, so that every replica sharing the database judges it alike.
    clock: str

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...

    def row(self, sql: str, params: Sequence[Any] = ()) -> Row | None: ...

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Execute and return the number of rows affected."""
        ...

    def batch(self, statements: Sequence[Statement]) -> list[list[Row]]:
        """Run read statements that do not depend on one another and return each one's rows, in order: on a
        server, in one round trip. Each sees what a :meth:`rows` at that point would see; none may write or lock.
        """
        ...

    def load(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *, skip_duplicates: bool) -> None:
        """Insert ``rows`` (values of ``columns``) into ``table`` at once: a bulk load, not a round trip per row.

        With ``skip_duplicates`` a row whose key is already there is left out instead of failing the load.
        """
        ...

    def stream(self, sql: str, params: Sequence[Any] = ()) -> Iterator[Row]:
        """The rows of a query as the database hands them out, never all in memory at once.

        Other statements may run in the same transaction while the stream is read.
        """
        ...

    def pause_search_index(self) -> None:
        """Stop indexing issues for search as they are inserted, until :meth:`resume_search_index` (a bulk load
        indexes them all at once, several times cheaper)."""
        ...

    def resume_search_index(self, from_position: int) -> None:
        """Index the issues inserted since :meth:`pause_search_index` (those at ``from_position`` or later) and
        index each insert again."""
        ...

    def expect_growth(self) -> None:
        """Plan every later statement of this transaction for the tables as they are when it runs: a bulk load is
        about to grow them (PostgreSQL would otherwise reuse a plan made while they were small, such as a scan of a
        table that held a few rows, for every statement that follows)."""
        ...

    def lock_issue(self, issue_id: str) -> None:
        """Hold the issue's row until commit, so read-check-write on it is atomic."""
        ...

    def lock_issues(self, issue_ids: Sequence[str]) -> None:
        """:meth:`lock_issue` for several issues in one statement."""
        ...

    def lock_first_free(self, sql: str, params: Sequence[Any], alias: str) -> Row | None:
        """The first row of ``sql`` (a SELECT ending in ``ORDER BY … LIMIT …``) whose row of the table aliased
        ``alias`` no other transaction holds, held by this one until commit: so racing takers of "the next issue"
        each get a different one instead of waiting for each other."""
        ...

    def lock_graph(self) -> None:
        """Serialise changes to blocking dependencies, so two links cannot together form a cycle."""
        ...

    def lock_name(self, name: str) -> None:
        """Serialise the transactions that lock the same ``name`` until commit (an actor's idempotency key)."""
        ...

    def next_comment_id(self) -> int: ...

    def reserve_comment_ids(self, highest: int) -> None:
        """Make :meth:`next_comment_id` answer above ``highest`` from now on."""
        ...

    def word_matches(self, text: str) -> tuple[str, list[Any]]:
        """A SELECT of the ids of issues whose text holds every word of ``text``, by the dialect's full-text index."""
        ...


class Database(Protocol):
    """A connection source that hands out transactions."""

    dialect: str

    def read(self) -> AbstractContextManager[Tx]: ...

    def write(self) -> AbstractContextManager[Tx]: ...

    def migrate(self) -> int:
        """Apply pending schema migrations; return the schema version."""
        ...

    def check(self) -> None:
        """Verify the store answers (used by startup before listening)."""
        ...

    def analyze(self) -> None:
        """Refresh the query planner's statistics (after a bulk import)."""
        ...

    def close(self) -> None: ...


def fts_terms(text: str) -> Iterator[str]:
    """The words of a search text, for dialects that build their own query syntax."""
    word: list[str] = []
    for ch in text:
        if ch.isalnum() or ch in "_":
            word.append(ch)
        elif word:
            yield "".join(word)
            word = []
    if word:
        yield "".join(word)
