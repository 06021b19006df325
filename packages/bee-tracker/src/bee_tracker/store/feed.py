"""The change feed: after each committed write, which issues changed and how; the seam a host listens on.

A host that tells agents about changes (MCP ``subscriptions/listen``, the board's live updates) subscribes to the
store's feed (:meth:`Feed.subscribe`) and gets one :class:`Committed` per write that committed, from every caller
of the store in this process: the MCP tools, the board, the command line. It lists each issue the write changed,
or whose readiness it changed, with what happened to it (:class:`Change`) and whether ``ready`` offers it now. Only
issues are named: a listener maps them to whatever it serves (an issue, the ready queue under a filter, an actor's
claims) and refetches, as level-triggered listening does.

What the feed does not carry, and how a host learns it:

- **Other replicas' writes.** The feed is in process. A host on PostgreSQL with several replicas publishes what its
  listener receives to the others (PostgreSQL ``LISTEN``/``NOTIFY``: :attr:`Committed.replica` says where a write
  came from, so a replica can tell its own writes from the ones it hears about).
- **Time passing.** An issue deferred until a time, or a claim whose lease runs out, becomes ready without anyone
  writing (the database's clock decides, see :mod:`.claimlease`). :meth:`~.sql.SqlStore.next_lease_expiry` tells
  when the next lease runs out, by the database's clock: a host sleeps until then (and asks again after each
  :class:`Committed` whose :attr:`~Committed.leases_changed` is set), then reads that issue and tells its listeners
  that a claim expired and the issue is ready again.

Listeners are called in the writing thread, after the commit, one after another: each must return at once (hand
the batch to a queue or a task) and never write to the store itself. An exception a listener raises is logged and
dropped: the write it reports has committed whatever a listener does. Computing a batch costs one statement per
write, and nothing at all while nobody listens.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from bee_tracker.store.batched import in_batches, marks
from bee_tracker.store.db import Tx
from bee_tracker.store.readiness import Flips, time_has_come

logger = logging.getLogger("bee.tracker.feed")


class Change(StrEnum):
    """What happened to an issue in one write."""

    CREATED = "created"
    #: Its fields or labels changed (anything but the kinds below).
    EDITED = "edited"
    COMMENTED = "commented"
    #: Its own dependencies changed.
    LINKED = "linked"
    #: Someone took its claim (became its assignee).
    CLAIMED = "claimed"
    #: Its claim ended without it being closed (released, handed off, released by an operator, or reassigned).
    RELEASED = "released"
    #: The claim was taken from a holder whose lease had expired (``claim_expired`` when nobody took it).
    RECLAIMED = "reclaimed"
    CLAIM_EXPIRED = "claim_expired"
    #: Its claim's lease was granted, renewed or dropped: the next expiry may have moved.
    LEASE = "lease"
    COMPLETED = "completed"
    REOPENED = "reopened"
    #: ``ready`` offers it now and did not before this write, or the other way round.
    BECAME_READY = "became_ready"
    LEFT_READY = "left_ready"
    #: An issue it depends on (``blocks``, ``conditional-blocks``, ``waits-for``) was closed by this write.
    BLOCKER_CLOSED = "blocker_closed"
    #: One of its children was closed by this write.
    CHILD_CLOSED = "child_closed"


@dataclass(frozen=True)
class IssueChange:
    """One issue a write changed, or whose readiness it changed."""

    issue_id: str
    changes: frozenset[Change]
    #: Whether ``ready`` offers the issue now (as the write committed; its defer and lease times by then).
    ready: bool


@dataclass(frozen=True)
class Committed:
    """One committed write: which tool, for whom, in which replica, at what time, and what it changed."""

    tool: str
    actor: str
    replica: str
    at: str
    issues: tuple[IssueChange, ...]
    #: A lease was granted, renewed or dropped: :meth:`~.sql.SqlStore.next_lease_expiry` may answer otherwise.
    leases_changed: bool


Listener = Callable[[Committed], None]


class Feed:
    """The store's listeners, and the batches it hands them."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every :class:`Committed` from now on; return what stops it."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    @property
    def wanted(self) -> bool:
        """Whether anyone listens (a write computes its batch only then)."""
        return bool(self._listeners)

    def publish(self, committed: Committed) -> None:
        """Hand ``committed`` to every listener; a listener's failure is logged, never raised."""
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(committed)
            except Exception:
                logger.exception("a change-feed listener failed; the write it was told of stands")


# -- what a write changed ----------------------------------------------------------------------------------------

#: Keys of a history event and the change each stands for (fields' ``[old, new]`` are read apart).
_KEYED: Final = {
    "created": Change.CREATED,
    "comment": Change.COMMENTED,
    "linked": Change.LINKED,
    "unlinked": Change.LINKED,
    "reclaimed": Change.RECLAIMED,
    "claim_expired": Change.CLAIM_EXPIRED,
}
_BLOCKING: Final = "'blocks', 'conditional-blocks', 'waits-for'"
#: What a claim, a release or a completion sets along with its status or assignee: part of that change.
_ALONG: Final = frozenset({"started_at", "closed_at", "close_reason", "forced"})


def _status(value: Any, *, moved: bool) -> set[Change]:
    """What a change of status did: closed or reopened the issue, or (unless its claim moved too) edited it."""
    if not isinstance(value, list):
        return {Change.EDITED}
    if value[1] == "closed":
        return {Change.COMPLETED}
    if value[0] == "closed":
        return {Change.REOPENED}
    return set() if moved else {Change.EDITED}


def kinds_of(what: Mapping[str, Any]) -> set[Change]:
    """What one issue's history event says happened to it."""
    moved = "assignee" in what or "reclaimed" in what
    status = _status(what["status"], moved=moved) if "status" in what else set()
    kinds: set[Change] = set(status)
    for key, value in what.items():
        if key == "status" or (key in _ALONG and (moved or status - {Change.EDITED})):
            continue
        if key in _KEYED:
            kinds.add(_KEYED[key])
        elif key == "assignee" and isinstance(value, list):
            kinds.add(Change.CLAIMED if value[1] else Change.RELEASED)
        else:
            kinds.add(Change.EDITED)
    if Change.COMPLETED in kinds:
        kinds.discard(Change.RELEASED)  # completing ends a claim; it is not a release
    return kinds


def _neighbours(tx: Tx, closed: list[str]) -> dict[str, set[Change]]:
    """The dependents and parents of issues this write closed."""
    found: dict[str, set[Change]] = {}
    for batch in in_batches(closed):
        for issue_id, kind in tx.rows(
            f"SELECT issue_id, type FROM dependencies WHERE depends_on_id IN ({marks(batch)}) "
            f"AND type IN ({_BLOCKING}) UNION SELECT depends_on_id, 'parent' FROM dependencies "
            f"WHERE issue_id IN ({marks(batch)}) AND type = 'parent-child'",
            [*batch, *batch],
        ):
            found.setdefault(issue_id, set()).add(Change.CHILD_CLOSED if kind == "parent" else Change.BLOCKER_CLOSED)
    return found


def _states(tx: Tx, issue_ids: Iterable[str], at: float) -> dict[str, tuple[int, int, int, int]]:
    """``(eligible, blocked, held, time has come)`` of each of ``issue_ids`` (``at``: the tracker's time)."""
    found: dict[str, tuple[int, int, int, int]] = {}
    for batch in in_batches(sorted(set(issue_ids))):
        for issue_id, *state in tx.rows(
            f"SELECT r.issue_id, r.is_eligible, r.is_blocked, r.is_held, "
            f"CASE WHEN {time_has_come('r', tx.clock)} THEN 1 ELSE 0 END FROM readiness r "
            f"WHERE r.issue_id IN ({marks(batch)})",
            [at, at, *batch],
        ):
            found[issue_id] = (int(state[0]), int(state[1]), int(state[2]), int(state[3]))
    return found


def collect(
    tx: Tx,
    events: Mapping[str, Mapping[str, Any]],
    before: Mapping[str, bool],
    flips: Flips,
    leased: Iterable[str],
    *,
    at: float,
) -> tuple[IssueChange, ...]:
    """What a write changed, from its history ``events`` (per issue), whether ``ready`` offered the issues it loaded
    before it (``before``; a new issue was not), the blocked and held flags it turned on other issues (``flips``) and
    the issues whose lease it changed (``leased``); read in its transaction once its readiness is up to date
    (``at``: the tracker's time)."""
    kinds = {issue_id: kinds_of(what) for issue_id, what in events.items()}
    for issue_id in leased:
        kinds.setdefault(issue_id, set()).add(Change.LEASE)
    closed = [issue_id for issue_id, found in kinds.items() if Change.COMPLETED in found]
    for issue_id, found in _neighbours(tx, closed).items():
        kinds.setdefault(issue_id, set()).update(found)
    for issue_id in flips.blocked | flips.held | before.keys():
        kinds.setdefault(issue_id, set())
    states = _states(tx, kinds, at)
    changed = []
    for issue_id in sorted(kinds):
        eligible, blocked, held, timely = states.get(issue_id, (0, 0, 0, 0))
        now = bool(eligible and not blocked and not held and timely)
        if issue_id in before:
            was = before[issue_id]
        elif Change.CREATED in kinds[issue_id]:
            was = False
        else:  # a neighbour: only its flags turned (its own state and times are as they were)
            old_blocked, old_held = blocked ^ (issue_id in flips.blocked), held ^ (issue_id in flips.held)
            was = bool(eligible and not old_blocked and not old_held and timely)
        if now != was:
            kinds[issue_id].add(Change.BECAME_READY if now else Change.LEFT_READY)
        if kinds[issue_id]:
            changed.append(IssueChange(issue_id, frozenset(kinds[issue_id]), now))
    return tuple(changed)
