"""link: add or remove a dependency between two issues."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_contracts import BeeError, ErrorCode, invalid
from bee_tracker.model import READINESS_TYPES
from bee_tracker.store.graph import refuse_cycle
from bee_tracker.store.ops import Write

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import LinkArgs, LinkData


def link(op: Write, args: LinkArgs) -> LinkData:
    """Add (or remove) the dependency ``id -[type]-> target``; adding one that exists changes nothing.

    Raises:
        BeeError: ``invalid_argument`` for a self-dependency, a dependency that would close a cycle through the
            readiness types (spelled out), or an issue over its size cap; ``not_found`` for a missing or deleted
            issue, or (removing) a dependency that does not exist.
    """
    issue_id, target, kind = args["id"], args["target"], args["type"]
    if issue_id == target:
        raise invalid(f"an issue cannot depend on itself ({issue_id}); link two different issues", argument="target")
    if kind in READINESS_TYPES:
        op.tx.lock_graph()  # two links checked at once must not together close a cycle
    issue = op.issue(issue_id)
    if args["action"] == "remove":
        if not op.undepend(issue, target, kind):
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"{issue_id} has no {kind} dependency on {target}",
                details={"id": issue_id, "target": target},
            )
        changed = True
    else:
        op.require(target, role="issue to link to")
        refuse_cycle(op.tx, issue_id, kind, target)
        changed = op.depend(issue, target, kind)
    return {**op.state(issue_id), "changed": changed, "action": args["action"], "target": target, "type": kind}
