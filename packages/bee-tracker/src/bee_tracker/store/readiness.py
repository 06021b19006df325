"""Beads' ready and blocked rule, kept in the store by the writer instead of recomputed by every read.

The rule is current Beads' (``internal/storage/issueops/ready_work.go`` and ``blocked.go``; docs/hosts/tracker.md
cites the lines), in these terms:

- A **wisp** is an issue whose line sets ``ephemeral``, ``no_history`` or the legacy ``wisp``: Beads keeps it apart
  (its wisps table), so it is never ready, never active, and nothing counts as its child.
- An issue is **active** while it is live (not missing, not a tombstone), not a wisp, and its status is neither
  ``closed`` nor ``pinned``.
- An active issue is **blocked** when it has a ``blocks`` or ``conditional-blocks`` dependency on an active issue, or
  a ``waits-for`` dependency on a spawner (a live issue that is not a wisp) with an active child — with the
  ``any-children`` gate in the dependency's metadata, an active child and no closed one. No other dependency type
  blocks, and an issue's own status (``blocked``, ``deferred``) blocks nobody.
- An issue is **held** when it is a direct child of a blocked issue (one level, as Beads; with the store's
  ``transitive`` option, when any ancestor is blocked).
- An issue is **eligible** when its status is ``open`` and it is not pinned, not a wisp and not an orchestration
  type; it is **ready** when it is eligible, not blocked, not held, and neither its own ``defer_until`` nor any
  parent's is in the future.
- Bee's one addition, for claims that carry a lease (:mod:`.claimlease`): an issue in progress under a leased claim
  is eligible too, but ready only once the database's clock has passed the lease's expiry (``lease_epoch``, a copy
  of it): an expired claim is offered again without anyone writing, as Beads' reclaim offers it. Beads' own data
  carries no Bee lease, so its ready answers are Beads' own.

Each issue has one narrow row in ``readiness`` (schema migration 5) holding that state (ready apart from time), the
latest defer time among its parents, its search keys (:mod:`.keys`) and copies of the columns the lists filter and order
by (and the lease's expiry). A write records what it touched (:class:`Touched`) and :func:`refresh` brings the rows of
the touched issues' neighbourhoods up to date in the same transaction; an import into a store that holds issues does the
same for everything it wrote and removed (:func:`after_import`); an import into an empty store, a migration or a change
of rule runs :func:`rebuild`. Reads only compare the two defer times with the clock, and the lease's expiry with the
database's.

On PostgreSQL several writers run at once. Every write that can change another issue's state holds the graph lock
(``Tx.lock_graph``) before it reads its neighbours, so such writes apply one after another. A write that changes
only its own issue (a claim, an edit of its text) writes its own columns, and its ``is_ready`` as an expression the
database evaluates on the row's latest version, so it never waits for that lock and never undoes a blockage a
concurrent writer just stored.
"""

from __future__ import annotations

import json
import math
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from bee_tracker.model import NOT_WORK_TYPES, PARENT_CHILD
from bee_tracker.store.batched import in_batches, marks, set_columns, set_flag
from bee_tracker.store.db import Row, Statement, Tx
from bee_tracker.store.keys import keys_of

#: Dependency types whose active target blocks an active issue.
BLOCKS: Final = ("blocks", "conditional-blocks")
#: The fan-out gate: waits while the spawner (its target) has active children.
WAITS_FOR: Final = "waits-for"
#: Statuses in which an issue is not active (nor is a wisp, in any status).
INACTIVE_STATUSES: Final = ("closed", "pinned")
#: The line keys that make an issue a wisp (Beads' ``ephemeral``, ``no_history`` and the legacy ``wisp``).
WISP_KEYS: Final = ("ephemeral", "no_history", "wisp")

#: The meta key holding the store's rule, and the version of the code that keeps it (a new version rebuilds).
#: Version 2 keeps ``created_epoch`` in whole seconds, as Beads orders (:func:`whole_second`).
RULE_KEY: Final = "readiness_rule"
RULE_VERSION: Final = 2

_BLOCKS = ", ".join(f"'{t}'" for t in BLOCKS)

#: ``is_ready`` of a readiness row (ready apart from the two defer times), from the row's own columns.
READY_EXPR: Final = "CASE WHEN is_eligible = 1 AND is_blocked = 0 AND is_held = 0 THEN 1 ELSE 0 END"

#: The columns of a readiness row an issue's own writer keeps (the rest follow from its neighbours).
_OWN = (
    "status",
    "priority",
    "created_epoch",
    "defer_epoch",
    "is_eligible",
    "is_active",
    "key_id",
    "key_title",
    "key_ref",
    "lease_epoch",
)


def ready_now(alias: str, clock: str) -> str:
    """The WHERE clause (two ``?``: the epoch of now) of a readiness row (alias ``alias``) that is ready now: ready
    apart from time, and its time has come (:func:`time_has_come`)."""
    return f"{alias}.is_ready = 1 AND {time_has_come(alias, clock)}"


def time_has_come(alias: str, clock: str) -> str:
    """The WHERE clause (two ``?``: the epoch of now) of a readiness row (alias ``alias``) whose times do not keep it
    from being ready: neither its own defer time nor its parents' in the future, and any lease of its claim expired
    by the database's ``clock`` (``Tx.clock``)."""
    return (
        f"({alias}.defer_epoch IS NULL OR {alias}.defer_epoch <= ?) "
        f"AND ({alias}.parent_defer_epoch IS NULL OR {alias}.parent_defer_epoch <= ?) "
        f"AND ({alias}.lease_epoch IS NULL OR {alias}.lease_epoch <= {clock})"
    )


# -- the store's rule ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """The store's choice of rule: Beads' by default; ``transitive`` also holds every descendant of a blocked issue
    (Bee's stricter rule before it followed Beads)."""

    transitive: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"version": RULE_VERSION, "transitive": self.transitive}


#: The stored rule's row, for :func:`rule_from`.
RULE_STATEMENT: Final[Statement] = ("SELECT value FROM meta WHERE key = ?", [RULE_KEY])


def _stored_in(rows: Sequence[Row]) -> dict[str, Any] | None:
    if not rows:
        return None
    value = json.loads(rows[0][0])
    return value if isinstance(value, dict) else None


def _stored(tx: Tx) -> dict[str, Any] | None:
    return _stored_in(tx.rows(*RULE_STATEMENT))


def rule_from(rows: Sequence[Row]) -> Rule:
    """The rule this store is kept by, from the rows of :data:`RULE_STATEMENT` (Beads' until someone chose
    otherwise)."""
    stored = _stored_in(rows) or {}
    return Rule(transitive=stored.get("transitive") is True)


def load_rule(tx: Tx) -> Rule:
    """The rule this store is kept by (see :func:`rule_from`)."""
    return rule_from(tx.rows(*RULE_STATEMENT))


def is_current(tx: Tx) -> bool:
    """Whether the kept state was built by this code's rule version."""
    stored = _stored(tx)
    return stored is not None and stored.get("version") == RULE_VERSION


def _save_rule(tx: Tx, rule: Rule) -> None:
    tx.run(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [RULE_KEY, json.dumps(rule.as_dict())],
    )


# -- what an issue says about itself ------------------------------------------------------------------------------


def _set(value: Any) -> bool:
    """A flag is set by JSON ``true`` (Beads' lines) or a nonzero integer (its table dumps)."""
    return value is True or (type(value) is int and value != 0)


def flags_of(extra: Mapping[str, Any]) -> tuple[int, int]:
    """``(is_wisp, is_pinned)`` from the keys of an issue's line the tracker keeps verbatim."""
    return int(any(_set(extra.get(key)) for key in WISP_KEYS)), int(_set(extra.get("pinned")))


def gate_of(metadata: str | None) -> str:
    """The waits-for gate a dependency's stored metadata names: ``any-children``, else ``all-children``.

    Beads writes the metadata as a JSON string holding a JSON object (``{"gate": "any-children"}``); anything it
    cannot read as such means the default gate, as in Beads.
    """
    try:
        value = json.loads(metadata) if metadata else None
        if isinstance(value, str):
            value = json.loads(value) if value.strip() else None
    except (ValueError, RecursionError):
        return "all-children"
    return "any-children" if isinstance(value, dict) and value.get("gate") == "any-children" else "all-children"


def whole_second(epoch: float | None) -> float | None:
    """``epoch`` rounded to the nearest second, half a second up: the ``created_at`` Beads orders by.

    Current Beads keeps ``created_at`` in a ``DATETIME`` column without fractional seconds, and Dolt (as MySQL)
    rounds a time's fraction into it rather than dropping it; its lists then order by that second and, within one
    second, by id. The lists here order by the kept ``created_epoch``, so it is kept in the same whole seconds.
    """
    return None if epoch is None else float(math.floor(epoch + 0.5))


def _own(row: Sequence[Any], wisp: int, pinned: int) -> tuple[Any, ...]:
    """The :data:`_OWN` columns of an issue from its ``(id, status, priority, issue_type, created_epoch,
    defer_epoch, title, external_ref, lease expiry)`` row and its flags (``created_epoch`` in :func:`whole_second`)."""
    issue_id, status, priority, issue_type, created, deferred, title, ref, expiry = row
    lease = expiry if status == "in_progress" else None
    work = not pinned and not wisp and issue_type not in NOT_WORK_TYPES
    eligible = int(work and (status == "open" or lease is not None))
    active = int(not wisp and status not in INACTIVE_STATUSES)
    own = (status, priority, whole_second(created), deferred, eligible, active)
    return (*own, *keys_of(issue_id, title, ref), lease)


_ISSUE_ROW = (
    "SELECT i.id, i.status, i.priority, i.issue_type, i.created_epoch, i.defer_epoch, i.title, i.external_ref, "
    "(SELECT l.expires_epoch FROM claim_leases l WHERE l.issue_id = i.id)"
)


# -- computing the state of some issues (or of all, with ids None) ---------------------------------------------


def _restricted(tx: Tx, sql: str, column: str, ids: Iterable[str] | None, *, tail: str = "") -> list[tuple[Any, ...]]:
    """Rows of ``sql`` (which ends in a WHERE clause) for every issue, or with ``column IN ids`` in batches;
    ``tail`` (a GROUP BY) follows the condition."""
    if ids is None:
        return tx.rows(f"{sql} {tail}")
    rows: list[tuple[Any, ...]] = []
    for batch in in_batches(ids):
        rows += tx.rows(f"{sql} AND {column} IN ({marks(batch)}) {tail}", batch)
    return rows


#: (spawner, active children, closed children) rows, to be restricted to some spawners and grouped by spawner.
_SPAWNER_CHILDREN = (
    "SELECT d.depends_on_id, SUM(c.is_active), "
    "SUM(CASE WHEN c.is_wisp = 0 AND c.status = 'closed' THEN 1 ELSE 0 END) "
    "FROM dependencies d JOIN readiness c ON c.issue_id = d.issue_id "
    "JOIN readiness s ON s.issue_id = d.depends_on_id "
    f"WHERE d.type = '{PARENT_CHILD}' AND s.is_wisp = 0"
)
_BY_SPAWNER = "GROUP BY d.depends_on_id"


def spawner_children(tx: Tx, spawners: set[str]) -> dict[str, tuple[int, int]]:
    """(active children, closed children) of each spawner that is a live issue and not a wisp; only issues that are
    not wisps count as children (Beads keeps a wisp's links with the wisp)."""
    if not spawners:
        return {}
    return children_from(_restricted(tx, _SPAWNER_CHILDREN, "d.depends_on_id", sorted(spawners), tail=_BY_SPAWNER))


def waited_spawners_statement(issue_id: str) -> Statement:
    """:func:`spawner_children` of every spawner issue ``issue_id`` waits for, in one statement (for
    :func:`children_from`)."""
    return (
        f"{_SPAWNER_CHILDREN} AND d.depends_on_id IN "
        f"(SELECT depends_on_id FROM dependencies WHERE issue_id = ? AND type = '{WAITS_FOR}') {_BY_SPAWNER}",
        [issue_id],
    )


def children_from(rows: Sequence[Row]) -> dict[str, tuple[int, int]]:
    """:func:`spawner_children` from rows of the spawner-children query."""
    return {spawner: (int(active or 0), int(closed or 0)) for spawner, active, closed in rows}


def gate_holds(gate: str, children: tuple[int, int] | None) -> bool:
    """Whether a waits-for with ``gate`` waits on a spawner with these (active, closed) children."""
    active, closed = children or (0, 0)
    return active > 0 and (gate == "all-children" or closed == 0)


#: The dependency ``d``'s own issue is active.
_ACTIVE_SOURCE = "EXISTS (SELECT 1 FROM readiness x WHERE x.issue_id = d.issue_id AND x.is_active = 1)"


def blocked_among(tx: Tx, ids: Iterable[str] | None) -> set[str]:
    """The issues among ``ids`` (every issue for None) that are blocked, from the current ``is_active`` values."""
    # The readiness rows as EXISTS, not joins: so the dependencies of ``ids`` are the outer loop whatever the
    # statistics say. (SQLite, whose statistics said the readiness table was empty, chose to walk every active
    # row and probe the dependencies of each: 1.1 s a statement at 40,000 issues, against milliseconds.)
    blocked = {
        row[0]
        for row in _restricted(
            tx,
            f"SELECT DISTINCT d.issue_id FROM dependencies d WHERE d.type IN ({_BLOCKS}) AND {_ACTIVE_SOURCE} "
            "AND EXISTS (SELECT 1 FROM readiness t WHERE t.issue_id = d.depends_on_id AND t.is_active = 1)",
            "d.issue_id",
            ids,
        )
    }
    waits = _restricted(
        tx,
        f"SELECT d.issue_id, d.depends_on_id, d.metadata FROM dependencies d WHERE d.type = '{WAITS_FOR}' "
        f"AND {_ACTIVE_SOURCE}",
        "d.issue_id",
        ids,
    )
    children = spawner_children(tx, {spawner for issue_id, spawner, _ in waits if issue_id not in blocked})
    for issue_id, spawner, metadata in waits:
        if issue_id not in blocked and gate_holds(gate_of(metadata), children.get(spawner)):
            blocked.add(issue_id)
    return blocked


def _children(tx: Tx, parents: Iterable[str]) -> set[str]:
    sql = f"SELECT issue_id FROM dependencies WHERE type = '{PARENT_CHILD}'"
    return {r[0] for r in _restricted(tx, sql, "depends_on_id", parents)}


def _parents(tx: Tx, children: Iterable[str]) -> set[str]:
    sql = f"SELECT depends_on_id FROM dependencies WHERE type = '{PARENT_CHILD}'"
    return {r[0] for r in _restricted(tx, sql, "issue_id", children)}


def _dependents(tx: Tx, targets: Iterable[str], types: str) -> set[str]:
    sql = f"SELECT issue_id FROM dependencies WHERE type IN ({types})"
    return {r[0] for r in _restricted(tx, sql, "depends_on_id", targets)}


def _descendants(tx: Tx, roots: set[str]) -> set[str]:
    """``roots`` and every issue below them through parent-child links (an imported cycle ends the walk)."""
    seen = set(roots)
    frontier = set(roots)
    while frontier:
        frontier = _children(tx, sorted(frontier)) - seen
        seen |= frontier
    return seen


def _spread(starts: Iterable[str], below: Mapping[str, list[str]]) -> set[str]:
    """Every issue below ``starts`` through ``below`` (parent -> children); a cycle ends the walk."""
    reached: set[str] = set()
    queue = deque(starts)
    while queue:
        for child in below.get(queue.popleft(), ()):
            if child not in reached:
                reached.add(child)
                queue.append(child)
    return reached


def held_among(tx: Tx, ids: set[str] | None, rule: Rule) -> set[str]:
    """The issues among ``ids`` (every issue for None) that are held, from the current ``is_blocked`` values (and,
    transitively, from the ``is_held`` values of parents outside ``ids``, which must then hold every descendant of
    each of its issues)."""
    edges = _restricted(
        tx,
        "SELECT d.issue_id, d.depends_on_id, p.is_blocked, p.is_held FROM dependencies d "
        f"JOIN readiness p ON p.issue_id = d.depends_on_id WHERE d.type = '{PARENT_CHILD}'",
        "d.issue_id",
        sorted(ids) if ids is not None else None,
    )
    if not rule.transitive:
        return {child for child, _, blocked, _ in edges if blocked}
    below: dict[str, list[str]] = {}
    starts = set()
    for child, parent, blocked, parent_held in edges:
        inside = ids is None or parent in ids
        if blocked or (not inside and parent_held):
            starts.add(parent)
        below.setdefault(parent, []).append(child)
    return _spread(starts, below)


def _parent_defer(tx: Tx, ids: Iterable[str] | None) -> dict[str, float]:
    """The latest defer time among each issue's parents (live issues that are not wisps, in any status)."""
    latest: dict[str, float] = {}
    for issue_id, epoch in _restricted(
        tx,
        "SELECT d.issue_id, p.defer_epoch FROM dependencies d JOIN readiness p ON p.issue_id = d.depends_on_id "
        f"WHERE d.type = '{PARENT_CHILD}' AND p.is_wisp = 0 AND p.defer_epoch IS NOT NULL",
        "d.issue_id",
        ids,
    ):
        latest[issue_id] = max(float(epoch), latest.get(issue_id, float("-inf")))
    return latest


def _flagged(tx: Tx, column: str, ids: Iterable[str] | None) -> set[str]:
    """The issues among ``ids`` (all for None) whose integer ``column`` is set."""
    return {r[0] for r in _restricted(tx, f"SELECT issue_id FROM readiness WHERE {column} = 1", "issue_id", ids)}


def _store_flag(tx: Tx, column: str, ids: set[str] | None, now_set: set[str]) -> set[str]:
    """Make ``column`` set exactly for ``now_set`` among ``ids`` (all for None); return the issues that changed."""
    was = _flagged(tx, column, sorted(ids) if ids is not None else None)
    changed = was ^ now_set
    set_flag(tx, column, sorted(now_set - was), 1)
    set_flag(tx, column, sorted(was - now_set), 0)
    return changed


def _store_parent_defer(tx: Tx, ids: set[str] | None) -> None:
    latest = _parent_defer(tx, sorted(ids) if ids is not None else None)
    sql = "SELECT issue_id, parent_defer_epoch FROM readiness WHERE parent_defer_epoch IS NOT NULL"
    was = {r[0]: float(r[1]) for r in _restricted(tx, sql, "issue_id", sorted(ids) if ids is not None else None)}
    changed = [(i, latest.get(i)) for i in sorted(set(latest) | set(was)) if latest.get(i) != was.get(i)]
    set_columns(tx, ("parent_defer_epoch",), changed)


def _store_ready(tx: Tx, ids: Iterable[str]) -> None:
    for batch in in_batches(sorted(set(ids))):
        tx.run(f"UPDATE readiness SET is_ready = {READY_EXPR} WHERE issue_id IN ({marks(batch)})", batch)


# -- keeping it ---------------------------------------------------------------------------------------------------


@dataclass
class Touched:
    """What one write changed that the kept state depends on (filled in by :class:`~.ops.Write`)."""

    inserted: set[str] = field(default_factory=set)
    #: Issues whose own columns changed (status, priority, type, defer_until, title, external_ref).
    edited: set[str] = field(default_factory=set)
    #: Issues whose defer_until changed (their children's parent_defer_epoch).
    deferred: set[str] = field(default_factory=set)
    #: Issues whose blocks, conditional-blocks or waits-for dependencies changed.
    blocking: set[str] = field(default_factory=set)
    #: Children whose parent-child dependencies changed, with the parents added or removed.
    parents: dict[str, set[str]] = field(default_factory=dict)

    def link(self, issue_id: str, kind: str, target: str) -> None:
        if kind in BLOCKS or kind == WAITS_FOR:
            self.blocking.add(issue_id)
        elif kind == PARENT_CHILD:
            self.parents.setdefault(issue_id, set()).add(target)

    def __bool__(self) -> bool:
        return bool(self.inserted or self.edited or self.blocking or self.parents)


def _write_own(tx: Tx, ids: set[str]) -> tuple[set[str], set[str]]:
    """Write the own columns of ``ids`` (inserting rows for new issues); return the existing issues whose activity
    changed, and those whose closedness (as a spawner's child) changed."""
    sets = ", ".join(f"{column} = excluded.{column}" for column in _OWN)
    active_flips: set[str] = set()
    closed_flips: set[str] = set()
    for batch in in_batches(sorted(ids)):
        for *row, old_status, wisp, pinned in tx.rows(
            f"{_ISSUE_ROW}, r.status, COALESCE(r.is_wisp, 0), COALESCE(r.is_pinned, 0) FROM issues i "
            f"LEFT JOIN readiness r ON r.issue_id = i.id WHERE i.id IN ({marks(batch)})",
            batch,
        ):
            issue_id, status = row[0], row[1]
            if old_status is not None and not wisp:
                if (old_status in INACTIVE_STATUSES) != (status in INACTIVE_STATUSES):
                    active_flips.add(issue_id)
                if (old_status == "closed") != (status == "closed"):
                    closed_flips.add(issue_id)
            own = _own(row, wisp, pinned)
            # is_ready from the row as the database holds it now (see the module docstring).
            tx.run(
                f"INSERT INTO readiness (issue_id, {', '.join(_OWN)}, is_ready) "
                f"VALUES (?, {', '.join('?' for _ in _OWN)}, ?) ON CONFLICT (issue_id) DO UPDATE SET {sets}, "
                "is_ready = CASE WHEN excluded.is_eligible = 1 AND readiness.is_blocked = 0 "
                "AND readiness.is_held = 0 THEN 1 ELSE 0 END",
                [issue_id, *own, own[4]],
            )
    return active_flips, closed_flips


@dataclass
class Flips:
    """The issues whose blocked and whose held flag a refresh turned."""

    blocked: set[str] = field(default_factory=set)
    held: set[str] = field(default_factory=set)

    def add(self, other: Flips) -> None:
        """Count ``other``'s too (a flag turned twice is back where it was)."""
        self.blocked ^= other.blocked
        self.held ^= other.held


def refresh(tx: Tx, touched: Touched) -> Flips:
    """Bring the kept state of what ``touched`` names, and of everything that depends on it, up to date; return the
    issues whose blocked or held flag it turned (their readiness changed though nothing was written to them)."""
    if not touched:
        return Flips()
    # A new issue has no dependents (its id is one nobody named) and its own links are in blocking and parents.
    active_flips, closed_flips = _write_own(tx, touched.inserted | touched.edited)
    if not (active_flips or closed_flips or touched.deferred or touched.blocking or touched.parents):
        return Flips()
    tx.lock_graph()  # from here on this write reads its neighbours (see the module docstring)
    rule = load_rule(tx)
    # Blocked: the issues whose own blocking links or activity changed, those that block-depend on an issue whose
    # activity changed, and those that wait for the children of a parent whose children changed.
    recheck = touched.blocking | active_flips | _dependents(tx, active_flips, _BLOCKS)
    spawners = _parents(tx, active_flips | closed_flips) | {p for ps in touched.parents.values() for p in ps}
    recheck |= _dependents(tx, spawners, f"'{WAITS_FOR}'")
    blocked_changed = _store_flag(tx, "is_blocked", recheck, blocked_among(tx, sorted(recheck))) if recheck else set()
    # Held: the children of issues whose blockage changed, and children whose parents changed.
    roots = (_children(tx, sorted(blocked_changed)) if blocked_changed else set()) | set(touched.parents)
    scope = _descendants(tx, roots) if rule.transitive else roots
    held_changed = _store_flag(tx, "is_held", scope, held_among(tx, scope, rule)) if scope else set()
    # Parent defer times: the children of re-deferred issues, and children whose parents changed.
    timed = (_children(tx, sorted(touched.deferred)) if touched.deferred else set()) | set(touched.parents)
    if timed:
        _store_parent_defer(tx, timed)
    _store_ready(tx, blocked_changed | held_changed)
    return Flips(blocked_changed, held_changed)


def _own_rows(tx: Tx, where: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """``(issue_id, *_OWN, is_wisp, is_pinned)`` of the issues the condition ``where`` (on ``issues i``) selects."""
    # The keys' names travel as parameters: PostgreSQL's driver reads a % in the statement as a placeholder.
    candidates = " OR ".join("i.extra LIKE ?" for _ in (*WISP_KEYS, "pinned"))
    flags: dict[str, tuple[int, int]] = {}
    for issue_id, extra in tx.rows(
        f"SELECT i.id, i.extra FROM issues i WHERE {where} AND ({candidates})",
        [*params, *(f'%"{key}"%' for key in (*WISP_KEYS, "pinned"))],
    ):
        parsed = json.loads(extra) if extra else {}
        found = flags_of(parsed) if isinstance(parsed, dict) else (0, 0)
        if found != (0, 0):
            flags[issue_id] = found
    rows = []
    for row in tx.rows(f"{_ISSUE_ROW} FROM issues i WHERE {where}", params):
        wisp, pinned = flags.get(row[0], (0, 0))
        rows.append((row[0], *_own(row, wisp, pinned), wisp, pinned))
    return rows


_OWN_AND_FLAGS = (*_OWN, "is_wisp", "is_pinned")


def rebuild(tx: Tx, rule: Rule | None = None) -> None:
    """Compute the whole kept state from the issues and their links (after an import into an empty store, a
    migration or a change of rule), writing only what differs, and record ``rule`` (default: the store's current
    one)."""
    tx.lock_graph()
    rule = rule if rule is not None else load_rule(tx)
    current = {
        row[0]: tuple(row[1:]) for row in tx.rows(f"SELECT issue_id, {', '.join(_OWN_AND_FLAGS)} FROM readiness")
    }
    inserts: list[tuple[Any, ...]] = []
    updates: list[tuple[Any, ...]] = []
    for row in _own_rows(tx, "1 = 1", []):
        if row[0] not in current:
            inserts.append(row)
        elif current[row[0]] != row[1:]:
            updates.append(row)
    tx.load("readiness", ("issue_id", *_OWN_AND_FLAGS), inserts, skip_duplicates=False)
    set_columns(tx, _OWN_AND_FLAGS, updates)
    _store_flag(tx, "is_blocked", None, blocked_among(tx, None))
    _store_flag(tx, "is_held", None, held_among(tx, None, rule))
    _store_parent_defer(tx, None)
    tx.run(f"UPDATE readiness SET is_ready = {READY_EXPR} WHERE is_ready <> {READY_EXPR}")
    _save_rule(tx, rule)


def after_import(tx: Tx, since: int, removed: set[str], removed_parents: set[str]) -> None:
    """Bring the kept state up to date after an import into a store that held issues, at a cost that follows the
    import rather than the store.

    The import wrote the issues at position ``since`` or later (none has a row yet: a replaced issue's went with
    it), and removed the earlier issues ``removed`` (replaced or deleted), which were children of
    ``removed_parents``. Only these and their neighbours can change: issues that block-depend on one of them or
    wait for a spawner whose children changed, the children of each, and the children of issues whose blockage
    changed (under the ``transitive`` rule every issue's hold is recomputed instead: it reaches any depth).
    """
    tx.lock_graph()
    rule = load_rule(tx)
    rows = _own_rows(tx, "i.position >= ?", [since])
    tx.load("readiness", ("issue_id", *_OWN_AND_FLAGS), rows, skip_duplicates=False)
    fresh = {row[0] for row in rows}
    changed = fresh | removed
    spawners = _parents(tx, fresh) | removed_parents | changed
    recheck = fresh | _dependents(tx, changed, _BLOCKS) | _dependents(tx, spawners, f"'{WAITS_FOR}'")
    blocked_changed = _store_flag(tx, "is_blocked", recheck, blocked_among(tx, sorted(recheck)))
    below = _children(tx, changed)
    if rule.transitive:
        held_changed = _store_flag(tx, "is_held", None, held_among(tx, None, rule))
    else:
        scope = fresh | below | _children(tx, blocked_changed)
        held_changed = _store_flag(tx, "is_held", scope, held_among(tx, scope, rule))
    _store_parent_defer(tx, fresh | below)
    _store_ready(tx, fresh | blocked_changed | held_changed)
