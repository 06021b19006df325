"""Ready and blocked follow Beads' own rule, on both stores: checked against an implementation of the rule written
from Beads' Go source (tests/tracker/beads_rule.py) on every real export and on generated hierarchies, and the
maintained state against a from-scratch computation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bee_tracker.store import SqlStore, readiness, sources
from bee_tracker.store.readiness import Rule
from tests.conftest import FIXTURES
from tests.tracker.beads_rule import Beads
from tests.tracker.calls import ALICE, BOB, call, new, refused
from tests.tracker.readiness_helpers import (
    FUTURE,
    NOW_TIME,
    PAST,
    assert_consistent,
    assert_matches_beads,
    clocked_store,
    dep,
    every_ready,
    line,
    state,
)

EXPORTS = sorted((FIXTURES / "beads").glob("*.jsonl"))


@pytest.fixture
def store(store_url: str) -> Iterator[SqlStore]:
    opened = clocked_store(store_url)
    yield opened
    opened.close()


def ready_ids(store: SqlStore, **filters: Any) -> list[str]:
    return every_ready(store, **filters)


@pytest.mark.parametrize("export", EXPORTS, ids=[p.stem for p in EXPORTS])
def test_ready_and_blocked_are_beads_own_on_every_real_export(store: SqlStore, export: Path) -> None:
    lines = export.read_bytes().splitlines()
    store.import_lines(lines)
    beads = Beads.imported(lines)
    assert every_ready(store) == beads.ready(NOW_TIME)
    assert_matches_beads(store)
    assert_consistent(store)
    for priority in range(5):  # the filters narrow exactly as bd ready's do
        assert every_ready(store, priority=priority) == beads.ready(NOW_TIME, priority=priority)
    blockers = beads.bd_blocked()
    for issue_id, expected in blockers.items():  # bd blocked's reasons, issue by issue
        if issue_id in beads.issues:
            got = call(store, "get", id=issue_id)
            assert set(got["blocked_by"]) == set(expected) and got["ready"] is False, issue_id


def test_the_real_exports_hold_what_the_rule_decides() -> None:
    """The comparisons above are not vacuous: the exports have blocked issues, held children and ready work."""
    totals = {"ready": 0, "blocked": 0, "held": 0}
    for export in EXPORTS:
        beads = Beads.imported(export.read_bytes().splitlines())
        blocked, _ = beads.computed_blocked()
        totals["ready"] += len(beads.ready(NOW_TIME))
        totals["blocked"] += len(blocked)
        totals["held"] += len({c for c, _ in beads._children_of(blocked)} - blocked)
    assert totals["ready"] > 100 and totals["blocked"] > 20 and totals["held"] > 0, totals


def test_wisps_pinned_and_orchestration_types_are_never_offered(store: SqlStore) -> None:
    store.import_lines(
        [
            line("t-eph", ephemeral=True, title="Process witness mail"),
            line("t-legacy", wisp=True),
            line("t-nohist", no_history=True),
            line("t-pinflag", pinned=True),
            line("t-pinstatus", status="pinned"),
            *(
                line(f"t-{kind}", issue_type=kind)
                for kind in ("merge-request", "gate", "molecule", "message", "agent", "role", "rig")
            ),
            line("t-work"),
            # Blockers that are not active never block: a wisp, a pinned status, a closed issue, a missing id.
            line("t-a", dependencies=[dep("t-a", "t-eph")]),
            line("t-b", dependencies=[dep("t-b", "t-pinstatus")]),
            line("t-c", dependencies=[dep("t-c", "t-gone")]),
            line("t-closed", status="closed"),
            line("t-d", dependencies=[dep("t-d", "t-closed", "conditional-blocks")]),
            # A pinned flag alone leaves its issue active, so it still blocks (blocked.go reads only the status).
            line("t-e", dependencies=[dep("t-e", "t-pinflag")]),
        ]
    )
    ready = ready_ids(store)
    assert set(ready) == {"t-work", "t-a", "t-b", "t-c", "t-d"}
    assert call(store, "get", id="t-e")["blocked_by"] == ["t-pinflag"]
    assert call(store, "search", query="witness mail")["total"] == 1  # a wisp is still found by search
    assert_matches_beads(store)
    assert_consistent(store)


def test_only_blocks_and_conditional_blocks_block_and_an_own_status_blocks_nobody(store: SqlStore) -> None:
    store.import_lines(
        [
            line("t-blocker"),
            line("t-hooked", status="hooked"),
            line("t-held-status", status="blocked"),
            line("t-deferred-status", status="deferred"),
            line("t-1", dependencies=[dep("t-1", "t-blocker", "related"), dep("t-1", "t-blocker", "discovered-from")]),
            line("t-2", dependencies=[dep("t-2", "t-blocker", "blocked-by"), dep("t-2", "t-blocker", "follows")]),
            line("t-3", dependencies=[dep("t-3", "t-hooked")]),  # a custom active status blocks
            line("t-4", dependencies=[dep("t-4", "t-held-status")]),  # an issue with status blocked is active
            # Children of issues whose own status is blocked or deferred are not held (they are not blocked).
            line("t-held-status.1", dependencies=[dep("t-held-status.1", "t-held-status", "parent-child")]),
            line("t-deferred-status.1", dependencies=[dep("t-deferred-status.1", "t-deferred-status", "parent-child")]),
        ]
    )
    ready = set(ready_ids(store))
    assert {"t-1", "t-2", "t-held-status.1", "t-deferred-status.1", "t-blocker"} <= ready
    assert not {"t-3", "t-4", "t-hooked", "t-held-status", "t-deferred-status"} & ready
    assert_matches_beads(store)


def test_waits_for_waits_on_the_spawners_children_with_either_gate(store: SqlStore) -> None:
    any_gate = json.dumps({"gate": "any-children"})
    store.import_lines(
        [
            line("t-spawner", status="closed"),  # the spawner's own status does not matter
            line("t-spawner.1", dependencies=[dep("t-spawner.1", "t-spawner", "parent-child")]),
            line("t-spawner.2", status="closed", dependencies=[dep("t-spawner.2", "t-spawner", "parent-child")]),
            line("t-all", dependencies=[dep("t-all", "t-spawner", "waits-for")]),
            line("t-any", dependencies=[dep("t-any", "t-spawner", "waits-for", metadata=any_gate)]),
            line("t-empty"),
            line("t-none", dependencies=[dep("t-none", "t-empty", "waits-for")]),
            line("t-lost", dependencies=[dep("t-lost", "t-nowhere", "waits-for")]),
            line("t-bad-meta", dependencies=[dep("t-bad-meta", "t-spawner", "waits-for", metadata="{not json")]),
        ]
    )
    ready = set(ready_ids(store))
    # all-children waits while one child is active; any-children stops waiting once one child closed.
    assert "t-all" not in ready and "t-bad-meta" not in ready
    assert {"t-any", "t-none", "t-lost"} <= ready
    assert call(store, "get", id="t-all")["blocked_by"] == ["t-spawner"]
    assert_matches_beads(store)
    call(store, "complete", id="t-spawner.1", summary="done")  # the last active child closes
    assert {"t-all", "t-bad-meta"} <= set(ready_ids(store))
    assert_matches_beads(store)
    assert_consistent(store)


def test_an_import_into_a_store_that_holds_issues_updates_its_neighbours(store: SqlStore) -> None:
    """A later import touches issues already in the store: it blocks those that depended on ids it brings, frees
    those its deletions and replacements unblock (a spawner's child taken away included), holds the children of
    what it blocks, and passes a parent's deferral down, all without a rebuild."""
    others = [line(f"t-other-{n}") for n in range(60)]  # a store much larger than the import: see importing.py
    store.import_lines(
        [
            *others,
            line("t-spawner"),
            line("t-child", dependencies=[dep("t-child", "t-spawner", "parent-child")]),
            line("t-waiter", dependencies=[dep("t-waiter", "t-spawner", "waits-for")]),
            line("t-early", dependencies=[dep("t-early", "t-later", "blocks")]),  # t-later does not exist yet
            line("t-kid", dependencies=[dep("t-kid", "t-early", "parent-child")]),
            line("t-young", dependencies=[dep("t-young", "t-parent", "parent-child")]),
            line("t-blocker"),
            line("t-blocked", dependencies=[dep("t-blocked", "t-blocker", "blocks")]),
        ]
    )
    assert {"t-early", "t-kid", "t-young", "t-blocker"} <= set(ready_ids(store))
    assert not {"t-waiter", "t-blocked"} & set(ready_ids(store))
    store.import_lines(
        [
            line("t-later"),  # blocks t-early, which now holds t-kid
            line("t-child"),  # no longer the spawner's child: t-waiter stops waiting
            line("t-blocker", status="tombstone"),  # deleted: t-blocked is free
            line("t-parent", defer_until=FUTURE),  # t-young's parent, deferred
        ]
    )
    ready = set(ready_ids(store))
    assert {"t-waiter", "t-blocked", "t-later"} <= ready and not {"t-early", "t-kid", "t-young", "t-parent"} & ready
    assert_matches_beads(store)
    assert_consistent(store)


def test_deferral_hides_the_issue_and_a_future_parent_deferral_hides_its_children(store: SqlStore) -> None:
    store.import_lines(
        [
            line("t-later", defer_until=FUTURE),
            line("t-was", defer_until=PAST),
            line("t-epic", issue_type="epic", status="closed", defer_until=FUTURE),  # any status of the parent
            line("t-epic.1", dependencies=[dep("t-epic.1", "t-epic", "parent-child")]),
            line("t-epic.1.1", dependencies=[dep("t-epic.1.1", "t-epic.1", "parent-child")]),
            line("t-old", defer_until=PAST),
            line("t-old.1", dependencies=[dep("t-old.1", "t-old", "parent-child")]),
        ]
    )
    ready = set(ready_ids(store))
    assert {"t-was", "t-old", "t-old.1", "t-epic.1.1"} <= ready  # one level, like Beads
    assert not {"t-later", "t-epic.1"} & ready
    assert_matches_beads(store)
    call(store, "update", id="t-epic", defer_until=PAST)
    assert "t-epic.1" in ready_ids(store)
    call(store, "update", id="t-old", defer_until=FUTURE)
    assert "t-old.1" not in ready_ids(store) and call(store, "get", id="t-old.1")["ready"] is False
    assert_matches_beads(store)
    assert_consistent(store)


def test_order_is_priority_then_newest_then_id_and_every_ready_issue_is_reachable(store: SqlStore) -> None:
    lines = [line(f"t-{n:03d}", priority=n % 3, created_at=f"2026-01-{1 + n % 28:02d}T00:00:00Z") for n in range(250)]
    lines.append(line("t-undated", priority=0, created_at=None))
    store.import_lines(lines)
    first = call(store, "ready")
    assert len(first["issues"]) == 100 and first["total"] == 251 and first["has_more"] is True  # default limit 100
    found = every_ready(store)
    assert len(found) == len(set(found)) == 251
    assert found == Beads.imported(lines).ready(NOW_TIME)
    priority_zero = [i for i in found if int(i.removeprefix("t-").replace("undated", "0")) % 3 == 0 or i == "t-undated"]
    assert priority_zero[-1] == "t-undated"  # no created_at sorts last within its priority


def test_within_one_rounded_second_the_order_is_by_id_as_in_beads(store: SqlStore) -> None:
    """Beads keeps created_at in whole seconds, rounded (Dolt's DATETIME): .2 and .4 of one second tie, .6 joins the
    next second, and ties go by id. Newest first by microseconds would give t-d, t-c, t-b, t-a."""
    lines = [
        line("t-d", created_at="2026-01-01T10:00:01.400000Z"),
        line("t-c", created_at="2026-01-01T10:00:00.600000Z"),
        line("t-b", created_at="2026-01-01T10:00:00.400000Z"),
        line("t-a", created_at="2026-01-01T10:00:00.200000Z"),
        line("t-e", created_at="2026-01-01T09:59:59.500000Z"),  # half a second rounds up, to 10:00:00
    ]
    store.import_lines(lines)
    assert every_ready(store) == ["t-c", "t-d", "t-a", "t-b", "t-e"] == Beads.imported(lines).ready(NOW_TIME)
    searched = call(store, "search", query="t-")["issues"]
    assert [issue["id"] for issue in searched] == ["t-c", "t-d", "t-a", "t-b", "t-e"]


def test_a_store_kept_by_the_first_rule_version_is_rebuilt_in_whole_seconds(store: SqlStore) -> None:
    store.import_lines(
        [line("t-b", created_at="2026-01-01T10:00:00.400Z"), line("t-a", created_at="2026-01-01T10:00:00.2Z")]
    )
    with store.db.write() as tx:  # as version 1 kept it: microseconds, and so newest first by them
        tx.run("UPDATE readiness SET created_epoch = created_epoch + 0.4 WHERE issue_id = 't-b'")
        tx.run("UPDATE meta SET value = ? WHERE key = ?", [json.dumps({"version": 1}), readiness.RULE_KEY])
    assert every_ready(store) == ["t-b", "t-a"]
    store.migrate()
    assert every_ready(store) == ["t-a", "t-b"]
    assert_consistent(store)


def test_a_blocked_issue_holds_its_direct_children_and_the_transitive_option_all_descendants(store: SqlStore) -> None:
    chain = [line("t-top", dependencies=[dep("t-top", "t-blocker")]), line("t-blocker")]
    parent = "t-top"
    for depth in range(1, 300):  # a deep hierarchy
        child = f"t-d{depth}"
        chain.append(line(child, dependencies=[dep(child, parent, "parent-child")]))
        parent = child
    store.import_lines(chain)
    ready = set(ready_ids(store))
    assert "t-d1" not in ready and "t-d2" in ready and parent in ready
    assert_matches_beads(store)
    assert store.rule() == Rule(transitive=False)
    assert store.set_rule(Rule(transitive=True)) is True
    assert store.set_rule(Rule(transitive=True)) is False
    assert set(ready_ids(store)) == {"t-blocker"}
    assert call(store, "get", id=parent)["blocked_by"] == ["t-d298"]
    assert_consistent(store)
    call(store, "complete", id="t-blocker", summary="done")
    assert parent in ready_ids(store) and "t-d1" in ready_ids(store)
    assert_consistent(store)
    fresh = call(store, "create", title="new blocker")["id"]
    call(store, "link", id="t-top", target=fresh)
    assert set(ready_ids(store)) == {fresh}
    assert_consistent(store)
    store.set_rule(Rule())
    ready = set(ready_ids(store))
    assert "t-d2" in ready and "t-d1" not in ready and fresh in ready
    assert_consistent(store)


def test_cycles_are_refused_by_link_and_an_imported_cycle_still_settles(store: SqlStore) -> None:
    a, b = new(store, "a"), new(store, "b")
    call(store, "link", id=a, target=b)
    assert "cycle" in refused(store, "invalid_argument", "link", id=b, target=a, type="parent-child").message
    imported = [
        line("t-x", dependencies=[dep("t-x", "t-y", "parent-child"), dep("t-x", "t-z")]),
        line("t-y", dependencies=[dep("t-y", "t-x", "parent-child")]),
        line("t-z", dependencies=[dep("t-z", "t-y", "blocks")]),
    ]
    store.import_from(sources.from_lines(imported), allow_cycles=True)  # taken as they come, as Beads does
    for rule in (Rule(transitive=True), Rule()):
        store.set_rule(rule)
        assert_consistent(store)
    assert_matches_beads(store)


def test_stale_backlogs_closed_blockers_and_reopened_work(store: SqlStore) -> None:
    """A backlog where most blockers finished long ago: closing, reopening and re-linking move issues in and out."""
    blocker = new(store, "old blocker")
    waiting = [new(store, f"waiting {n}", prerequisites=[blocker]) for n in range(5)]
    assert not set(waiting) & set(ready_ids(store))
    call(store, "complete", id=blocker, summary="long ago")
    assert set(waiting) <= set(ready_ids(store))
    call(store, "update", id=blocker, status="open")  # reopened: it blocks again
    assert not set(waiting) & set(ready_ids(store))
    call(store, "update", id=blocker, status="pinned")  # pinned: not active, blocks nobody
    assert set(waiting) <= set(ready_ids(store))
    call(store, "update", id=blocker, status="in_progress")
    call(store, "link", id=waiting[0], target=blocker, action="remove")
    assert waiting[0] in ready_ids(store) and waiting[1] not in ready_ids(store)
    assert_matches_beads(store)
    assert_consistent(store)


def test_claim_records_started_at_where_bd_writes_it_and_keeps_it(store: SqlStore) -> None:
    store.import_lines([line("t-1", updated_at="2026-01-02T00:00:00Z", closed_at=None)])
    first = call(store, "claim", id="t-1")
    issue = call(store, "get", id="t-1")["issue"]
    assert issue["started_at"] == first["last_activity_at"]
    keys = list(json.loads(store.export_lines()[0]))
    assert keys.index("started_at") == keys.index("updated_at") + 1
    call(store, "release", id="t-1")
    call(store, "claim", BOB, id="t-1")
    assert call(store, "get", id="t-1")["issue"]["started_at"] == first["last_activity_at"]  # the first start stays
    fresh = new(store, "made here")
    call(store, "update", id=fresh, status="in_progress")
    assert call(store, "get", id=fresh)["issue"]["started_at"]


def test_the_counts_in_an_imported_line_follow_the_data_after_writes(store: SqlStore) -> None:
    hermes = (FIXTURES / "beads" / "NousResearch__hermes-agent.jsonl").read_bytes().splitlines()
    store.import_lines(hermes)
    before = {json.loads(text)["id"]: json.loads(text) for text in store.export_lines()}
    first, second = "hermes-agent-cbc", "hermes-agent-e3q"  # the second is closed: linking to it closes no cycle
    call(store, "add_note", id=first, text="one more")
    call(store, "link", id=first, target=second)
    after = {json.loads(text)["id"]: json.loads(text) for text in store.export_lines()}
    assert after[first]["comment_count"] == before[first]["comment_count"] + 1
    assert after[first]["dependency_count"] == before[first]["dependency_count"] + 1
    assert after[second]["dependent_count"] == before[second]["dependent_count"] + 1
    assert list(after[first])[-3:] == ["dependency_count", "dependent_count", "comment_count"]  # still last
    call(store, "link", id=first, target=second, action="remove")
    again = {json.loads(text)["id"]: json.loads(text) for text in store.export_lines()}
    assert again[second]["dependent_count"] == before[second]["dependent_count"]


def test_a_store_from_before_migration_5_builds_its_readiness(store_url: str) -> None:
    from bee_tracker.store import SqlStore, open_database
    from bee_tracker.store import schema as migrations

    db = open_database(store_url)
    steps = migrations.SQLITE if db.dialect == "sqlite" else migrations.POSTGRES
    with db.write() as tx:
        migrations.apply(tx, steps[:4], has_meta=False)
        for issue_id, extra in (("t-a", "{}"), ("t-b", "{}"), ("t-w", '{"ephemeral": true}')):
            tx.run(
                "INSERT INTO issues (id, title, status, extra, last_activity_at) VALUES (?, ?, 'open', ?, ?)",
                [issue_id, f"Issue {issue_id.upper()}", extra, "2026-01-01T00:00:00Z"],
            )
        tx.run("INSERT INTO dependencies (issue_id, depends_on_id, type, position) VALUES ('t-a', 't-b', 'blocks', 0)")
    old = SqlStore(db, prefix="t")
    try:
        assert old.migrate() == migrations.LATEST
        assert every_ready(old) == ["t-b"]
        assert call(old, "search", query="issue t-")["total"] == 3
        assert_consistent(old)
    finally:
        old.close()


def test_a_changed_rule_version_rebuilds_on_migrate(store: SqlStore) -> None:
    new(store, "x")
    with store.db.write() as tx:
        tx.run("UPDATE readiness SET is_ready = 0")
        tx.run("UPDATE meta SET value = ? WHERE key = ?", [json.dumps({"version": 0}), readiness.RULE_KEY])
    assert every_ready(store) == []
    store.migrate()
    assert len(every_ready(store)) == 1


def test_writes_that_change_no_readiness_leave_every_other_issue_alone(store: SqlStore) -> None:
    blocker = new(store, "blocker")
    waiting = new(store, "waiting", prerequisites=[blocker])
    others = state(store)
    call(store, "add_note", id=waiting, text="note")
    call(store, "claim", ALICE, id=waiting)
    call(store, "update", id=waiting, title="Renamed", priority=0)
    now = state(store)
    assert now[blocker] == others[blocker]
    assert now[waiting][9] == 1 and now[waiting][-2] == "renamed"  # still blocked; its search key follows
    assert_consistent(store)


def test_bee_tracker_rule_shows_and_chooses_the_rule_of_the_store(tmp_path: Path) -> None:
    from tests.tracker.calls import bee

    home = tmp_path / "home"
    source = tmp_path / "issues.jsonl"
    source.write_text(
        "\n".join(
            [
                line("t-top", dependencies=[dep("t-top", "t-blocker")]),
                line("t-blocker"),
                line("t-top.1", dependencies=[dep("t-top.1", "t-top", "parent-child")]),
                line("t-top.1.1", dependencies=[dep("t-top.1.1", "t-top.1", "parent-child")]),
            ]
        )
        + "\n"
    )
    assert bee("tracker", "import", "--home", str(home), str(source)).returncode == 0
    shown = bee("tracker", "rule", "--home", str(home))
    assert json.loads(shown.stdout) == {"transitive": False}
    chosen = bee("tracker", "rule", "--home", str(home), "--transitive")
    assert json.loads(chosen.stdout) == {"transitive": True} and "readiness rebuilt" in chosen.stderr
    assert "rule unchanged" in bee("tracker", "rule", "--home", str(home), "--transitive").stderr
    from bee_tracker.store import open_store

    opened = open_store(str(home / "tracker.db"))
    try:
        assert every_ready(opened) == ["t-blocker"]
    finally:
        opened.close()
    assert json.loads(bee("tracker", "rule", "--home", str(home), "--beads").stdout) == {"transitive": False}
