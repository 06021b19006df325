"""add_note: append a comment, server-side."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_tracker.store.ops import Write

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import AddNoteArgs, AddNoteData


def add_note(op: Write, args: AddNoteArgs) -> AddNoteData:
    """Append the note as a comment by the actor: concurrent notes never overwrite one another (activity, not state).

    Raises:
        BeeError: ``invalid_argument`` when the note would pass the comment size cap; ``not_found``.
    """
    issue = op.issue(args["id"])
    comment = op.comment(issue, args["text"])
    return {**op.state(issue.id), "comment": comment}
