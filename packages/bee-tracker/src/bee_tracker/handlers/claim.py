"""claim: atomically become the assignee of an issue and set it in progress."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_contracts import BeeError, ErrorCode
from bee_tracker import claims
from bee_tracker.store.ops import Write

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import ClaimArgs, ClaimData


def claim(op: Write, args: ClaimArgs) -> ClaimData:
    """Claim the issue for the actor; claiming one's own claim again succeeds (``already_held``). The first claim
    records ``started_at`` in the issue's line, where bd writes it (after ``updated_at``); a later one keeps it.

    The issue's row is locked before the check, so of several claimers exactly one wins.

    Raises:
        BeeError: ``conflict`` when someone else holds the claim (naming them) or the issue is closed;
            ``not_found``.
    """
    issue = op.issue(args["id"])
    holder = claims.holder(issue)
    if holder == op.actor and issue.fields["status"] == "in_progress":
        return {**op.state(issue.id), "claimed": True, "already_held": True}
    if holder is not None and holder != op.actor:
        raise BeeError(
            ErrorCode.CONFLICT,
            f"issue {issue.id} is claimed by {holder}; claims never expire, so ask them to release or hand it off",
            details={"id": issue.id, "assignee": holder, "holder": holder},
        )
    if issue.fields["status"] == "closed":
        raise BeeError(
            ErrorCode.CONFLICT,
            f"issue {issue.id} is closed; reopen it with update before claiming",
            details={"id": issue.id},
        )
    # As bd (1.0.1 on) does, the first start records started_at; a later one keeps it.
    started = {} if issue.extra.get("started_at") else {"started_at": op.now}
    op.set(issue, kept=started, assignee=op.actor, status="in_progress")
    return {**op.state(issue.id), "claimed": True, "already_held": False}
