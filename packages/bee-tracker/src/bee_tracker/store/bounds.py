"""What is written can be read: the byte caps that keep every issue returnable whole by ``get``.

Sizes are measured the way the result limit counts them (:func:`bee_hostkit.results.piece_bytes`: each string
once in structuredContent and once more, escaped again, in the text copy), never in characters. The shares are in
:mod:`bee_tracker.model`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from bee_contracts import invalid
from bee_hostkit.results import piece_bytes
from bee_tracker.model import BLOCKING_TYPES, COMMENTS_MAX_BYTES, ISSUE_MAX_BYTES, PARENT_CHILD


def issue_bytes(record: Mapping[str, Any]) -> int:
    """The bytes a Beads issue record takes in ``get``, comments aside: the record, plus the ids that may keep it
    from being ready.

    (``blocked_by`` lists either targets of its blocking dependencies or its parents, so the worst case counts the
    longer of the two lists whole.)
    """
    without_comments = {key: value for key, value in record.items() if key != "comments"}
    dependencies = record.get("dependencies")
    links = [dep for dep in (dependencies if isinstance(dependencies, list) else ()) if isinstance(dep, Mapping)]
    blockers = [dep.get("depends_on_id") for dep in links if dep.get("type", "blocks") in BLOCKING_TYPES]
    parents = [dep.get("depends_on_id") for dep in links if dep.get("type") == PARENT_CHILD]
    return piece_bytes(without_comments) + max(piece_bytes(blockers), piece_bytes(parents))


def issue_overshoot(record: Mapping[str, Any]) -> int:
    """How many bytes the issue is over its cap (0 or less when it fits)."""
    return issue_bytes(record) - ISSUE_MAX_BYTES


def comment_overshoot(comment: Mapping[str, Any]) -> int:
    """How many bytes one comment is over its cap (0 or less when it fits)."""
    return piece_bytes(comment) - COMMENTS_MAX_BYTES


def refuse_large_issue(issue_id: str, record: Mapping[str, Any]) -> None:
    """Raises: BeeError: ``invalid_argument`` saying by how many bytes the issue would pass its cap."""
    over = issue_overshoot(record)
    if over > 0:
        raise invalid(
            f"this would make issue {issue_id} {ISSUE_MAX_BYTES + over} bytes as get returns it, {over} bytes over "
            f"the {ISSUE_MAX_BYTES}-byte cap that keeps every issue readable (text counts twice, escaped); shorten "
            "its text, or put long material in an artifact or a linked issue",
            id=issue_id,
            issueBytes=ISSUE_MAX_BYTES + over,
            limitBytes=ISSUE_MAX_BYTES,
            overByBytes=over,
        )


def refuse_large_comment(issue_id: str, comment: Mapping[str, Any]) -> None:
    """Raises: BeeError: ``invalid_argument`` saying by how many bytes the comment would pass its cap."""
    over = comment_overshoot(comment)
    if over > 0:
        raise invalid(
            f"this comment on {issue_id} would be {COMMENTS_MAX_BYTES + over} bytes as get returns it, {over} bytes "
            f"over the {COMMENTS_MAX_BYTES}-byte cap (text counts twice, escaped); split it into several notes",
            id=issue_id,
            commentBytes=COMMENTS_MAX_BYTES + over,
            limitBytes=COMMENTS_MAX_BYTES,
            overByBytes=over,
        )


ItemT = TypeVar("ItemT", bound=Mapping[str, Any])


def fitting(items: Sequence[ItemT], share: int) -> list[ItemT]:
    """The longest prefix of ``items`` whose JSON list takes at most ``share`` bytes (see :func:`piece_bytes`)."""
    taken: list[ItemT] = []
    used = 2 * len("[]")  # the brackets, in both copies
    for item in items:
        cost = piece_bytes(item) + (2 if taken else 0)  # a comma in each copy after the first item
        if used + cost > share:
            break
        taken.append(item)
        used += cost
    return taken
