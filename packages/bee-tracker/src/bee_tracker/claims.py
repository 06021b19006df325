"""The claim rules: while an issue is claimed, only its holder may change who holds it or how far it is.

An issue is claimed while it has an assignee and is not closed (completing an issue ends its claim; Beads keeps the
assignee on closed issues as a record). While it is claimed, only the holder may change its status or assignee,
complete it, hand it off or release it; anyone else gets ``forbidden``, naming the holder. Its content (title,
description, design, acceptance criteria, notes, priority, type, labels, …), its notes and its links stay open to
everyone, with compare-and-swap (``expected_revision``) for those who want it. Claiming an issue someone else holds
is a ``conflict`` (the claim tool's race has exactly one winner). The operator's way out is
``bee tracker release --force``, recorded in the issue's history.

A claim may carry a lease (:mod:`bee_tracker.store.claimlease`): once the lease has expired by the database's clock
the claim is over, and the issue is as open to everyone as an unclaimed one, until the next claim takes it.
"""

from __future__ import annotations

from bee_contracts import BeeError, ErrorCode
from bee_tracker.store.records import IssueRow


def holder(issue: IssueRow) -> str | None:
    """Who holds the claim on ``issue``, or None when it is not claimed (or its lease has expired)."""
    if issue.lease_expired:
        return None
    return holder_of(issue.fields["assignee"], issue.fields["status"])


def holder_of(assignee: str | None, status: str | None) -> str | None:
    """Who holds the claim on an issue with this assignee and status (as ``get`` shows them), or None."""
    if not assignee or status == "closed":
        return None
    return str(assignee)


def _refused(issue: IssueRow, doing: str, who: str | None) -> BeeError:
    if who is None:
        return BeeError(
            ErrorCode.FORBIDDEN,
            f"cannot {doing} issue {issue.id}: it is not claimed; claim it first",
            details={"id": issue.id, "holder": None},
        )
    return BeeError(
        ErrorCode.FORBIDDEN,
        f"cannot {doing} issue {issue.id}: it is claimed by {who}, and only the holder of a claim may change its "
        f"status or assignee, complete it, hand it off or release it. Ask {who} to hand it off or release it (an "
        f"operator can run `bee tracker release --force {issue.id} --reason …`); its content, notes and links "
        "stay open to you",
        details={"id": issue.id, "holder": who, "assignee": who},
    )


def guard(issue: IssueRow, actor: str, doing: str) -> None:
    """Refuse ``doing`` when someone other than ``actor`` holds the claim (an unclaimed issue is open to all).

    Raises:
        BeeError: ``forbidden``, naming the holder.
    """
    who = holder(issue)
    if who is not None and who != actor:
        raise _refused(issue, doing, who)


def require_holder(issue: IssueRow, actor: str, doing: str) -> None:
    """Refuse ``doing`` unless ``actor`` holds the claim (releasing needs a claim of one's own).

    Raises:
        BeeError: ``forbidden``, naming the holder (or saying the issue is not claimed).
    """
    who = holder(issue)
    if who != actor:
        raise _refused(issue, doing, who)
