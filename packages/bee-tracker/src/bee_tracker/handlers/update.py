"""update: change an issue's fields and labels, with optional compare-and-swap."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bee_contracts import invalid
from bee_tracker import claims
from bee_tracker.model import TOMBSTONE, checked_timestamp
from bee_tracker.store.ops import Write
from bee_tracker.store.records import labels_of

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import UpdateArgs, UpdateData

#: Fields open to everyone (with compare-and-swap for those who want it).
_CONTENT = (
    "title",
    "description",
    "design",
    "acceptance_criteria",
    "notes",
    "priority",
    "issue_type",
    "external_ref",
    "defer_until",
)
#: Fields only the holder of a claim may change while the issue is claimed.
_CLAIMED = ("status", "assignee")
_LABELS = ("labels", "add_labels", "remove_labels")


def update(op: Write, args: UpdateArgs) -> UpdateData:
    """Assign the given fields and labels; fields whose value is unchanged change nothing.

    Raises:
        BeeError: ``invalid_argument`` for nothing to update, an unknown status or type, ``closed`` (use
            complete), ``tombstone``, a ``defer_until`` that is not RFC 3339, or an issue over its size cap;
            ``conflict`` for a stale ``expected_revision``; ``forbidden`` when someone else holds the claim and
            the status or assignee would change; ``not_found``.
    """
    given: dict[str, Any] = {name: args[name] for name in (*_CONTENT, *_CLAIMED) if name in args}  # type: ignore[literal-required]
    if not given and not any(name in args for name in _LABELS):
        raise invalid(f"nothing to update; give at least one of {', '.join((*_CONTENT, *_CLAIMED, *_LABELS))}")
    if given.get("defer_until") is not None:
        checked_timestamp("defer_until", given["defer_until"])
    if "assignee" in given and not given["assignee"]:
        given["assignee"] = None  # an empty assignee is no assignee
    status = given.get("status")
    if status == TOMBSTONE:
        raise invalid(
            "status tombstone marks an issue Beads deleted; the tracker does not delete through update (close it "
            "with complete instead)",
            argument="status",
        )
    op.check_known(status=status, issue_type=given.get("issue_type"))
    if "status" in given or "defer_until" in given:
        op.tx.lock_graph()  # others' readiness may follow; lock before the issue (see store.readiness)
    issue = op.issue(args["id"])
    op.compare(issue, args.get("expected_revision"))
    if status == "closed" and issue.fields["status"] != "closed":
        raise invalid(
            "close issues with the complete tool, which checks blockers, children and gates", argument="status"
        )
    if any(name in given and given[name] != issue.fields[name] for name in _CLAIMED):
        claims.guard(issue, op.actor, "change the status or assignee of")
    if status is not None and issue.fields["status"] == "closed" and status != "closed":
        given.update(closed_at=None, close_reason=None)  # reopened
    first_start = status == "in_progress" and not issue.extra.get("started_at")
    op.set(issue, kept={"started_at": op.now} if first_start else None, **given)  # the first start, as bd records it
    if any(name in args for name in _LABELS):
        current = list(args["labels"]) if "labels" in args else labels_of(op.tx, issue.id)
        removed = set(args.get("remove_labels", []))
        op.set_labels(issue, [label for label in [*current, *args.get("add_labels", [])] if label not in removed])
    return {**op.state(issue.id), "updated": True}
