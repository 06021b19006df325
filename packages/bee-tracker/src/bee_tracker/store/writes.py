"""Write operations, each run inside one transaction the caller opened (see :class:`~.sql.SqlStore`).

Every write takes the issue's row lock first, checks, then changes: two claimers of one task cannot both win,
and a compound operation (release with a reason, handoff with release, complete with evidence) lands whole or
not at all.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from bee_tracker.model import BLOCKING_TYPES, PARENT_CHILD, epoch, now
from bee_tracker.store import reads
from bee_tracker.store.db import Tx
from bee_tracker.store.errors import Blocked, Conflict, Forbidden, Invalid, NotFound
from bee_tracker.store.records import IssueRow, labels_of, load_issue

_ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


def require(tx: Tx, issue_id: str) -> IssueRow:
    """Lock and load an issue.

    Raises:
        NotFound: no issue has this id.
    """
    issue = load_issue(tx, issue_id, for_update=True)
    if issue is None:
        raise NotFound(f"no issue {issue_id!r}; search for it by text or list ready work", details={"id": issue_id})
    return issue


def check_revision(issue: IssueRow, expected: int | None) -> None:
    """Compare-and-swap on ``state_revision``.

    Raises:
        Conflict: the issue changed since ``expected``; details carry the current revision.
    """
    if expected is not None and expected != issue.state_revision:
        raise Conflict(
            f"issue {issue.id} is at state_revision {issue.state_revision}, not {expected}: it changed since you "
            "read it; get it again and decide whether your change still applies",
            details={"id": issue.id, "expected_revision": expected, "state_revision": issue.state_revision},
        )


def touch(tx: Tx, issue_id: str, *, state: bool, at: str | None = None) -> None:
    """Bump the revisions: every write is activity; changes to the issue itself are also state."""
    stamp = at or now()
    if state:
        tx.run(
            "UPDATE issues SET state_revision = state_revision + 1, activity_revision = activity_revision + 1, "
            "last_activity_at = ?, updated_at = ? WHERE id = ?",
            [stamp, stamp, issue_id],
        )
    else:
        tx.run(
            "UPDATE issues SET activity_revision = activity_revision + 1, last_activity_at = ? WHERE id = ?",
            [stamp, issue_id],
        )


def new_id(tx: Tx, prefix: str) -> str:
    """A fresh ``prefix-hash`` id: random base36, lengthened while it collides."""
    for length in (4, 5, 6, 7, 8, 10, 12):
        candidate = f"{prefix}-" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(length))
        if tx.row("SELECT 1 FROM issues WHERE id = ?", [candidate]) is None:
            return candidate
    raise Conflict("could not find a free issue id; retry")  # 36^12 ids: not reached in practice


def child_id(tx: Tx, parent_id: str) -> str:
    """The next ``parent.N`` id."""
    highest = 0
    stem = parent_id + "."
    for (existing,) in tx.rows("SELECT id FROM issues WHERE substr(id, 1, ?) = ?", [len(stem), stem]):
        suffix = existing[len(parent_id) + 1 :]
        if suffix.isdigit():
            highest = max(highest, int(suffix))
    return f"{parent_id}.{highest + 1}"


def add_comment(tx: Tx, issue_id: str, author: str, text: str, *, at: str | None = None) -> dict[str, Any]:
    comment_id = tx.next_comment_id()
    stamp = at or now()
    tx.run(
        "INSERT INTO comments (issue_id, comment_id, int_id, author, text, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        [issue_id, str(comment_id), comment_id, author, text, stamp],
    )
    return {"id": comment_id, "issue_id": issue_id, "author": author, "text": text, "created_at": stamp}


def insert_dependency(tx: Tx, issue_id: str, target: str, kind: str, actor: str, *, at: str | None = None) -> bool:
    """Add a dependency unless it exists; return whether it was added."""
    if tx.row(
        "SELECT 1 FROM dependencies WHERE issue_id = ? AND depends_on_id = ? AND type = ?", [issue_id, target, kind]
    ):
        return False
    position_row = tx.row("SELECT COALESCE(MAX(position), -1) + 1 FROM dependencies WHERE issue_id = ?", [issue_id])
    tx.run(
        "INSERT INTO dependencies (issue_id, depends_on_id, type, created_at, created_by, position) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [issue_id, target, kind, at or now(), actor, position_row[0] if position_row else 0],
    )
    return True


def would_cycle(tx: Tx, issue_id: str, target: str, kinds: Sequence[str]) -> list[str] | None:
    """The path target -> ... -> issue_id through ``kinds`` dependencies, if adding issue_id -> target closes one."""
    marks = ", ".join("?" for _ in kinds)
    previous: dict[str, str] = {}
    frontier = [target]
    seen = {target}
    while frontier:
        current = frontier.pop()
        for (nxt,) in tx.rows(
            f"SELECT depends_on_id FROM dependencies WHERE issue_id = ? AND type IN ({marks})", [current, *kinds]
        ):
            if nxt == issue_id:
                back = [current]
                while back[-1] != target:
                    back.append(previous[back[-1]])
                return [issue_id, *reversed(back), issue_id]
            if nxt not in seen:
                seen.add(nxt)
                previous[nxt] = current
                frontier.append(nxt)
    return None


def set_labels(tx: Tx, issue_id: str, labels: Sequence[str]) -> None:
    tx.run("DELETE FROM labels WHERE issue_id = ?", [issue_id])
    for position, label in enumerate(dict.fromkeys(labels)):
        tx.run("INSERT INTO labels (issue_id, label, position) VALUES (?, ?, ?)", [issue_id, label, position])


def check_vocabulary(tx: Tx, fields: Mapping[str, Any]) -> None:
    """Statuses and types must be built in or registered.

    Raises:
        Invalid: naming the allowed values.
    """
    if "status" in fields and fields["status"] not in (allowed := reads.statuses(tx)):
        raise Invalid(f"status {fields['status']!r} is not known here; use one of {', '.join(allowed)}")
    if "issue_type" in fields and fields["issue_type"] not in (allowed := reads.types(tx)):
        raise Invalid(f"issue_type {fields['issue_type']!r} is not known here; use one of {', '.join(allowed)}")


def create(
    tx: Tx,
    actor: str,
    prefix: str,
    fields: Mapping[str, Any],
    *,
    labels: Sequence[str],
    parent: str | None,
    prerequisites: Sequence[str],
) -> str:
    """Insert a new open issue (with its parent link, prerequisites and labels); return its id.

    Raises:
        NotFound: the parent or a prerequisite does not exist.
        Invalid: an unknown status or type.
    """
    check_vocabulary(tx, fields)
    if parent is not None:
        require(tx, parent)
    for prerequisite in prerequisites:
        if tx.row("SELECT 1 FROM issues WHERE id = ?", [prerequisite]) is None:
            raise NotFound(f"prerequisite {prerequisite!r} does not exist", details={"id": prerequisite})
    issue_id = child_id(tx, parent) if parent is not None else new_id(tx, prefix)
    stamp = now()
    values: dict[str, Any] = {
        "status": "open",
        "priority": 2,
        "issue_type": "task",
        **fields,
        "id": issue_id,
        "owner": actor,
        "created_at": stamp,
        "created_by": actor,
        "updated_at": stamp,
    }
    columns = list(values)
    tx.run(
        f"INSERT INTO issues ({', '.join(columns)}, created_epoch, defer_epoch, last_activity_at) "
        f"VALUES ({', '.join('?' for _ in columns)}, ?, ?, ?)",
        [*values.values(), epoch(stamp), epoch(values.get("defer_until")), stamp],
    )
    set_labels(tx, issue_id, labels)
    if parent is not None:
        insert_dependency(tx, issue_id, parent, PARENT_CHILD, actor, at=stamp)
    for prerequisite in prerequisites:
        insert_dependency(tx, issue_id, prerequisite, "blocks", actor, at=stamp)
    return issue_id


def update(
    tx: Tx,
    actor: str,
    issue_id: str,
    changes: Mapping[str, Any],
    *,
    labels: Sequence[str] | None,
    add_labels: Sequence[str],
    remove_labels: Sequence[str],
    expected_revision: int | None,
) -> None:
    """Change fields and labels (compare-and-swap when ``expected_revision`` is given)."""
    issue = require(tx, issue_id)
    check_revision(issue, expected_revision)
    check_vocabulary(tx, changes)
    assignments = dict(changes)
    if "status" in assignments:
        if assignments["status"] == "closed" and issue.fields["status"] != "closed":
            raise Invalid("close issues with the complete tool, which checks blockers, children and gates")
        if issue.fields["status"] == "closed" and assignments["status"] != "closed":
            assignments.update(closed_at=None, close_reason=None)
    if "defer_until" in assignments:
        assignments["defer_epoch"] = epoch(assignments["defer_until"])
    if assignments:
        sets = ", ".join(f"{column} = ?" for column in assignments)
        tx.run(f"UPDATE issues SET {sets} WHERE id = ?", [*assignments.values(), issue_id])
    if labels is not None or add_labels or remove_labels:
        current = labels_of(tx, issue_id) if labels is None else list(labels)
        current = [label for label in [*current, *add_labels] if label not in set(remove_labels)]
        set_labels(tx, issue_id, current)
    touch(tx, issue_id, state=True)


def claim(tx: Tx, actor: str, issue_id: str) -> bool:
    """Make ``actor`` the assignee and the issue in progress; return False when it already was (idempotent).

    Raises:
        Conflict: someone else holds the claim, or the issue is closed.
    """
    issue = require(tx, issue_id)
    holder = issue.fields["assignee"]
    if holder == actor and issue.fields["status"] == "in_progress":
        return False
    if holder not in (None, "", actor):
        raise Conflict(
            f"issue {issue_id} is claimed by {holder}; claims never expire, so ask them to release or hand it off",
            details={"id": issue_id, "assignee": holder},
        )
    if issue.fields["status"] == "closed":
        raise Conflict(f"issue {issue_id} is closed; reopen it with update before claiming", details={"id": issue_id})
    tx.run("UPDATE issues SET assignee = ?, status = 'in_progress' WHERE id = ?", [actor, issue_id])
    touch(tx, issue_id, state=True)
    return True


def require_owner(issue: IssueRow, actor: str, doing: str) -> None:
    """Raises: Forbidden: ``actor`` does not hold the claim."""
    holder = issue.fields["assignee"]
    if holder != actor:
        who = f"is claimed by {holder}" if holder else "is not claimed"
        raise Forbidden(
            f"cannot {doing} issue {issue.id}: it {who}, and only the holder of a claim may {doing} it",
            details={"id": issue.id, "assignee": holder},
        )


def release(tx: Tx, actor: str, issue_id: str, reason: str | None, expected_revision: int | None) -> None:
    """Give up a claim: the reason (if any) becomes a comment, the assignee is cleared, the issue reopens."""
    issue = require(tx, issue_id)
    check_revision(issue, expected_revision)
    require_owner(issue, actor, "release")
    if reason:
        add_comment(tx, issue_id, actor, f"Released: {reason}")
    tx.run("UPDATE issues SET assignee = NULL, status = 'open' WHERE id = ?", [issue_id])
    touch(tx, issue_id, state=True)


def add_note(tx: Tx, actor: str, issue_id: str, text: str) -> dict[str, Any]:
    """Append a comment server-side: concurrent notes never overwrite one another."""
    require(tx, issue_id)
    comment = add_comment(tx, issue_id, actor, text)
    touch(tx, issue_id, state=False, at=comment["created_at"])
    return comment


def link(tx: Tx, actor: str, issue_id: str, target: str, kind: str, *, remove: bool) -> bool:
    """Add or remove the dependency ``issue_id`` -> ``target`` of ``kind``; return whether anything changed.

    Raises:
        Invalid: a self-dependency or a cycle of blocking (or parent-child) dependencies.
        NotFound: either issue is missing (adding), or the dependency is (removing).
    """
    if issue_id == target:
        raise Invalid(f"an issue cannot depend on itself ({issue_id}); link two different issues")
    if kind in BLOCKING_TYPES or kind == PARENT_CHILD:
        tx.lock_graph()
    require(tx, issue_id)
    if remove:
        removed = tx.run(
            "DELETE FROM dependencies WHERE issue_id = ? AND depends_on_id = ? AND type = ?", [issue_id, target, kind]
        )
        if not removed:
            raise NotFound(
                f"{issue_id} has no {kind} dependency on {target}", details={"id": issue_id, "target": target}
            )
        touch(tx, issue_id, state=True)
        return True
    if tx.row("SELECT 1 FROM issues WHERE id = ?", [target]) is None:
        raise NotFound(f"no issue {target!r} to link to", details={"id": target})
    family = BLOCKING_TYPES if kind in BLOCKING_TYPES else (PARENT_CHILD,) if kind == PARENT_CHILD else ()
    if family:
        cycle = would_cycle(tx, issue_id, target, family)
        if cycle:
            raise Invalid(
                f"{issue_id} {kind} {target} would close a dependency cycle ({' -> '.join(cycle)}); "
                "remove one of those links first",
                details={"cycle": cycle},
            )
    added = insert_dependency(tx, issue_id, target, kind, actor)
    if added:
        touch(tx, issue_id, state=True)
    return added


def complete(
    tx: Tx, actor: str, issue_id: str, *, summary: str | None, evidence: str | None, expected_revision: int | None
) -> None:
    """Close the issue with its summary and evidence, unless it is blocked, has open children or an open gate.

    Raises:
        Blocked: with the blockers, children and gates in details.
        Forbidden: someone else holds the claim.
    """
    issue = require(tx, issue_id)
    check_revision(issue, expected_revision)
    if issue.fields["status"] == "closed":
        raise Conflict(f"issue {issue_id} is already closed", details={"id": issue_id})
    if issue.fields["assignee"] not in (None, "", actor):
        require_owner(issue, actor, "complete")
    blockers = reads.open_blockers(tx, issue_id)
    children = reads.open_children(tx, issue_id)
    gates = reads.open_gates(tx, issue_id)
    if blockers or children or gates:
        reasons = []
        if blockers:
            reasons.append(f"blocked by {', '.join(blockers)}")
        if children:
            reasons.append(f"open children {', '.join(children)}")
        if gates:
            reasons.append(f"open gates {', '.join(gates)}")
        raise Blocked(
            f"cannot complete {issue_id}: {'; '.join(reasons)}; finish or unlink those first",
            details={"id": issue_id, "blockers": blockers, "children": children, "gates": gates},
        )
    stamp = now()
    if evidence:
        add_comment(tx, issue_id, actor, f"Evidence: {evidence}", at=stamp)
    tx.run(
        "UPDATE issues SET status = 'closed', closed_at = ?, close_reason = ? WHERE id = ?",
        [stamp, summary or "Completed", issue_id],
    )
    touch(tx, issue_id, state=True, at=stamp)


def handoff(
    tx: Tx,
    actor: str,
    issue_id: str,
    note: Mapping[str, str | None],
    *,
    release_claim: bool,
    expected_revision: int | None,
) -> dict[str, Any]:
    """Append a structured handoff note and optionally release the claim, as one transaction."""
    issue = require(tx, issue_id)
    check_revision(issue, expected_revision)
    if release_claim:
        require_owner(issue, actor, "release")
    lines = ["Handoff"]
    for key in ("done", "remaining", "next"):
        if note.get(key):
            lines.append(f"{key.capitalize()}: {note[key]}")
    comment = add_comment(tx, issue_id, actor, "\n".join(lines))
    if release_claim:
        tx.run("UPDATE issues SET assignee = NULL, status = 'open' WHERE id = ?", [issue_id])
    touch(tx, issue_id, state=release_claim, at=comment["created_at"])
    return comment


def register_vocabulary(tx: Tx, key: str, values: Sequence[str], builtin: Sequence[str]) -> None:
    """Add custom statuses or types (from an import or configuration) to ``meta``."""
    found = tx.row("SELECT value FROM meta WHERE key = ?", [key])
    current: list[str] = json.loads(found[0]) if found else []
    merged = [*current, *[v for v in dict.fromkeys(values) if v not in current and v not in builtin]]
    if merged != current:
        tx.run(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [key, json.dumps(merged)],
        )
