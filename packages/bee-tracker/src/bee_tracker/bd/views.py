"""What bd's reading commands need, gathered from the tracker's tools: every page of a list, whole issues, and the
order, filters and search rule of Beads.

The tools answer lists a page at a time, in Beads' order (most urgent first, newest by the whole second, id), with a
short form of each issue; bd's answers carry whole issues, so each one listed is read with ``get``
(:func:`whole`). Beads keeps wisps (``ephemeral``, ``no_history``) in a table of their own and lists them after the
other issues; only ``get`` shows which issues are wisps, so lists that may hold them are ordered again here
(:func:`bd_sorted`). ``bd search`` matches fewer issues than the search tool (which adds word matches and more
substrings): :func:`beads_match` is Beads' own test (``internal/storage/issueops/filters.go``), applied to what the
tool found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bee_tracker.bd.session import Tracker
from bee_tracker.model import PARENT_CHILD, epoch
from bee_tracker.progress import progress
from bee_tracker.store.keys import go_lower
from bee_tracker.store.readiness import WISP_KEYS, whole_second

#: A page of the list tools, at their most.
PAGE = 100
#: The most comments ``get`` returns (its ``comments_limit`` maximum).
ALL_COMMENTS = 200
#: Issues read with ``get`` per round of :func:`whole` (progress is shown between rounds).
ROUND = 200

Summary = dict[str, Any]


def pages(tracker: Tracker, tool: str, args: Mapping[str, Any], *, size: int = PAGE) -> Iterator[Summary]:
    """Every issue ``tool`` (ready or search) lists for ``args``, page after page (of ``size`` at most, up to
    :data:`PAGE`), in the tool's order."""
    offset = 0
    size = max(1, min(size, PAGE))
    while True:
        page = tracker.call(tool, {**args, "limit": size, "offset": offset})
        yield from page["issues"]
        if not page["has_more"] or not page["issues"]:
            return
        offset += len(page["issues"])


def total(tracker: Tracker, tool: str, args: Mapping[str, Any]) -> int:
    """How many issues ``tool`` lists for ``args`` (one page of one read)."""
    return int(tracker.call(tool, {**args, "limit": 1, "offset": 0})["total"])


@dataclass(frozen=True)
class Whole:
    """One issue whole, with what bd's answers compute from it: read with ``get`` (:func:`whole`), or listed by
    ``ready`` or ``search`` with ``whole`` (:meth:`listed`)."""

    #: The issue's Beads record (``get``'s ``issue``).
    record: dict[str, Any]
    #: bd's ``comment_count``.
    comment_count: int
    #: bd's ``dependent_count``: ``blocks`` dependencies on the issue from live issues.
    dependent_count: int
    #: What keeps it from being ready (``get``'s ``blocked_by``).
    blocked_by: list[str] = field(default_factory=list)
    #: ``get``'s whole answer (its neighbours, whether it is ready), when the issue was read with ``get``.
    got: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def read(cls, got: dict[str, Any]) -> Whole:
        """The issue from ``get``'s answer: its dependents as far as the answer lists them."""
        blocking = sum(1 for d in got.get("dependents") or [] if d.get("type") == "blocks")
        return cls(got["issue"], int(got.get("comment_count", 0)), blocking, list(got.get("blocked_by") or []), got)

    @classmethod
    def listed(cls, summary: Summary) -> Whole:
        """The issue from a list's item read with ``whole``."""
        return cls(
            summary["record"],
            int(summary["comment_count"]),
            int(summary["dependent_count"]),
            list(summary.get("blocked_by") or []),
        )

    @property
    def id(self) -> str:
        return str(self.record["id"])

    @property
    def wisp(self) -> bool:
        return any(self.record.get(key) not in (None, False, 0) for key in WISP_KEYS)

    @property
    def dependencies(self) -> list[dict[str, Any]]:
        return [d for d in self.record.get("dependencies") or [] if isinstance(d, dict)]

    @property
    def dependency_count(self) -> int:
        """bd's ``dependency_count``: the issue's own ``blocks`` dependencies."""
        return sum(1 for d in self.dependencies if d.get("type") == "blocks")

    @property
    def parent(self) -> str | None:
        """The issue's parent as bd computes it: the first parent-child target, in target order."""
        parents = sorted(str(d["depends_on_id"]) for d in self.dependencies if d.get("type") == PARENT_CHILD)
        return parents[0] if parents else None

    @property
    def second(self) -> float | None:
        """Its ``created_at`` in the whole seconds Beads orders by."""
        created = self.record.get("created_at")
        return whole_second(epoch(created)) if isinstance(created, str) else None


def second_of(timestamp: Any) -> float:
    """A time in the whole seconds Beads keeps (0 for none), to order comments as bd does."""
    seconds = whole_second(epoch(timestamp)) if isinstance(timestamp, str) else None
    return seconds if seconds is not None else 0.0


def whole(tracker: Tracker, ids: Sequence[str], *, comments: int = 0, label: str = "") -> list[Whole]:
    """Each of ``ids`` read whole with ``get``, in order (``comments``: how many of the newest comments). With a
    ``label``, its progress goes to stderr as rounds finish (:mod:`bee_tracker.progress`)."""
    found: list[Whole] = []
    with progress(label or "reading", total=len(ids)) as shown:
        for start in range(0, len(ids), ROUND):
            batch = ids[start : start + ROUND]
            args = [{"id": i, "comments_limit": comments} for i in batch]
            found += [Whole.read(got) for got in tracker.each("get", args)]
            if label:
                shown.advance(len(batch))
    return found


def bd_key(issue: Whole) -> tuple[Any, ...]:
    """Beads' order: wisps after the other issues, then priority, newest whole second first (none last), id."""
    priority = issue.record.get("priority")
    second = issue.second
    return (
        issue.wisp,
        priority if isinstance(priority, int) else 0,
        second is None,
        -(second or 0.0),
        issue.id,
    )


def bd_sorted(issues: Iterable[Whole]) -> list[Whole]:
    return sorted(issues, key=bd_key)


def gather(
    tracker: Tracker,
    summaries: Iterable[Summary],
    keep: Callable[[Whole], bool],
    *,
    limit: int,
    comments: int = 0,
) -> tuple[list[Whole], bool]:
    """The first ``limit`` (0: all) issues of ``summaries`` that ``keep`` keeps, whole, wisps after the rest as bd
    lists them; and whether more were kept than shown. Summaries listed with ``whole`` are whole already (unless
    ``comments`` are wanted); others are read with ``get``, only as many as it needs."""
    kept: list[Whole] = []
    wisps: list[Whole] = []
    batch: list[Summary] = []

    def enough() -> bool:
        return limit > 0 and len(kept) > limit

    def flush() -> None:
        if not comments and all("record" in summary for summary in batch):
            found = [Whole.listed(summary) for summary in batch]
        else:
            found = whole(tracker, [str(summary["id"]) for summary in batch], comments=comments)
        for issue in found:
            if keep(issue):
                (wisps if issue.wisp else kept).append(issue)
        batch.clear()

    for summary in summaries:
        batch.append(summary)
        if len(batch) >= (limit + 1 - len(kept) if limit > 0 else ROUND):  # one past the limit tells there is more
            flush()
            if enough():
                break
    if not enough():
        flush()
    listed = bd_sorted(kept) + bd_sorted(wisps)
    if limit <= 0:
        return listed, False
    return listed[:limit], len(listed) > limit


# -- bd search's rule ---------------------------------------------------------------------------------------------


def looks_like_issue_id(query: str) -> bool:
    """Beads' ``LooksLikeIssueID``: a dash neither first nor last, no space, only ASCII letters, digits, ``-`` and
    ``.``."""
    dash = query.find("-")
    if dash <= 0 or dash >= len(query) - 1:
        return False
    return all(ch.isascii() and (ch.isalnum() or ch in "-.") for ch in query)


def like(text: str, pattern: str) -> bool:
    """MySQL's ``LIKE`` under Dolt's binary collation: ``%`` any run, ``_`` any one character, a backslash makes the
    next character literal (a trailing one is itself); compared exactly."""
    regex: list[str] = []
    index = 0
    while index < len(pattern):
        ch = pattern[index]
        if ch == "\\":
            index += 1
            regex.append(re.escape(pattern[index] if index < len(pattern) else "\\"))
        else:
            regex.append({"%": ".*", "_": "."}.get(ch, re.escape(ch)))
        index += 1
    return re.fullmatch("".join(regex), text, flags=re.DOTALL) is not None


def beads_match(query: str, issue_id: str, title: str, external_ref: str | None) -> bool:
    """Whether ``bd search QUERY`` finds the issue: for an id-like query, its id equal to the lower-cased query or
    starting with it, or its title or external_ref (lower-cased) containing it; otherwise its lower-cased title or
    its id containing it."""
    lowered = go_lower(query)
    inside = f"%{lowered}%"
    if looks_like_issue_id(query):
        return (
            issue_id == lowered
            or like(issue_id, lowered + "%")
            or like(go_lower(title), inside)
            or like(go_lower(external_ref or ""), inside)
        )
    return like(go_lower(title), inside) or like(issue_id, inside)


def decided_by_summary(query: str, summary: Summary) -> bool | None:
    """:func:`beads_match` from a list's short form where it can tell (its id and title), else None (only the
    external_ref, which ``get`` shows, can decide)."""
    issue_id, title = str(summary["id"]), str(summary.get("title") or "")
    if beads_match(query, issue_id, title, None):
        return True
    return False if not looks_like_issue_id(query) else None
