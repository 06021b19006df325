"""The kept readiness equals a computation from scratch after every write: random write sequences (hypothesis) and
racing writers, on SQLite and PostgreSQL."""

from __future__ import annotations

import random
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bee_contracts import BeeError, ErrorCode
from bee_tracker import calls
from bee_tracker.store import SqlStore, sources
from bee_tracker.store.readiness import Rule
from tests.conftest import BACKENDS
from tests.tracker.beads_rule import Beads
from tests.tracker.readiness_helpers import (
    FUTURE,
    NOW_TIME,
    PAST,
    assert_consistent,
    assert_matches_beads,
    clocked_store,
    every_ready,
    line,
)
from tests.tracker.readiness_helpers import (
    dep as link,
)

ACTORS = ("alice@example.com", "bob@example.com")
KINDS = ("blocks", "conditional-blocks", "waits-for", "parent-child", "related")
STATUSES = ("open", "in_progress", "blocked", "deferred", "pinned", "hooked")

#: How a random write may be refused without anything being wrong.
REFUSALS = frozenset(
    {
        ErrorCode.INVALID_ARGUMENT,
        ErrorCode.NOT_FOUND,
        ErrorCode.CONFLICT,
        ErrorCode.FORBIDDEN,
        ErrorCode.BLOCKED,
        ErrorCode.BUSY,
    }
)

_index = st.integers(min_value=0, max_value=30)
OPERATIONS = st.one_of(
    st.tuples(
        st.just("create"),
        st.one_of(st.none(), _index),
        st.lists(_index, max_size=2),
        st.sampled_from(["task", "epic", "gate"]),
    ),
    st.tuples(st.just("link"), _index, _index, st.sampled_from(KINDS), st.sampled_from(["add", "remove"])),
    st.tuples(st.just("status"), _index, st.sampled_from(STATUSES)),
    st.tuples(st.just("complete"), _index),
    st.tuples(st.just("defer"), _index, st.sampled_from([PAST, FUTURE, None])),
    st.tuples(st.just("type"), _index, st.sampled_from(["task", "gate", "bug"])),
    st.tuples(st.just("claim"), _index, st.sampled_from(ACTORS)),
    st.tuples(st.just("release"), _index, st.sampled_from(ACTORS)),
    st.tuples(st.just("note"), _index),
)


def apply(store: SqlStore, ids: list[str], operation: tuple[Any, ...], actor: str = ACTORS[0]) -> None:
    """Run one random write; a refused one (a cycle, someone else's claim, a closed issue) changes nothing."""
    kind, *rest = operation

    def pick(index: int) -> str:
        return ids[index % len(ids)]

    try:
        if kind == "create" or not ids:
            parent, prerequisites, issue_type = rest if kind == "create" else (None, [], "task")
            args = {"title": f"issue {len(ids)}", "issue_type": issue_type}
            if parent is not None and ids:
                args["parent"] = pick(parent)
            if prerequisites and ids:
                args["prerequisites"] = sorted({pick(p) for p in prerequisites})
            ids.append(calls.call(store, "create", actor, args)["data"]["id"])
        elif kind == "link":
            a, b, link_kind, action = rest
            calls.call(store, "link", actor, {"id": pick(a), "target": pick(b), "type": link_kind, "action": action})
        elif kind == "status":
            calls.call(store, "update", actor, {"id": pick(rest[0]), "status": rest[1]})
        elif kind == "complete":
            calls.call(store, "complete", actor, {"id": pick(rest[0]), "summary": "done"})
        elif kind == "defer":
            calls.call(store, "update", actor, {"id": pick(rest[0]), "defer_until": rest[1]})
        elif kind == "type":
            calls.call(store, "update", actor, {"id": pick(rest[0]), "issue_type": rest[1]})
        elif kind in ("claim", "release"):
            calls.call(store, kind, rest[1], {"id": pick(rest[0])})
        else:
            calls.call(store, "add_note", actor, {"id": pick(rest[0]), "text": "note"})
    except BeeError as exc:
        if exc.code not in REFUSALS:
            raise


def transitive_ready(store: SqlStore) -> list[str]:
    """Beads' ready, without every descendant of a blocked issue: what the transitive option promises."""
    beads = Beads.imported(store.export_lines())
    blocked, _ = beads.computed_blocked()
    below: dict[str, list[str]] = {}
    for dep in beads.deps:
        if dep.type == "parent-child":
            below.setdefault(dep.depends_on_id, []).append(dep.issue_id)
    hidden, frontier = set(), list(blocked)
    while frontier:
        for child in below.get(frontier.pop(), ()):
            if child not in hidden:
                hidden.add(child)
                frontier.append(child)
    return [i for i in beads.ready(NOW_TIME) if i not in hidden]


def fresh_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if backend == "sqlite":
        return str(tmp_path / f"{uuid.uuid4().hex}.db")
    url: str = request.getfixturevalue("postgres_server").create_database()
    return url


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_write_sequences_keep_readiness_equal_to_a_computation_from_scratch(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    examples = 30 if backend == "sqlite" else 8

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(operations=st.lists(OPERATIONS, min_size=5, max_size=24), transitive=st.booleans())
    def run(operations: list[tuple[Any, ...]], transitive: bool) -> None:
        store = clocked_store(fresh_url(backend, request, tmp_path))
        try:
            if transitive:
                store.set_rule(Rule(transitive=True))
            ids: list[str] = []
            for operation in operations:
                apply(store, ids, operation)
                assert_consistent(store)
                if transitive:
                    assert every_ready(store) == transitive_ready(store)
                else:
                    assert_matches_beads(store)
        finally:
            store.close()

    run()


@pytest.mark.parametrize("backend", BACKENDS)
def test_racing_writers_leave_readiness_consistent(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    store = clocked_store(fresh_url(backend, request, tmp_path))
    try:
        ids: list[str] = []
        seed = random.Random(7)
        for _ in range(25):
            apply(store, ids, ("create", seed.choice([None, *range(len(ids))]), [], "task"))
        done: list[int] = []
        failures: list[BaseException] = []
        start = threading.Barrier(6)

        def writer(n: int) -> None:
            rng = random.Random(n)
            start.wait()
            try:
                for _ in range(30):
                    operation = rng.choice(
                        [
                            (
                                "link",
                                rng.randrange(25),
                                rng.randrange(25),
                                rng.choice(KINDS[:4]),
                                rng.choice(["add", "remove"]),
                            ),
                            ("status", rng.randrange(25), rng.choice(STATUSES)),
                            ("complete", rng.randrange(25)),
                            ("defer", rng.randrange(25), rng.choice([PAST, FUTURE])),
                            ("claim", rng.randrange(25), ACTORS[n % 2]),
                        ]
                    )
                    apply(store, list(ids), operation, ACTORS[n % 2])
                    done.append(1)
            except BaseException as exc:
                failures.append(exc)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
        assert not failures, failures
        assert len(done) == 6 * 30
        assert_consistent(store)
        assert_matches_beads(store)
    finally:
        store.close()


#: One imported line for one of a few ids: what it says of itself, and its dependencies (type, target).
IMPORTED = st.tuples(
    st.integers(min_value=0, max_value=11),
    st.sampled_from([*STATUSES, "closed", "tombstone"]),
    st.sampled_from(["task", "epic", "gate"]),
    st.sampled_from([{}, {"pinned": True}, {"ephemeral": True}]),
    st.sampled_from([None, PAST, FUTURE]),
    st.lists(st.tuples(st.sampled_from([*KINDS, "waits-for-any"]), st.integers(min_value=0, max_value=13)), max_size=3),
)


def imported_line(
    number: int, status: str, issue_type: str, flags: dict[str, bool], defer: str | None, links: Any
) -> str:
    issue_id = f"t-{number}"
    deps = [
        link(issue_id, f"t-{target}", "waits-for", metadata='{"gate":"any-children"}')
        if kind == "waits-for-any"
        else link(issue_id, f"t-{target}", kind)
        for kind, target in links
    ]
    return line(issue_id, status=status, issue_type=issue_type, defer_until=defer, dependencies=deps or None, **flags)


@pytest.mark.parametrize("backend", BACKENDS)
def test_imports_into_a_store_that_holds_issues_keep_readiness_equal_to_a_computation_from_scratch(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """An import into a store that already holds issues brings only what it touched up to date (new and replaced
    issues, deletions, and their neighbours in the store): the result must equal a rebuild, and Beads' rule."""
    examples = 30 if backend == "sqlite" else 8

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(
        steps=st.lists(
            st.tuples(st.lists(IMPORTED, min_size=1, max_size=8), st.lists(OPERATIONS, max_size=3)),
            min_size=2,
            max_size=5,
        ),
        transitive=st.booleans(),
        others=st.sampled_from([0, 150]),
    )
    def run(steps: list[tuple[list[Any], list[Any]]], transitive: bool, others: int) -> None:
        store = clocked_store(fresh_url(backend, request, tmp_path))
        try:
            if transitive:
                store.set_rule(Rule(transitive=True))
            # Issues nothing links to: with 150 a store is large enough against each import of a few lines that the
            # import brings only what it touched up to date; without them it is rebuilt whole.
            store.import_lines([line(f"t-other-{n}") for n in range(others)] or [line("t-0")])
            for imported, writes in steps:
                # an import (replacing and deleting the team's work, closing cycles if it must), then a few writes
                lines = [imported_line(*item) for item in imported]
                store.import_from(sources.from_lines(lines), discard_changes=True, allow_cycles=True)
                with store.db.read() as tx:
                    ids = [row[0] for row in tx.rows("SELECT id FROM issues ORDER BY id")]
                for write in writes:
                    apply(store, ids, write)
                assert_consistent(store)
                if transitive:
                    assert every_ready(store) == transitive_ready(store)
                else:
                    assert_matches_beads(store)
        finally:
            store.close()

    run()
