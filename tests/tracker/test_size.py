"""What is written can be read: every issue fits get whole; writes past the caps are refused, saying by how much."""

import json
from typing import Any

import pytest

from bee_contracts import BeeError
from bee_contracts.limits import MAX_RESULT_BYTES
from bee_hostkit.results import render, result_bytes
from bee_tracker.model import COMMENTS_MAX_BYTES, ISSUE_MAX_BYTES
from bee_tracker.store import SqlStore
from bee_tracker.store.bounds import issue_bytes
from tests.tracker.calls import ALICE, BOB, call, new, refused

#: A character that costs 13 bytes in a result: \u0001 in structuredContent, \\u0001 in the text copy.
HEAVY = "\x01"


def get_fits(store: SqlStore, issue_id: str, **args: Any) -> tuple[dict[str, Any], int]:
    data = call(store, "get", id=issue_id, **args)
    render({"data": data})  # what the host does before answering: refuses a result over the limit
    size = result_bytes({"data": data})
    assert size <= MAX_RESULT_BYTES
    return data, size


def test_a_create_that_get_could_never_return_is_refused(store: SqlStore) -> None:
    # Schema-valid (65,536 characters), but 852 KiB as get returns it.
    error = refused(store, "invalid_argument", "create", title="huge", description=HEAVY * 65536)
    assert error.details is not None
    over = error.details["overByBytes"]
    assert over > 0 and error.details["issueBytes"] == ISSUE_MAX_BYTES + over
    assert f"{over} bytes over" in error.message
    assert call(store, "search")["total"] == 0  # nothing was created


def test_writes_that_would_pass_the_cap_are_refused(store: SqlStore) -> None:
    prerequisite = new(store, "prerequisite")
    issue_id = new(store, "full")
    record = call(store, "get", id=issue_id)["issue"]
    room = ISSUE_MAX_BYTES - issue_bytes(record)
    call(store, "update", id=issue_id, description=HEAVY * (room // 13 - 10))  # just fits
    nearly = call(store, "get", id=issue_id)["issue"]
    assert 0 < ISSUE_MAX_BYTES - issue_bytes(nearly) < 200
    before = call(store, "get", id=issue_id)["state_revision"]
    for tool, args in (
        ("update", {"notes": HEAVY * 100}),
        ("update", {"add_labels": [HEAVY * 100]}),
        ("link", {"target": prerequisite}),
        ("complete", {"summary": HEAVY * 100}),
        ("claim", {}),
    ):
        error = refused(store, "invalid_argument", tool, "x" * 300, id=issue_id, **args)
        assert error.details is not None
        assert error.details["overByBytes"] > 0, tool
    assert call(store, "get", id=issue_id)["state_revision"] == before  # nothing landed
    note = refused(store, "invalid_argument", "add_note", id=issue_id, text=HEAVY * 8000)
    assert note.details is not None
    assert note.details["commentBytes"] == COMMENTS_MAX_BYTES + note.details["overByBytes"]
    call(store, "add_note", id=issue_id, text="a short note still fits")  # notes are not part of the issue's cap


def test_get_always_fits_even_with_every_share_full(store: SqlStore) -> None:
    prerequisites = [new(store, HEAVY * 500) for _ in range(40)]
    issue_id = new(store, "crowded", prerequisites=prerequisites)
    for _ in range(40):
        call(store, "create", BOB, title=HEAVY * 500, prerequisites=[issue_id])
    room = ISSUE_MAX_BYTES - issue_bytes(call(store, "get", id=issue_id)["issue"])
    call(store, "update", id=issue_id, description=HEAVY * (room // 13 - 10))
    for _ in range(60):
        call(store, "add_note", BOB, id=issue_id, text=HEAVY * 7800)  # each just under the comment cap
    data, size = get_fits(store, issue_id, comments_limit=200)
    assert size > 200 * 1024  # close to the limit: the shares were full
    assert data["comment_count"] == 60 and 0 < len(data["issue"]["comments"]) < 60
    assert data["depends_on_count"] == 40 and 0 < len(data["depends_on"]) < 40
    assert data["dependents_count"] == 40 and 0 < len(data["dependents"]) < 40
    assert data["history_count"] == 62
    newest = data["issue"]["comments"][-1]["id"]
    assert newest == max(c["id"] for c in data["issue"]["comments"])  # the newest are the ones shown


def test_get_of_an_epic_with_thousands_of_dependents_and_a_long_comment_history(store: SqlStore) -> None:
    comments = [
        {"id": n, "issue_id": "t-epic", "author": "a", "text": f"round {n}: " + "x" * 30000} for n in range(1, 151)
    ]
    epic = {"id": "t-epic", "title": "epic", "status": "open", "issue_type": "epic", "comments": comments}
    lines = [json.dumps(epic)]
    lines += [
        json.dumps(
            {
                "id": f"t-c{n}",
                "title": '"' * 400,
                "status": "open",
                "dependencies": [{"issue_id": f"t-c{n}", "depends_on_id": "t-epic", "type": "parent-child"}],
            }
        )
        for n in range(3000)
    ]
    store.import_lines(lines)
    data, _ = get_fits(store, "t-epic")
    assert (data["comment_count"], data["dependents_count"]) == (150, 3000)
    assert data["issue"]["comments"][-1]["id"] == 150 and len(data["issue"]["comments"]) < 150
    assert 0 < len(data["dependents"]) < 3000


def test_an_imported_line_over_the_cap_stops_the_import(store: SqlStore) -> None:
    good = json.dumps({"id": "t-a", "title": "fine"})
    big = json.dumps({"id": "t-b", "title": "big", "description": HEAVY * 20000})
    with pytest.raises(BeeError) as info:
        store.import_lines([good, big])
    assert info.value.details == {"line": 2} and "bytes over the cap" in info.value.message
    assert store.export_lines() == []
    long_comment = json.dumps({"id": "t-c", "title": "long", "comments": [{"id": 1, "text": HEAVY * 9000}]})
    with pytest.raises(BeeError, match="line 1 has a comment"):
        store.import_lines([long_comment])


def test_lists_end_where_the_next_issue_would_not_fit(store: SqlStore) -> None:
    store.import_lines([json.dumps({"id": f"t-{n:03d}", "title": HEAVY * 5000}) for n in range(100)])
    found = call(store, "search", limit=100)
    assert found["total"] == 100 and found["has_more"] is True and 0 < len(found["issues"]) < 100
    assert result_bytes({"data": found}) <= MAX_RESULT_BYTES
    ready = call(store, "ready", limit=100)
    assert ready["has_more"] is True and result_bytes({"data": ready}) <= MAX_RESULT_BYTES


@pytest.mark.parametrize(
    "bad",
    [
        "not a date",
        "2026-05-01",
        "2026-13-01T00:00:00Z",
        "2026-05-01T09:00:00",
        "2026-05-01 09:00:00Z",
        "2026-05-01T09:00:00+01:60",
    ],
)
def test_defer_until_must_be_rfc_3339(store: SqlStore, bad: str) -> None:
    issue_id = new(store)
    error = refused(store, "invalid_argument", "update", id=issue_id, defer_until=bad)
    assert "RFC 3339" in error.message and error.details == {"argument": "defer_until"}


@pytest.mark.parametrize(
    "good", ["2999-01-01T00:00:00Z", "2999-05-01T09:00:00.123456789+02:00", "2016-12-31T23:59:60Z", None]
)
def test_defer_until_accepts_rfc_3339_and_null(store: SqlStore, good: str | None) -> None:
    issue_id = new(store)
    call(store, "update", ALICE, id=issue_id, defer_until=good)
    assert call(store, "get", id=issue_id)["issue"].get("defer_until") == good
