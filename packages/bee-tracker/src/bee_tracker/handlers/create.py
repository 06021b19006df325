"""create: a new open issue, optionally the next child of a parent and depending on prerequisites."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bee_tracker.model import PARENT_CHILD
from bee_tracker.store.ids import child_id, new_id
from bee_tracker.store.ops import Write

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import CreateArgs, CreateData

_FIELDS = ("title", "description", "design", "acceptance_criteria", "notes", "priority", "issue_type", "external_ref")


def create(op: Write, args: CreateArgs) -> CreateData:
    """Insert the issue with its labels, its parent link (id ``parent.N``) and its prerequisites (``blocks``).

    A new id is never one the store has seen (live, deleted or only referenced), so the issue starts without
    dependents and cannot close a dependency cycle.

    Raises:
        BeeError: ``not_found`` for a missing or deleted parent or prerequisite; ``invalid_argument`` for an
            unknown type or an issue over its size cap.
    """
    fields: dict[str, Any] = {name: args[name] for name in _FIELDS if name in args}  # type: ignore[literal-required]
    op.check_known(issue_type=fields.get("issue_type"))
    prerequisites = args.get("prerequisites", [])
    if "parent" in args or prerequisites:
        op.tx.lock_graph()  # its links reach other issues' readiness; lock before the parent (see store.readiness)
    # Locking the parent serialises its children's numbering.
    parent = op.issue(args["parent"], fence=False) if "parent" in args else None  # not a write on the parent
    for prerequisite in prerequisites:
        op.require(prerequisite, role="prerequisite")
    issue_id = child_id(op.tx, parent.id) if parent is not None else new_id(op.tx, op.prefix)
    values: dict[str, Any] = {
        "status": "open",
        "priority": 2,
        "issue_type": "task",
        **fields,
        "id": issue_id,
        "owner": op.actor,
        "created_at": op.now,
        "created_by": op.actor,
        "updated_at": op.now,
    }
    issue = op.insert(values)
    op.set_labels(issue, args.get("labels", []))
    if parent is not None:
        op.depend(issue, parent.id, PARENT_CHILD)
    for prerequisite in prerequisites:
        op.depend(issue, prerequisite, "blocks")
    return {**op.state(issue_id), "created": True}
