"""`bee bd` answers Beads' questions with Beads' own answers: ready, blocked, search and stats on every real export,
checked against the rule written from Beads' source (tests/tracker/beads_rule.py), order included."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.tracker.bd.run import EXPORTS, bd, loaded
from tests.tracker.beads_rule import Beads, Issue


def _oracle(export: Path) -> Beads:
    return Beads.imported(export.read_bytes().splitlines())


def _bd_order(beads: Beads, ids: set[str]) -> list[str]:
    """``ids`` in Beads' list order: the issues table before the wisps, then priority, newest, id."""

    def key(issue_id: str) -> tuple[bool, int, float, str]:
        issue: Issue = beads.issues.get(issue_id) or beads.wisps[issue_id]
        return issue_id in beads.wisps, issue.priority, -issue.created_at.timestamp(), issue_id

    return sorted(ids, key=key)


@pytest.mark.parametrize("export", EXPORTS, ids=[p.stem for p in EXPORTS])
def test_ready_is_beads_ready_in_beads_order(store_url: str, export: Path) -> None:
    url = loaded(store_url, export)
    ready = [issue["id"] for issue in bd("ready", "-n", "0", "--json", store=url).json]
    assert ready == _oracle(export).ready(datetime.now(UTC))
    for priority in ("0", "1", "2"):
        listed = [i["id"] for i in bd("ready", "-n", "0", "-p", priority, "--json", store=url).json]
        assert listed == _oracle(export).ready(datetime.now(UTC), priority=int(priority))


@pytest.mark.parametrize("export", EXPORTS, ids=[p.stem for p in EXPORTS])
def test_blocked_is_bd_blocked_with_its_blockers(store_url: str, export: Path) -> None:
    url = loaded(store_url, export)
    beads = _oracle(export)
    expected = {i: sorted(b) for i, b in beads.bd_blocked().items() if i in beads.issues}  # Bee keeps wisps inactive
    answer = bd("blocked", "--json", store=url).json
    assert {item["id"]: item["blocked_by"] for item in answer} == expected
    assert [item["id"] for item in answer] == _bd_order(beads, set(expected))
    assert all(item["blocked_by_count"] == len(item["blocked_by"]) for item in answer)


def _queries(beads: Beads) -> list[str]:
    """Searches as people type them: an id, an id's start (id-like), a word of a title, text with a wildcard."""
    first = sorted(beads.issues)[len(beads.issues) // 2]
    title = next(i.title for i in beads.issues.values() if len(i.title.split()) > 1)
    return [first, first[: first.index("-") + 2], title.split()[0].lower(), title.split()[1].upper(), "e_r", "%"]


@pytest.mark.parametrize("export", EXPORTS, ids=[p.stem for p in EXPORTS])
def test_search_finds_what_bd_search_finds_in_bds_order(store_url: str, export: Path) -> None:
    url = loaded(store_url, export)
    beads = _oracle(export)
    table = {**beads.issues, **beads.wisps}
    for query in _queries(beads):
        found = beads.search(query)
        every = [i["id"] for i in bd("search", query, "-n", "0", "--status", "all", "--json", store=url).json]
        assert every == _bd_order(beads, found), query
        open_ones = {i for i in found if table[i].status != "closed"}  # bd search leaves closed issues out by default
        assert [i["id"] for i in bd("search", query, "-n", "0", "--json", store=url).json] == _bd_order(
            beads, open_ones
        )


def test_search_limits_the_issues_and_the_wisps_apart_as_bd_does(store_url: str) -> None:
    made = '"status":"open","issue_type":"task","created_at":"2026-01-01T00:00:00Z"'
    lines = [
        f'{{"id":"t-1","title":"cache one","priority":1,{made}}}',
        f'{{"id":"t-2","title":"cache two","priority":2,{made}}}',
        f'{{"id":"t-w","title":"cache wisp","priority":0,"ephemeral":true,{made}}}',
    ]
    from bee_tracker.store import open_store

    store = open_store(store_url)
    store.import_lines(lines)
    store.close()
    assert [i["id"] for i in bd("search", "cache", "-n", "1", "--json", store=store_url).json] == ["t-1", "t-w"]
    assert [i["id"] for i in bd("search", "cache", "--json", store=store_url).json] == ["t-1", "t-2", "t-w"]


@pytest.mark.parametrize("export", EXPORTS, ids=[p.stem for p in EXPORTS])
def test_stats_count_as_current_beads_counts(store_url: str, export: Path) -> None:
    url = loaded(store_url, export)
    beads = _oracle(export)
    statuses = [issue.status for issue in beads.issues.values()]
    blocked, _ = beads.computed_blocked(include_wisps=True)
    summary = bd("stats", "--json", store=url).json["summary"]
    assert summary == {
        "average_lead_time_hours": 0,
        "blocked_issues": len(blocked),
        "closed_issues": statuses.count("closed"),
        "deferred_issues": statuses.count("deferred"),
        "epics_eligible_for_closure": 0,
        "in_progress_issues": statuses.count("in_progress"),
        "open_issues": statuses.count("open"),
        "pinned_issues": sum(1 for issue in beads.issues.values() if issue.pinned),
        "ready_issues": max(0, statuses.count("open") - len(blocked)),
        "total_issues": len(beads.issues),
    }


def test_the_answers_above_are_not_vacuous() -> None:
    """The real exports hold ready and blocked issues, and searches that find something (wisps: the test above)."""
    assert sum(len(_oracle(e).ready(datetime.now(UTC))) for e in EXPORTS) > 100
    assert sum(len(_oracle(e).bd_blocked()) for e in EXPORTS) > 20
    assert all(any(_oracle(e).search(q) for q in _queries(_oracle(e))) for e in EXPORTS if _oracle(e).issues)
