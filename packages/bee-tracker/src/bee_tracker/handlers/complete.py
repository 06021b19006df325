"""complete: close an issue with its summary and evidence, unless something holds it open."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from bee_contracts import BeeError, ErrorCode
from bee_tracker import claims
from bee_tracker.handlers.claim import claim_next
from bee_tracker.store import reads
from bee_tracker.store.blockers import direct_blockers
from bee_tracker.store.ops import Write

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import CompleteArgs, CompleteData


def complete(op: Write, args: CompleteArgs) -> CompleteData:
    """Close the issue: the summary becomes its close_reason, the evidence a comment, in one transaction; with
    ``claim_next``, then claim the next ready issue in the same transaction (Beads' ``close --claim-next``).

    Its blockers are those of the ready rule (active targets of blocks and conditional-blocks, waits-for spawners
    with active children). Deleted issues (tombstones) never hold it open: they count as done, as blockers and as
    children.

    Raises:
        BeeError: ``blocked`` with the unfinished blockers, open children and open gates in details;
            ``forbidden`` when someone else holds the claim; ``conflict`` when already closed, for a stale
            ``expected_revision`` or when the actor's claim on it expired; ``not_found``.
    """
    op.tx.lock_graph()  # closing changes what others wait for; lock before the issue (see store.readiness)
    issue = op.issue(args["id"])
    op.compare(issue, args.get("expected_revision"))
    if issue.fields["status"] == "closed":
        raise BeeError(ErrorCode.CONFLICT, f"issue {issue.id} is already closed", details={"id": issue.id})
    claims.guard(issue, op.actor, "complete")
    blockers = direct_blockers(op.tx, issue.id)
    children = reads.open_children(op.tx, issue.id)
    gates = reads.open_gates(op.tx, issue.id)
    if blockers or children or gates:
        reasons = []
        if blockers:
            reasons.append(f"blocked by {', '.join(blockers)}")
        if children:
            reasons.append(f"open children {', '.join(children)}")
        if gates:
            reasons.append(f"open gates {', '.join(gates)}")
        raise BeeError(
            ErrorCode.BLOCKED,
            f"cannot complete {issue.id}: {'; '.join(reasons)}; finish or unlink those first",
            details={"id": issue.id, "blockers": blockers, "children": children, "gates": gates},
        )
    if args.get("evidence"):
        op.comment(issue, f"Evidence: {args['evidence']}")
    op.set(issue, status="closed", closed_at=op.now, close_reason=args.get("summary") or "Completed")
    if args["claim_next"]:
        op.settle()  # what closing it made ready is ready for the next claim
        following = claim_next(op, {}, args.get("lease_seconds"))
    answer = cast("CompleteData", dict(op.state(issue.id)))  # IssueState's keys, then the tool's own
    answer["completed"] = True
    if args["claim_next"]:
        answer["next"] = following
    return answer
