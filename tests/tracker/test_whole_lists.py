"""ready and search with ``whole``: each listed issue's record is get's issue (comments aside), its counts are the
issue's own, a page stops where the next whole issue would pass the result limit, and paging still reaches every
issue — on real exports, on both stores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bee_contracts.limits import MAX_RESULT_BYTES
from bee_tracker import calls
from bee_tracker.store import SqlStore, open_store
from tests.conftest import FIXTURES
from tests.tracker.calls import ALICE, call, new

EXPORTS = sorted((FIXTURES / "beads").glob("*.jsonl"))


def _every(store: SqlStore, tool: str, **args: object) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    while True:
        page = calls.call(store, tool, ALICE, {**args, "whole": True, "limit": 100, "offset": len(found)})["data"]
        assert len(json.dumps({"data": page}).encode()) <= MAX_RESULT_BYTES
        found += page["issues"]
        if not page["has_more"]:
            return found
        assert page["issues"], "a page that says there is more lists something"


@pytest.mark.parametrize("export", EXPORTS[:6], ids=[p.stem for p in EXPORTS[:6]])
def test_a_whole_list_holds_each_issue_as_get_reads_it(store_url: str, export: Path) -> None:
    store = open_store(store_url)
    try:
        store.import_lines(export.read_bytes().splitlines())
        for tool in ("ready", "search"):
            listed = _every(store, tool)
            short: list[str] = []
            while True:  # the same issues, in the same order, as the short form lists them
                page = call(store, tool, limit=100, offset=len(short))
                short += [issue["id"] for issue in page["issues"]]
                if not page["has_more"]:
                    break
            assert [item["id"] for item in listed] == short
            for item in listed[:40]:
                got = call(store, "get", id=item["id"], comments_limit=0)
                assert item["record"] == got["issue"], item["id"]
                assert item["comment_count"] == got["comment_count"]
                assert item["blocked_by"] == got["blocked_by"]
                blocking = [d for d in got["dependents"] if d["type"] == "blocks"]
                if len(got["dependents"]) == got["dependents_count"]:  # get lists them all
                    assert item["dependent_count"] == len(blocking)
    finally:
        store.close()


def test_a_page_of_whole_issues_stops_at_the_result_limit_and_pages_on(store_url: str) -> None:
    store = open_store(store_url)
    try:
        big = "x" * 40_000  # seven of these pass 256 KiB
        ids = [new(store, f"Big {n}", description=big) for n in range(9)]
        first = calls.call(store, "ready", ALICE, {"whole": True})["data"]
        assert 0 < len(first["issues"]) < 9 and first["has_more"] and first["total"] == 9
        assert len(json.dumps({"data": first}).encode()) <= MAX_RESULT_BYTES
        assert sorted(item["id"] for item in _every(store, "ready")) == sorted(ids)
        short = calls.call(store, "ready", ALICE, {})["data"]
        assert len(short["issues"]) == 9 and "record" not in short["issues"][0]
    finally:
        store.close()


def test_whole_counts_follow_comments_and_blocking_dependents(store_url: str) -> None:
    store = open_store(store_url)
    try:
        target = new(store, "Target")
        blocked_a, blocked_b, child = new(store, "A"), new(store, "B"), new(store, "Child")
        for blocked in (blocked_a, blocked_b):
            call(store, "link", id=blocked, target=target, type="blocks")
        call(store, "link", id=child, target=target, type="parent-child")
        for text in ("one", "two", "three"):
            call(store, "add_note", id=target, text=text)
        (item,) = _every(store, "search", query="Target")
        assert (item["comment_count"], item["dependent_count"]) == (3, 2)
        assert [d["depends_on_id"] for d in _every(store, "search", query="Child")[0]["record"]["dependencies"]] == [
            target
        ]
    finally:
        store.close()
