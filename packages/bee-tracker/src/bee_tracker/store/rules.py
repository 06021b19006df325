"""The rules every imported line, or row of a backup's table, is held to, whichever form it came in.

What the store cannot keep (:mod:`.text`), ids no tool could address, and the caps that keep every issue readable by
``get`` (:mod:`.bounds`) and its labels few: a line or row that breaks one stops the import, named by its line (and
the file of a backup), and nothing is imported. The checks that cost more than reading the line run only on lines
that may break them.
"""

from __future__ import annotations

from typing import Any, Final

from bee_contracts import BeeError, invalid
from bee_tracker.model import COMMENTS_MAX_BYTES, ISSUE_MAX_BYTES, LABELS_MAX
from bee_tracker.store import bounds
from bee_tracker.store.text import MAX_DEPTH, unstorable

#: Longest id the tools can address (their ``id`` arguments allow 200 characters).
MAX_ID_CHARS: Final = 200
#: A line at most this long cannot hold an issue or a comment over its cap (get counts text about three times).
_SMALL_LINE_CHARS: Final = min(ISSUE_MAX_BYTES, COMMENTS_MAX_BYTES) // 4


def refuse(where: str, number: int, problem: str) -> BeeError:
    """The error for a bad line: it names the line (and the file of a backup), and says nothing was imported."""
    return invalid(
        f"{where}line {number} {problem}; fix or remove it, then import again (nothing was imported)", line=number
    )


def suspicious(line: str) -> bool:
    """Whether a line may hold what the store cannot keep: a NUL or a lone surrogate reach a decoded line only as
    ``\\u`` escapes, and deep nesting takes many brackets. The full walk of :func:`check_storable` costs more than
    the rest of an import; a line that is not suspicious skips it."""
    return "\\u0000" in line or "\\ud" in line or "\\uD" in line or line.count("{") + line.count("[") >= MAX_DEPTH


def check_storable(value: Any, where: str, number: int) -> None:
    """Raises: BeeError: ``invalid_argument`` when ``value`` (a line's JSON) holds text the store cannot keep."""
    problem = unstorable(value)
    if problem:
        raise refuse(where, number, f"holds {problem}, which the store cannot keep")


def check_comment(comment: Any, line: str, where: str, number: int) -> None:
    """Raises: BeeError: ``invalid_argument`` when one comment of the line is over its cap (a line that is short
    cannot hold one)."""
    if len(line) > _SMALL_LINE_CHARS and isinstance(comment, dict):
        over = bounds.comment_overshoot(comment)
        if over > 0:
            raise refuse(where, number, f"has a comment {over} bytes over the cap that keeps it readable by get")


def check_issue(record: dict[str, Any], line: str, where: str, number: int) -> None:
    """Raises: BeeError: ``invalid_argument`` when the issue holds text the store cannot keep, carries more labels
    than an issue may, or is over a size cap."""
    if suspicious(line):
        check_storable(record, where, number)
    labels = record.get("labels")
    if isinstance(labels, list) and len(labels) > LABELS_MAX:
        distinct = len({str(label) for label in labels})
        if distinct > LABELS_MAX:
            raise refuse(where, number, f"has {distinct} labels, more than the {LABELS_MAX} an issue may carry")
    if len(line) <= _SMALL_LINE_CHARS:
        return
    over = bounds.issue_overshoot(record)
    if over > 0:
        raise refuse(where, number, f"is an issue {over} bytes over the cap that keeps every issue readable by get")
    comments = record.get("comments")
    for comment in comments if isinstance(comments, list) else ():
        check_comment(comment, line, where, number)


def check_id(issue_id: Any, where: str, number: int) -> None:
    """Raises: BeeError: ``invalid_argument`` for an id no tool could address."""
    if type(issue_id) is not str:
        return
    # An ASCII id without NUL is storable: the full check only for the others.
    if len(issue_id) > MAX_ID_CHARS or ((not issue_id.isascii() or "\x00" in issue_id) and unstorable(issue_id)):
        raise refuse(where, number, f"has an id the tools could never address ({len(issue_id)} characters)")
