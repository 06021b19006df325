"""Whole issues in a list: what ``ready`` and ``search`` add to each summary when asked for ``whole``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_tracker.store.blockers import blocked_by_each
from bee_tracker.store.db import Tx
from bee_tracker.store.records import wholes

if TYPE_CHECKING:
    from bee_contracts.shapes.tracker import ReadyDataIssue as IssueSummary


def add_wholes(tx: Tx, summaries: list[IssueSummary]) -> None:
    """Give each summary the issue's ``record`` (``get``'s ``issue``, comments aside), ``comment_count``,
    ``dependent_count`` and ``blocked_by`` (``get``'s), read for all of them at once."""
    ids = [summary["id"] for summary in summaries]
    found, reasons = wholes(tx, ids), blocked_by_each(tx, ids)
    for summary in summaries:
        whole = found[summary["id"]]
        summary["record"] = whole.record
        summary["comment_count"] = whole.comment_count
        summary["dependent_count"] = whole.dependent_count
        summary["blocked_by"] = reasons[summary["id"]][1]
