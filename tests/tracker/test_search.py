"""search finds everything Beads' own search finds (substrings of title, id and external_ref), on both stores, and
Bee's word matches in the other text besides; ranked and paged so every hit is reachable."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bee_tracker import calls
from bee_tracker.store import SqlStore
from tests.conftest import FIXTURES
from tests.tracker.beads_rule import Beads
from tests.tracker.calls import ALICE, call, new
from tests.tracker.readiness_helpers import assert_consistent, clocked_store, line

EXPORTS = sorted((FIXTURES / "beads").glob("*.jsonl"))


@pytest.fixture
def store(store_url: str) -> Iterator[SqlStore]:
    opened = clocked_store(store_url)
    yield opened
    opened.close()


def every_hit(store: SqlStore, query: str, **filters: Any) -> list[str]:
    """Every match of ``query``, page after page, checking that the pages add up to the total."""
    found: list[str] = []
    while True:
        page = calls.call(store, "search", ALICE, {"query": query, "limit": 100, "offset": len(found), **filters})[
            "data"
        ]
        found += [issue["id"] for issue in page["issues"]]
        if not page["has_more"]:
            assert len(found) == page["total"], query
            return found


def queries_for(beads: Beads, rng: random.Random, count: int) -> list[str]:
    """What people type into bd search, drawn from the data: word stems, plurals, CamelCase pieces, id fragments,
    odd case, and the LIKE wildcards Beads passes through."""
    issues = sorted([*beads.issues.values(), *beads.wisps.values()], key=lambda i: i.id)
    chosen = rng.sample(issues, min(count, len(issues)))
    queries: list[str] = ["%", "_", "a_b", "50%", "\\%", "fix", "test", "TEST", "-", "."]
    for issue in chosen:
        words = re.findall(r"[A-Za-z][A-Za-z0-9]*", issue.title)
        if words:
            word = rng.choice(words)
            queries += [word[:4], word.upper(), word + "s", word.rstrip("s"), word[1:-1] or word]
            queries += re.findall(r"[A-Z][a-z]+", word)  # CamelCase pieces
        queries += [issue.id, issue.id.upper(), issue.id[:-1], issue.id.split("-", 1)[-1], issue.id[-3:]]
        if len(issue.title) > 8:
            start = rng.randrange(len(issue.title) - 6)
            queries.append(issue.title[start : start + 6])  # any substring, spaces and punctuation included
    return [q for q in dict.fromkeys(q.strip() for q in queries) if q]


@pytest.mark.parametrize("export", EXPORTS, ids=[p.stem for p in EXPORTS])
def test_every_bd_search_hit_is_a_bee_hit_on_every_real_export(store: SqlStore, export: Path) -> None:
    lines = export.read_bytes().splitlines()
    store.import_lines(lines)
    beads = Beads.imported(lines)
    rng = random.Random(export.stem)
    checked = matched = 0
    for query in queries_for(beads, rng, 25):
        expected = beads.search(query)
        got = every_hit(store, query)
        assert len(got) == len(set(got)), query
        missed = expected - set(got)
        assert not missed, (query, sorted(missed)[:5])
        checked += 1
        matched += bool(expected)
    assert checked >= 10 and matched >= checked // 2  # the queries find things; the check is not vacuous


def test_stems_plurals_camel_case_and_id_fragments_are_found(store: SqlStore) -> None:
    store.import_lines(
        [
            line("t-a1b2", title="Patrol the PatrolScheduler loop"),
            line("t-c3d4", title="Fix flaky tests", description="the OAuth callback races"),
            line("t-e5f6", title="Ünïcode ÜBER title İstanbul ΣΟΦΙΑ", external_ref="GH-1234"),
            line("t-g7h8.3", title="child", description="mentions patrol only in the text"),
        ]
    )
    assert every_hit(store, "patr")[0] == "t-a1b2"  # a stem, inside a word (Beads finds 972 of these, Bee did 0)
    assert every_hit(store, "Scheduler") == ["t-a1b2"]  # CamelCase
    assert every_hit(store, "test") == ["t-c3d4"]  # the singular finds the plural
    assert every_hit(store, "a1b") == ["t-a1b2"] and every_hit(store, "g7h8.") == ["t-g7h8.3"]  # id fragments
    assert every_hit(store, "T-A1B2") == ["t-a1b2"]  # ids case-insensitively
    assert every_hit(store, "über") == ["t-e5f6"] and every_hit(store, "istanbul") == ["t-e5f6"]
    assert every_hit(store, "σοφια") == ["t-e5f6"]  # Go lowers Σ to σ wherever it stands
    assert every_hit(store, "gh-12") == ["t-e5f6"]  # external_ref, as Beads searches it for an id-like query
    assert every_hit(store, "oauth callback") == ["t-c3d4"]  # Bee's word search in the rest of the text
    assert every_hit(store, "patrol") == ["t-a1b2", "t-g7h8.3"]  # title substring ranks above a word in the text


def test_wildcards_and_escapes_read_as_beads_reads_them(store: SqlStore) -> None:
    store.import_lines(
        [
            line("t-1", title="50% done"),
            line("t-2", title="snake_case name"),
            line("t-3", title="snakeXcase name"),
            line("t-4", title="back\\slash"),
        ]
    )
    assert every_hit(store, "50%") == ["t-1"]
    assert set(every_hit(store, "snake_case")) == {"t-2", "t-3"}  # _ is any one character, as in Beads
    assert every_hit(store, "snake\\_case") == ["t-2"]  # a backslash makes it literal
    assert every_hit(store, "back\\\\slash") == ["t-4"]
    beads = Beads.imported(store.export_lines())
    for query in ("50%", "snake_case", "snake\\_case", "back\\\\slash", "%", "\\"):
        assert beads.search(query) <= set(every_hit(store, query)), query


def test_search_ranks_the_exact_id_first_and_pages_reach_every_hit(store: SqlStore) -> None:
    ids = [new(store, f"Login step {n}", priority=n % 5) for n in range(130)]
    exact = ids[77]
    assert every_hit(store, exact)[0] == exact
    hits = every_hit(store, "login")
    assert sorted(hits) == sorted(ids) and len(hits) == 130
    first = call(store, "search", query="login", limit=100)
    assert first["total"] == 130 and first["has_more"] is True and len(first["issues"]) == 100
    priorities = [issue["priority"] for issue in first["issues"]]
    assert priorities == sorted(priorities)  # most urgent first, as bd search orders
    call(store, "update", id=ids[0], title="Renamed completely")
    assert ids[0] not in every_hit(store, "login") and every_hit(store, "renamed") == [ids[0]]
    assert_consistent(store)


def test_a_huge_or_hostile_query_is_only_text(store: SqlStore) -> None:
    new(store, "plain")
    for query in ("%%%%" * 250, "' OR 1=1 --", '"; DROP TABLE issues; --', "\\" * 999, "*" * 1000):
        hits = every_hit(store, query)
        assert hits in ([], [i["id"] for i in call(store, "search")["issues"]]), query
    assert call(store, "search", query="plain")["total"] == 1
    assert json.dumps(call(store, "search", query="_" * 1000))  # answers, matching nothing longer than its text
