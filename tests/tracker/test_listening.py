"""Listening's parts in process: the resource URIs (and every bad one refused with what to change), what a committed
write touches, the bus's stand-ins turned into the URIs its streams subscribed to, PostgreSQL payloads kept under
NOTIFY's limit and a replica's own notifications ignored, and the expiry watcher waking when a lease runs out (on
both stores, nobody writing)."""

from __future__ import annotations

import threading

import pytest

from bee_contracts import BeeError
from bee_tracker import calls
from bee_tracker.listening import changes, uris
from bee_tracker.listening.bus import LocalBus, PostgresBus
from bee_tracker.listening.expiry import ExpiryWatcher
from bee_tracker.store import SqlStore
from bee_tracker.store.feed import Change, Committed, IssueChange


def test_uris_name_an_issue_a_filtered_ready_queue_and_an_actors_claims() -> None:
    assert uris.parse("bee://tracker/issues/bd-a1.2") == uris.Issue("bd-a1.2")
    assert uris.parse("bee://tracker/issues/odd%2Fid") == uris.Issue("odd/id")
    assert uris.parse("bee://tracker/claims/alice%40example.com") == uris.Claims("alice@example.com")
    assert uris.claims_uri("alice@example.com") == "bee://tracker/claims/alice%40example.com"
    assert uris.parse("bee://tracker/ready") == uris.Ready()
    ready = uris.parse("bee://tracker/ready?priority=1&label=a%20b&label=c&limit=10")
    assert ready == uris.Ready(1, ("a b", "c"), 10)
    assert isinstance(ready, uris.Ready) and ready.arguments() == {"priority": 1, "labels": ["a b", "c"], "limit": 10}


@pytest.mark.parametrize(
    ("uri", "words"),
    [
        ("bee://tracker/ready?priority=5", "from 0 to 4"),
        ("bee://tracker/ready?priority=-1", "from 0 to 4"),
        ("bee://tracker/ready?limit=0", "from 1 to 100"),
        ("bee://tracker/ready?limit=101", "from 1 to 100"),
        ("bee://tracker/ready?colour=red", "takes priority, label"),
        ("bee://tracker/ready?" + "&".join(f"label=l{n}" for n in range(51)), "at most 50 labels"),
        ("bee://tracker/issues/", "names one id"),
        ("bee://tracker/issues/a/b", "names one id"),
        ("bee://tracker/claims/", "names one actor"),
        ("bee://tracker/readyish", "serves no resource"),
        ("https://example.com/", "serves no resource"),
    ],
)
def test_a_bad_uri_is_refused_saying_what_to_change(uri: str, words: str) -> None:
    with pytest.raises(BeeError) as refused:
        uris.parse(uri)
    assert refused.value.code.value == "invalid_argument" and words in refused.value.message


def _committed(tool: str, *issues: tuple[str, set[Change], bool], leases: bool = False) -> Committed:
    changed = tuple(IssueChange(issue_id, frozenset(kinds), ready) for issue_id, kinds, ready in issues)
    return Committed(tool, "ann@x.io", "r1", "2026-12-07T00:00:00Z", changed, leases)


def test_a_write_touches_its_issues_the_ready_queue_and_the_claims_it_moved() -> None:
    blocker_closed = _committed(
        "complete",
        ("bd-1", {Change.COMPLETED}, False),
        ("bd-2", {Change.BLOCKER_CLOSED, Change.BECAME_READY}, True),
    )
    assert changes.touched(blocker_closed) == [
        uris.issue_uri("bd-1"),
        uris.issue_uri("bd-2"),
        changes.ANY_READY,
        uris.claims_uri("ann@x.io"),
    ]
    edited_ready = _committed("update", ("bd-3", {Change.EDITED}, True))
    assert changes.touched(edited_ready) == [uris.issue_uri("bd-3"), changes.ANY_READY]
    noted = _committed("add_note", ("bd-4", {Change.COMMENTED}, False))
    assert changes.touched(noted) == [uris.issue_uri("bd-4")]
    reclaimed = _committed("claim", ("bd-5", {Change.RECLAIMED, Change.CLAIMED}, False), leases=True)
    assert changes.touched(reclaimed) == [
        uris.issue_uri("bd-5"),
        uris.claims_uri("ann@x.io"),
        changes.ANY_CLAIMS,
        changes.LEASES,
    ]
    assert changes.expired([]) == []
    assert changes.expired(["bd-6"]) == [uris.issue_uri("bd-6"), changes.ANY_READY, changes.ANY_CLAIMS]


def test_the_stand_ins_become_the_uris_this_processs_streams_subscribed_to() -> None:
    bus = LocalBus()
    first = bus.track(["bee://tracker/ready?label=a", "bee://tracker/claims/ann%40x.io", "skill://x/SKILL.md"])
    second = bus.track(["bee://tracker/ready?label=a", "bee://tracker/ready"])
    touched = [uris.issue_uri("bd-1"), changes.ANY_READY, changes.ANY_CLAIMS, changes.LEASES]
    assert bus.expanded(touched) == [
        uris.issue_uri("bd-1"),
        "bee://tracker/ready?label=a",
        "bee://tracker/ready",
        "bee://tracker/claims/ann%40x.io",
    ]
    second()
    assert bus.expanded([changes.ANY_READY]) == ["bee://tracker/ready?label=a"]
    first()
    assert bus.expanded([changes.ANY_READY, changes.ANY_CLAIMS]) == []


def test_notify_payloads_stay_under_postgresqls_limit_and_a_replica_ignores_its_own() -> None:
    bus = PostgresBus("postgresql://unused")
    touched = [uris.issue_uri(f"bd-{n:04d}-" + "x" * 80) for n in range(400)]
    payloads = bus.payloads(touched)
    assert len(payloads) > 1 and all(len(payload.encode()) < 8000 for payload in payloads)
    assert [uri for payload in payloads for uri in payload.split("\n")[1:]] == touched
    heard: list[list[str]] = []
    bus.post_here = heard.append  # type: ignore[method-assign,assignment]  # what reaches this process's delivery
    bus.heard(payloads[0])
    assert heard == []  # its own: delivered when it was posted
    bus.heard("another-replica\n" + uris.issue_uri("bd-1"))
    assert heard == [[uris.issue_uri("bd-1")]]


def test_the_expiry_watcher_wakes_when_a_lease_runs_out(store: SqlStore) -> None:
    issue = calls.call(store, "create", "ann@x.io", {"title": "leased"})["data"]["id"]
    told = threading.Event()
    posted: list[list[str]] = []

    def post(touched: list[str]) -> None:
        posted.append(touched)
        if uris.issue_uri(issue) in touched:
            told.set()

    watcher = ExpiryWatcher(store, post)
    watcher.start()
    try:
        calls.call(store, "claim", "ann@x.io", {"id": issue, "lease_seconds": 1})
        watcher.heard([changes.LEASES])  # as the bus tells it of the write
        assert told.wait(timeout=30), posted
    finally:
        watcher.stop()
    assert [uris.issue_uri(issue), changes.ANY_READY, changes.ANY_CLAIMS] in posted


def test_the_log_uri_takes_bee_tracker_logs_filters_and_refuses_anything_else() -> None:
    assert uris.parse("bee://tracker/log") == uris.Log()
    parsed = uris.parse("bee://tracker/log?actor=ann%40x.io&issue=bd-1&tool=claim&since=2026-05-01T09:00:00Z&limit=5")
    assert parsed == uris.Log("ann@x.io", "bd-1", "claim", "2026-05-01T09:00:00.000000Z", 5)
    for uri, words in [
        ("bee://tracker/log?limit=101", "from 1 to 100"),
        ("bee://tracker/log?since=yesterday", "RFC 3339 time"),
        ("bee://tracker/log?actor=a&actor=b", "each once"),
        ("bee://tracker/log?colour=red", "takes actor, issue, tool, since and limit"),
    ]:
        with pytest.raises(BeeError) as refused:
            uris.parse(uri)
        assert words in refused.value.message, refused.value.message


def test_a_log_read_returns_the_newest_entries_that_fit_in_a_result_and_says_more_were_left(store: SqlStore) -> None:
    import json

    from bee_contracts.limits import MAX_RESULT_BYTES
    from bee_tracker.listening import resources

    issue = calls.call(store, "create", "ann@x.io", {"title": "relabelled"})["data"]["id"]
    # The history keeps ten labels of those added and of those removed, each of 100 characters of 3 bytes: an entry
    # of about 6 KB, so 100 of them need more than a result may hold.
    for round_ in range(100):
        labels = [f"{round_:02d}-{n:02d}-" + "€" * 94 for n in range(50)]
        calls.call(store, "update", "ann@x.io", {"id": issue, "labels": labels})
    text = resources.read(store, "bob@x.io", f"bee://tracker/log?issue={issue}&limit=100")
    answer = json.loads(text)["data"]
    assert len(text.encode()) <= MAX_RESULT_BYTES and answer["more"] is True
    seqs = [entry["seq"] for entry in answer["entries"]]
    assert seqs == sorted(seqs) and 0 < len(seqs) < 100  # the newest, oldest first
    assert answer["entries"][-1]["changes"]["labels"]  # the last relabelling is in it
    small = json.loads(resources.read(store, "bob@x.io", "bee://tracker/log?tool=create"))["data"]
    assert [entry["issue"] for entry in small["entries"]] == [issue] and small["more"] is False
