"""release: give up one's claim; and the operator's forced release (``bee tracker release --force``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from bee_contracts import BeeError, ErrorCode
from bee_tracker import claims
from bee_tracker.store.ops import Write

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import ReleaseArgs, ReleaseData


def release(op: Write, args: ReleaseArgs) -> ReleaseData:
    """Release the actor's claim: the reason (if any) becomes a comment, the assignee is cleared, the issue reopens.

    Raises:
        BeeError: ``forbidden`` unless the actor holds the claim (naming the holder); ``conflict`` for a stale
            ``expected_revision``; ``not_found``.
    """
    issue = op.issue(args["id"])
    op.compare(issue, args.get("expected_revision"))
    claims.require_holder(issue, op.actor, "release")
    if args.get("reason"):
        op.comment(issue, f"Released: {args['reason']}")
    op.set(issue, assignee=None, status="open")
    return {**op.state(issue.id), "released": True}


class ForcedReleaseArgs(TypedDict):
    """What the operator gives `bee tracker release --force`."""

    id: str
    reason: str


def release_forced(op: Write, args: ForcedReleaseArgs) -> ReleaseData:
    """Release whoever holds the claim, on the operator's word (a local CLI command, never an MCP tool).

    The issue's history records the operator (``op.actor``), the holder and the reason; the reason is also left as
    a comment, so the holder's next ``get`` shows why.

    Raises:
        BeeError: ``conflict`` when the issue is not claimed; ``not_found``.
    """
    issue = op.issue(args["id"])
    holder = claims.holder(issue)
    if holder is None:
        raise BeeError(
            ErrorCode.CONFLICT, f"issue {issue.id} is not claimed; nothing to release", details={"id": issue.id}
        )
    op.comment(issue, f"Released by {op.actor} (forced; it was claimed by {holder}): {args['reason']}")
    op.set(issue, assignee=None, status="open")
    op.record(issue.id, state=True, forced={"holder": holder, "reason": args["reason"]})
    return {**op.state(issue.id), "released": True}
