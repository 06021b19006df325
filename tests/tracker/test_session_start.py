"""The session-start context (bee_tracker.session_start), as the MCP prompt and `bee bd prime` give it: an actor's
claims and their leases, the top of ready for it, the handoffs others left for it, and its bound."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bee_tracker import calls
from bee_tracker.session_start import CLAIMS_SHOWN, MAX_CHARS, context
from bee_tracker.store import SqlStore
from tests.tracker.calls import ALICE, BOB, call, new


def _for(store: SqlStore, actor: str, **options: Any) -> str:
    def tool(name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = calls.call(store, name, actor, dict(args))["data"]
        return data

    return context(tool, actor, **options)


def test_claims_with_their_leases_ready_for_the_actor_and_handoffs_left_for_it(store: SqlStore) -> None:
    leased, open_ended = new(store, "Leased", priority=1), new(store, "Open ended", priority=1)
    call(store, "claim", ALICE, id=leased, lease_seconds=600)
    call(store, "claim", ALICE, id=open_ended)
    passed_on = new(store, "Passed on", priority=0)
    call(store, "claim", BOB, id=passed_on)
    call(store, "handoff", BOB, id=passed_on, done="parser", remaining="tests", next="run\nthe suite", release=True)
    held_by_bob = new(store, "Bob's", priority=0)
    call(store, "claim", BOB, id=held_by_bob)
    later = new(store, "Later", priority=4)
    text = _for(store, ALICE, ready=2)
    lines = text.splitlines()
    assert lines[0] == f"## Your session ({ALICE})"
    start = lines.index("### Your claims") + 1
    claims = lines[start : start + 2]
    assert any(line.startswith(f"- {leased} [P1] Leased (task): lease until ") for line in claims), claims
    assert f"- {open_ended} [P1] Open ended (task): no lease: yours until you complete or release it" in claims
    ready = lines[lines.index("### Ready for you (2 of 2 ready)") + 1 :][:2]  # Bob's issue is held: not offered
    assert ready == [f"- {passed_on} [P0] Passed on (task)", f"- {later} [P4] Later (task)"]
    handoff = next(line for line in lines if line.startswith(f"- {passed_on}, from {BOB} at "))
    assert handoff.endswith(": Done: parser; Remaining: tests; Next: run; the suite")
    assert held_by_bob not in text


def test_nothing_held_nothing_ready(store: SqlStore) -> None:
    text = _for(store, ALICE)
    assert "- none: take the next with claim (no id), or claim one of these" in text
    assert "### Ready for you (0 of 0 ready)\n- nothing is ready" in text and "### Handoffs for you\n- none" in text


def test_it_is_bounded_however_much_there_is(store: SqlStore) -> None:
    long = "x" * 5000
    for n in range(CLAIMS_SHOWN + 3):
        issue = new(store, f"{n} {long[:450]}")
        call(store, "claim", BOB, id=issue)
        call(store, "handoff", BOB, id=issue, done=long, remaining=long, next=long, release=True)
        call(store, "claim", ALICE, id=issue)
    text = _for(store, ALICE, ready=20)
    assert len(text) <= MAX_CHARS
    assert text.endswith("cut at 16384 characters: read the rest with search, ready and get.\n")
    assert max(len(line) for line in text.splitlines()) < 1200  # each field cut to 300 characters


def test_claims_past_the_shown_ones_are_counted(store: SqlStore) -> None:
    for n in range(CLAIMS_SHOWN + 3):
        call(store, "claim", ALICE, id=new(store, f"Issue {n}"))
    lines = _for(store, ALICE).splitlines()
    assert "- and 3 more (search status in_progress, assignee you)" in lines
    assert sum(1 for line in lines if line.endswith("no lease: yours until you complete or release it")) == CLAIMS_SHOWN
