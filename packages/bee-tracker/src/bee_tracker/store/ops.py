"""The unit of work a tool function receives: one open transaction, and for a write who acts and what changed.

A tracker tool is its catalog entry plus one function in :mod:`bee_tracker.handlers`, taking a :class:`Read` or a
:class:`Write` and its arguments. The store (:class:`~bee_tracker.store.sql.SqlStore`) opens the transaction, runs
the function and finishes the write; the tool function only checks and changes issues through these methods, so
revisions, history events and size caps are kept the same way by every tool.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict

from bee_contracts import BeeError, ErrorCode, invalid
from bee_tracker.model import LABELS_MAX, epoch
from bee_tracker.store import bounds, claimlease, feed, kept, readiness, reads
from bee_tracker.store.db import Tx
from bee_tracker.store.records import (
    IssueRow,
    beads_record,
    labels_of,
    leased,
    leased_statement,
    load_issue,
    ready_of,
)

#: Longest text an event keeps of a changed value (the history is a summary, the issue has the whole text).
_EVENT_TEXT_CHARS = 80
#: Changes that may happen several times in one write, kept as lists in the event.
_LISTED = frozenset({"linked", "unlinked", "comment"})
#: Most items an event lists of a changed list (labels); the rest are counted.
_EVENT_LIST_ITEMS = 10
#: Columns an issue's readiness row depends on or copies (bee_tracker.store.readiness).
_KEPT = frozenset({"status", "priority", "issue_type", "defer_until", "title", "external_ref"})


class IssueState(TypedDict):
    """What every write answers about the issue it wrote: its status, holder and revisions after the write."""

    id: str
    status: str
    assignee: NotRequired[str | None]
    state_revision: int
    activity_revision: int
    last_activity_at: str
    replayed: NotRequired[bool]


def _brief(value: Any) -> Any:
    """``value`` shortened for the history: long text cut, long lists cut and counted."""
    if isinstance(value, str) and len(value) > _EVENT_TEXT_CHARS:
        return value[: _EVENT_TEXT_CHARS - 1] + "…"
    if isinstance(value, list):
        shown = [_brief(item) for item in value[:_EVENT_LIST_ITEMS]]
        if len(value) > _EVENT_LIST_ITEMS:
            shown.append(f"… and {len(value) - _EVENT_LIST_ITEMS} more")
        return shown
    return value


class Read:
    """A read-only view of the store for one tool call."""

    def __init__(self, tx: Tx, *, now: str) -> None:
        self.tx = tx
        #: The one timestamp of this call.
        self.now = now

    def issue(self, issue_id: str) -> IssueRow:
        """The live issue ``issue_id``.

        Raises:
            BeeError: ``not_found``, saying when and by whom the issue was deleted if it is a tombstone.
        """
        issue = load_issue(self.tx, issue_id)
        if issue is None:
            raise kept.missing(self.tx, issue_id)
        return issue

    def check_known(self, *, status: str | None = None, issue_type: str | None = None) -> None:
        """Statuses and types must be built in or registered on this tracker.

        Raises:
            BeeError: ``invalid_argument`` naming the allowed values.
        """
        if status is not None and status not in (allowed := reads.statuses(self.tx)):
            raise invalid(f"status {status!r} is not known here; use one of {', '.join(allowed)}", argument="status")
        if issue_type is not None and issue_type not in (allowed := reads.types(self.tx)):
            raise invalid(
                f"issue_type {issue_type!r} is not known here; use one of {', '.join(allowed)}", argument="issue_type"
            )


class Write(Read):
    """One write transaction on behalf of ``actor``, recording what the tool changed on which issue."""

    def __init__(
        self,
        tx: Tx,
        *,
        tool: str,
        actor: str,
        now: str,
        prefix: str,
        claim_ttl: int | None = None,
        replica: str | None = None,
        listened: bool = False,
    ) -> None:
        super().__init__(tx, now=now)
        self.tool = tool
        self.actor = actor
        #: The id prefix for new issues.
        self.prefix = prefix
        #: The lease a claim gets when it asks for none (the tracker's ``--claim-ttl``); None: no lease.
        self.claim_ttl = claim_ttl
        #: Which tracker process writes (recorded with every event, and with the leases it grants).
        self.replica = replica
        self._clock: float | None = None  # the database's clock, read once per write (see clock())
        # For the change feed (bee_tracker.store.feed), when someone listens: whether ready offered each loaded issue
        # before this write, the readiness flags it turned on others, the leases it changed; and its batch.
        self._feed = listened
        self._ready_before: dict[str, bool] = {}
        self._flips = readiness.Flips()
        self._leased: set[str] = set()
        #: What this write changed, for the change feed (filled in by finish() while someone listens).
        self.committed: tuple[feed.IssueChange, ...] = ()
        self._changes: dict[str, dict[str, Any]] = {}
        self._bumped: dict[str, bool] = {}  # issue id -> whether its state_revision was bumped in this write
        self._grown: set[str] = set()  # issues whose own content changed, to check against the cap at the end
        #: What this write changed that readiness and search keys depend on, brought up to date by finish().
        self.touched = readiness.Touched()

    def issue(self, issue_id: str, *, fence: bool = True) -> IssueRow:
        """Lock and load the live issue ``issue_id`` with its claim's lease: checks made on it hold until this write
        commits.

        With ``fence`` (every tool but claim, which settles claims itself), this write is the actor's word on the
        issue: a lease the actor holds is renewed, and an actor whose claim on it expired is refused.

        Raises:
            BeeError: ``not_found`` (a deleted issue says so); ``conflict`` when the actor's claim on the issue
                expired (naming whoever holds it now).
        """
        self.tx.lock_issue(issue_id)
        at = epoch(self.now)
        ready = (readiness.ready_now("r", self.tx.clock), at) if self._feed and at is not None else None
        found = self.tx.row(*leased_statement(issue_id, self.tx.clock, ready=ready))
        if found is None:
            raise kept.missing(self.tx, issue_id)
        issue, clock = leased(found)
        if self._feed and self._untouched(issue_id):
            self._ready_before[issue_id] = ready_of(found)
        if self._clock is None:
            self._clock = clock
        if fence:
            self._fence(issue)
        return issue

    def _untouched(self, issue_id: str) -> bool:
        """Whether nothing of this write has touched ``issue_id`` yet (so what is read of it now is how it was)."""
        seen = (self._ready_before, self._changes, self.touched.inserted, self._flips.blocked, self._flips.held)
        return not any(issue_id in part for part in seen)

    def clock(self) -> float:
        """The database's clock for this write, in seconds since the epoch: read once, so that every decision of
        the write about leases is made at one moment."""
        if self._clock is None:
            self._clock = claimlease.now_of(self.tx)
        return self._clock

    def _fence(self, issue: IssueRow) -> None:
        """Renew the actor's live lease on ``issue``; refuse the actor whose claim on it expired.

        Raises:
            BeeError: ``conflict`` (see :func:`~.claimlease.expired_claim`).
        """
        lease = issue.lease
        if lease is None:
            return
        if lease.holder == self.actor:
            if issue.lease_expired:
                raise claimlease.expired_claim(issue.id, self.actor, lease)
            issue.lease = claimlease.renew(self.tx, issue.id, lease, now=self.clock(), node=self.replica)
            self.leased(issue.id)
        elif lease.lost_by == self.actor and not issue.lease_expired:
            raise claimlease.expired_claim(issue.id, self.actor, lease)

    def leased(self, issue_id: str) -> None:
        """The lease of ``issue_id`` was granted, renewed or dropped in this write: its readiness row copies the
        expiry, and its line (which carries the lease) is rebuilt on export rather than written back as imported."""
        self.touched.edited.add(issue_id)
        self._leased.add(issue_id)
        self.tx.run("UPDATE issues SET raw_revision = NULL WHERE id = ? AND raw_line IS NOT NULL", [issue_id])

    def require(self, issue_id: str, *, role: str) -> None:
        """Check that ``issue_id`` is a live issue (a link target, a prerequisite), without locking it.

        Raises:
            BeeError: ``not_found`` naming the ``role`` (a deleted issue says so).
        """
        if self.tx.row("SELECT 1 FROM issues WHERE id = ?", [issue_id]) is None:
            raise kept.missing(self.tx, issue_id, role=role)

    def compare(self, issue: IssueRow, expected: int | None) -> None:
        """Compare-and-swap on ``state_revision`` when the caller gave ``expected_revision``.

        Raises:
            BeeError: ``conflict`` when the issue changed since ``expected``; details carry the current revision.
        """
        if expected is not None and expected != issue.state_revision:
            raise BeeError(
                ErrorCode.CONFLICT,
                f"issue {issue.id} is at state_revision {issue.state_revision}, not {expected}: it changed since you "
                "read it; get it again and decide whether your change still applies",
                details={"id": issue.id, "expected_revision": expected, "state_revision": issue.state_revision},
            )

    # -- changes ----------------------------------------------------------------------------------------------

    def record(self, issue_id: str, *, state: bool, **what: Any) -> None:
        """Note what this write changed on ``issue_id`` for its history, and bump its revisions once per write.

        Every write is activity (``activity_revision``, ``last_activity_at``); a change to the issue itself is also
        state (``state_revision``, ``updated_at``), which is what ``expected_revision`` compares.
        """
        changes = self._changes.setdefault(issue_id, {})
        for key, value in what.items():
            if key in _LISTED:
                changes.setdefault(key, []).append(value)  # several links in one write are all kept
            else:
                changes[key] = value
        if state:
            self._grown.add(issue_id)
        if issue_id not in self._bumped:
            self._bumped[issue_id] = state
            if state:
                self.tx.run(
                    "UPDATE issues SET state_revision = state_revision + 1, activity_revision = activity_revision "
                    "+ 1, last_activity_at = ?, updated_at = ? WHERE id = ?",
                    [self.now, self.now, issue_id],
                )
            else:
                self.tx.run(
                    "UPDATE issues SET activity_revision = activity_revision + 1, last_activity_at = ? WHERE id = ?",
                    [self.now, issue_id],
                )
        elif state and not self._bumped[issue_id]:
            self._bumped[issue_id] = True
            self.tx.run(
                "UPDATE issues SET state_revision = state_revision + 1, updated_at = ? WHERE id = ?",
                [self.now, issue_id],
            )

    def insert(self, values: dict[str, Any]) -> IssueRow:
        """Insert a new issue with these column values (``id`` among them), lock it and return it.

        Its revisions start at 1: what else this write does to it (labels, links) is part of its creation.
        """
        columns = list(values)
        self.tx.run(
            f"INSERT INTO issues ({', '.join(columns)}, created_epoch, defer_epoch, last_activity_at) "
            f"VALUES ({', '.join('?' for _ in columns)}, ?, ?, ?)",
            [*values.values(), epoch(values.get("created_at")), epoch(values.get("defer_until")), self.now],
        )
        issue_id = str(values["id"])
        self.touched.inserted.add(issue_id)
        self._changes[issue_id] = {"created": _brief(values.get("title"))}
        self._bumped[issue_id] = True
        self._grown.add(issue_id)
        return self.issue(issue_id)

    def set(self, issue: IssueRow, *, kept: dict[str, Any] | None = None, **values: Any) -> bool:
        """Assign columns of ``issue`` and, in the same statement, ``kept`` keys of its line that the tracker keeps
        verbatim (``started_at``), as one state change; return whether any value actually changed."""
        changed = {column: value for column, value in values.items() if issue.fields.get(column) != value}
        extra_changed = {key: value for key, value in (kept or {}).items() if issue.extra.get(key) != value}
        if not changed and not extra_changed:
            return False
        columns = dict(changed)
        if extra_changed:
            columns["extra"] = json.dumps({**issue.extra, **extra_changed}, ensure_ascii=False)
        if "defer_until" in columns:
            columns["defer_epoch"] = epoch(columns["defer_until"])
            self.touched.deferred.add(issue.id)
        if _KEPT.intersection(columns):
            self.touched.edited.add(issue.id)
        sets = ", ".join(f"{column} = ?" for column in columns)
        self.tx.run(f"UPDATE issues SET {sets} WHERE id = ?", [*columns.values(), issue.id])
        before = {**{key: issue.extra.get(key) for key in extra_changed}, **issue.fields}
        self.record(
            issue.id,
            state=True,
            **{key: [_brief(before.get(key)), _brief(value)] for key, value in {**changed, **extra_changed}.items()},
        )
        issue.fields.update(changed)
        issue.extra.update(extra_changed)
        return True

    def set_labels(self, issue: IssueRow, labels: Sequence[str]) -> bool:
        """Replace the labels of ``issue`` (a state change); return whether they changed.

        Raises:
            BeeError: ``invalid_argument`` when the issue would carry more than :data:`~bee_tracker.model.LABELS_MAX`.
        """
        before = labels_of(self.tx, issue.id)
        after = list(dict.fromkeys(labels))
        if after == before:
            return False
        if len(after) > LABELS_MAX:
            raise invalid(
                f"this would give issue {issue.id} {len(after)} labels; an issue may carry at most {LABELS_MAX} "
                "(remove some first, or put the list in its description)",
                id=issue.id,
                labels=len(after),
                limit=LABELS_MAX,
            )
        self.tx.run("DELETE FROM labels WHERE issue_id = ?", [issue.id])
        for position, label in enumerate(after):
            self.tx.run("INSERT INTO labels (issue_id, label, position) VALUES (?, ?, ?)", [issue.id, label, position])
        added = [label for label in after if label not in before]
        removed = [label for label in before if label not in after]
        self.record(issue.id, state=True, labels={"added": _brief(added), "removed": _brief(removed)})
        return True

    def comment(self, issue: IssueRow, text: str) -> dict[str, Any]:
        """Append a comment by the actor (activity, not state) and return it as ``get`` shows it.

        Raises:
            BeeError: ``invalid_argument`` when the comment alone would pass its size cap.
        """
        comment_id = self.tx.next_comment_id()
        comment = {"id": comment_id, "issue_id": issue.id, "author": self.actor, "text": text, "created_at": self.now}
        bounds.refuse_large_comment(issue.id, comment)
        self.tx.run(
            "INSERT INTO comments (issue_id, comment_id, int_id, author, text, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [issue.id, str(comment_id), comment_id, self.actor, text, self.now],
        )
        self.record(issue.id, state=False, comment=comment_id)
        return comment

    def depend(self, issue: IssueRow, target: str, kind: str) -> bool:
        """Add the dependency ``issue -[kind]-> target`` unless it exists; return whether it was added."""
        if self.tx.row(
            "SELECT 1 FROM dependencies WHERE issue_id = ? AND depends_on_id = ? AND type = ?",
            [issue.id, target, kind],
        ):
            return False
        position_row = self.tx.row(
            "SELECT COALESCE(MAX(position), -1) + 1 FROM dependencies WHERE issue_id = ?", [issue.id]
        )
        self.tx.run(
            "INSERT INTO dependencies (issue_id, depends_on_id, type, created_at, created_by, position) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [issue.id, target, kind, self.now, self.actor, position_row[0] if position_row else 0],
        )
        self.record(issue.id, state=True, linked={"type": kind, "target": target})
        self._linked(issue.id, kind, target)
        return True

    def undepend(self, issue: IssueRow, target: str, kind: str) -> bool:
        """Remove the dependency ``issue -[kind]-> target``; return whether it existed."""
        removed = self.tx.run(
            "DELETE FROM dependencies WHERE issue_id = ? AND depends_on_id = ? AND type = ?", [issue.id, target, kind]
        )
        if removed:
            self.record(issue.id, state=True, unlinked={"type": kind, "target": target})
            self._linked(issue.id, kind, target)
        return bool(removed)

    def _linked(self, issue_id: str, kind: str, target: str) -> None:
        """A dependency was added or removed: readiness may change, and so may the target's ``dependent_count``.

        An imported line that carries the count is written back verbatim only while it is true, so a target whose
        count changed is rebuilt on export (its revisions stay: nothing about the issue itself changed)."""
        self.touched.link(issue_id, kind, target)
        if kind == "blocks":
            self.tx.run(
                "UPDATE issues SET raw_revision = NULL WHERE id = ? AND raw_line IS NOT NULL AND extra LIKE ?",
                [target, '%"dependent_count"%'],
            )

    # -- answers ----------------------------------------------------------------------------------------------

    def state(self, issue_id: str) -> IssueState:
        """The issue's status, holder and revisions as they are now, in this write (what every write echoes)."""
        found = self.tx.row(
            "SELECT id, status, assignee, state_revision, activity_revision, last_activity_at FROM issues WHERE id = ?",
            [issue_id],
        )
        assert found is not None, "the issue was written in this very transaction"
        return {
            "id": found[0],
            "status": found[1],
            "assignee": found[2],
            "state_revision": found[3],
            "activity_revision": found[4],
            "last_activity_at": found[5],
        }

    def settle(self) -> None:
        """Bring the kept readiness up to date with what this write changed so far, so that a later step of the same
        write (claiming the next ready issue after completing one) reads it as it now stands."""
        self._end_claims()
        self._flips.add(readiness.refresh(self.tx, self.touched))
        self.touched = readiness.Touched()

    def finish(self) -> None:
        """Bring readiness and search keys up to date with what this write changed, check every grown issue
        against its cap and write one history event per issue this write changed.

        Raises:
            BeeError: ``invalid_argument`` when an issue would pass its size cap (the transaction rolls back).
        """
        self._end_claims()
        self._flips.add(readiness.refresh(self.tx, self.touched))
        for issue_id in self._grown:
            issue = load_issue(self.tx, issue_id)
            if issue is not None:
                bounds.refuse_large_issue(issue_id, beads_record(self.tx, issue, comments_last=0))
        for issue_id, what in self._changes.items():
            self.tx.run(
                "INSERT INTO events (issue_id, at, actor, tool, changes, replica) VALUES (?, ?, ?, ?, ?, ?)",
                [issue_id, self.now, self.actor, self.tool, json.dumps(what, ensure_ascii=False), self.replica],
            )
        if self._feed:
            at = epoch(self.now)
            assert at is not None, "the tracker's own clock is always a valid time"
            self.committed = feed.collect(self.tx, self._changes, self._ready_before, self._flips, self._leased, at=at)

    @property
    def leases_changed(self) -> bool:
        """Whether this write granted, renewed or dropped a lease (the next expiry may have moved)."""
        return bool(self._leased)

    def _end_claims(self) -> None:
        """Drop the leases of claims this write ended or moved (:func:`~.claimlease.reconcile`); an expired one
        is recorded in its issue's history: who lost it, and when it expired."""
        moved = [issue_id for issue_id, what in self._changes.items() if "assignee" in what or "status" in what]
        if not moved:
            return
        for issue_id, lease in claimlease.reconcile(self.tx, moved):
            self.leased(issue_id)
            if lease.expired(self.clock()):
                self.record(issue_id, state=True, claim_expired={"holder": lease.holder, "at": lease.expires_at})
