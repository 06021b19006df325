"""update: change an issue's fields and labels, with optional compare-and-swap."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bee_contracts import invalid
from bee_tracker import claims
from bee_tracker.model import TOMBSTONE, checked_timestamp
from bee_tracker.store.ops import Write
from bee_tracker.store.records import IssueRow, labels_of

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
    given = _given(args)
    status = given.get("status")
    op.check_known(status=status, issue_type=given.get("issue_type"))
    if "status" in given or "defer_until" in given:
        op.tx.lock_graph()  # others' readiness may follow; lock before the issue (see store.readiness)
    issue = op.issue(args["id"])
    op.compare(issue, args.get("expected_revision"))
    _check_allowed(op, issue, given)
    if status is not None and issue.fields["status"] == "closed" and status != "closed":
        given.update(closed_at=None, close_reason=None)  # reopened
    first_start = status == "in_progress" and not issue.extra.get("started_at")
    op.set(issue, kept={"started_at": op.now} if first_start else None, **given)  # the first start, as bd records it
    if _changes_labels(args):
        op.set_labels(issue, _labels(op, issue, args))
    return {**op.state(issue.id), "updated": True}


def _given(args: UpdateArgs) -> dict[str, Any]:
    """The fields ``args`` assigns, checked before the store is touched (an empty assignee becoming none).

    Raises:
        BeeError: ``invalid_argument`` for nothing to update, a ``defer_until`` that is not RFC 3339, or status
            ``tombstone``.
    """
    given: dict[str, Any] = {name: args[name] for name in (*_CONTENT, *_CLAIMED) if name in args}  # type: ignore[literal-required]
    if not given and not _changes_labels(args):
        raise invalid(f"nothing to update; give at least one of {', '.join((*_CONTENT, *_CLAIMED, *_LABELS))}")
    if given.get("defer_until") is not None:
        checked_timestamp("defer_until", given["defer_until"])
    if "assignee" in given and not given["assignee"]:
        given["assignee"] = None  # an empty assignee is no assignee
    if given.get("status") == TOMBSTONE:
        raise invalid(
            "status tombstone marks an issue Beads deleted; the tracker does not delete through update (close it "
            "with complete instead)",
            argument="status",
        )
    return given


def _check_allowed(op: Write, issue: IssueRow, given: dict[str, Any]) -> None:
    """Refuse what update may not do to ``issue``: close it, or change its status or assignee under another's claim.

    Raises:
        BeeError: ``invalid_argument`` for closing (complete does it); ``forbidden`` for someone else's claim.
    """
    if given.get("status") == "closed" and issue.fields["status"] != "closed":
        raise invalid(
            "close issues with the complete tool, which checks blockers, children and gates", argument="status"
        )
    if any(name in given and given[name] != issue.fields[name] for name in _CLAIMED):
        claims.guard(issue, op.actor, "change the status or assignee of")


def _changes_labels(args: UpdateArgs) -> bool:
    """Whether ``args`` touches the labels at all (an empty ``labels`` list removes them all)."""
    return any(name in args for name in _LABELS)


def _labels(op: Write, issue: IssueRow, args: UpdateArgs) -> list[str]:
    """The issue's labels after ``args``: ``labels`` (else the current ones), plus ``add_labels``, minus
    ``remove_labels``."""
    current = list(args["labels"]) if "labels" in args else labels_of(op.tx, issue.id)
    removed = set(args.get("remove_labels", []))
    return [label for label in [*current, *args.get("add_labels", [])] if label not in removed]
