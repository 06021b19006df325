"""handoff: leave structured context for whoever continues, optionally releasing the claim."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_contracts import invalid
from bee_tracker import claims
from bee_tracker.store.ops import Write

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import HandoffArgs, HandoffData

_PARTS = (("done", "Done"), ("remaining", "Remaining"), ("next", "Next"))


def handoff(op: Write, args: HandoffArgs) -> HandoffData:
    """Append ``done`` / ``remaining`` / ``next`` as one comment; with ``release`` also release, in one transaction.

    Raises:
        BeeError: ``invalid_argument`` when all three parts are empty; ``forbidden`` when someone else holds the
            claim (or, releasing, when the actor holds none); ``conflict`` for a stale ``expected_revision``;
            ``not_found``.
    """
    given = [(label, args[key]) for key, label in _PARTS if args.get(key)]  # type: ignore[literal-required]
    if not given:
        raise invalid("a handoff needs at least one of done, remaining, next")
    issue = op.issue(args["id"])
    op.compare(issue, args.get("expected_revision"))
    if args["release"]:
        claims.require_holder(issue, op.actor, "release")
    else:
        claims.guard(issue, op.actor, "hand off")
    comment = op.comment(issue, "\n".join(["Handoff", *(f"{label}: {text}" for label, text in given)]))
    if args["release"]:
        op.set(issue, assignee=None, status="open")
    return {**op.state(issue.id), "comment": comment, "released": args["release"]}
