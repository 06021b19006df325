"""What substring search matches: each issue's id, title and external_ref lower-cased as Beads lowers them, and
the SQL LIKE pattern of a query read the way Beads' own query reads it.

``bd search`` (``BuildIssueFilterClauses`` in Beads' ``internal/storage/issueops/filters.go``) lower-cases the query
with Go's ``strings.ToLower`` and matches it with SQL ``LIKE`` inside the title (also lower-cased), the id and, for a
query shaped like an id, the external_ref. Bee keeps those three fields lower-cased in each issue's readiness row
(``key_id``, ``key_title``, ``key_ref``, written by :mod:`.readiness` with the issue), so a match is one ``LIKE``
per column that reads the same on SQLite and PostgreSQL whatever their locale, and never misses a Beads match:
Bee's id match is case-insensitive too.
"""

from __future__ import annotations

from typing import Any

from bee_tracker.store.db import Tx
from bee_tracker.store.reads import ORDER

#: Characters Python lowers differently from Go's per-rune ``unicode.ToLower``: U+0130 (Python gives two runes) and
#: capital sigma (Python picks the final form at the end of a word; Go never does).
_CONTEXTUAL = frozenset("\u0130\u03a3")

#: The escape character of every pattern :func:`like_pattern` writes (``LIKE ? ESCAPE '\\'``).
ESCAPE = "\\"


def go_lower(text: str) -> str:
    """``text`` lower-cased rune by rune, as Go's ``strings.ToLower`` does."""
    if text.isascii() or not _CONTEXTUAL.intersection(text):
        return text.lower()
    return "".join("i" if ch == "\u0130" else ch.lower() for ch in text)


def keys_of(issue_id: str, title: str | None, external_ref: str | None) -> tuple[str, str, str | None]:
    """The search keys of one issue: its id, title and external_ref lower-cased."""
    return go_lower(issue_id), go_lower(title or ""), go_lower(external_ref) if external_ref else None


def like_pattern(query: str) -> str:
    """The ``LIKE … ESCAPE '\\'`` pattern matching where Beads' pattern ``%<query lower-cased>%`` matches.

    Beads passes the query to MySQL's ``LIKE`` as it is: ``%`` and ``_`` are wildcards there, and a backslash makes
    the next character literal (a trailing one is itself). The pattern written here says the same in the syntax
    both SQLite and PostgreSQL read alike: every literal ``%``, ``_`` and backslash escaped.
    """
    out = ["%"]
    text = go_lower(query)
    index = 0
    while index < len(text):
        ch = text[index]
        if ch == ESCAPE:
            index += 1
            literal = text[index] if index < len(text) else ESCAPE
            out.append(ESCAPE + literal if literal in "%_\\" else literal)
        else:
            out.append(ch)  # a wildcard stays one, any other character is itself
        index += 1
    out.append("%")
    return "".join(out)


def _substring(alias: str) -> str:
    """A substring of the id, title or external_ref of a readiness row (alias ``alias``)."""
    return " OR ".join(f"{alias}.{key} LIKE ? ESCAPE '{ESCAPE}'" for key in ("key_id", "key_title", "key_ref"))


def text_match(tx: Tx, text: str) -> tuple[str, list[Any], str, list[Any]]:
    """What search matches for ``text``, over the aliases of :data:`~bee_tracker.store.reads.LISTED`: (the WHERE
    clause, its parameters, the ORDER BY, its parameters).

    Every issue whose id, title or external_ref holds ``text`` as Beads reads it (:func:`like_pattern`), and every
    issue whose text holds all its words (the dialect's full-text index), gathered as one set of ids so the
    substring scan reads only the narrow readiness rows. Ranked: the exact id, then substring matches, then word
    matches, each in the lists' order.
    """
    pattern = like_pattern(text)
    words, words_params = tx.word_matches(text)
    where = f"r.issue_id IN (SELECT s.issue_id FROM readiness s WHERE {_substring('s')} UNION {words})"
    order = f"CASE WHEN r.key_id = ? THEN 0 WHEN {_substring('r')} THEN 1 ELSE 2 END, {ORDER}"
    return where, [pattern, pattern, pattern, *words_params], order, [go_lower(text), pattern, pattern, pattern]
