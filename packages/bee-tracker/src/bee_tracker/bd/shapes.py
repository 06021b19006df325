"""The shapes of bd's ``--json`` answers, built from the tracker's Beads records: keys, types and order.

Each shape is a Go struct of Beads (``internal/types/types.go``) as ``encoding/json`` writes it: fields in struct order,
an ``omitempty`` field left out when it is empty, a field without it always there (a missing time as Go's zero
time). :data:`ISSUE` is today's ``Issue``; the others embed it and add their own fields after it
(``IssueWithCounts``, ``IssueDetails``, ``BlockedIssue``, ``TreeNode``, ``IssueWithDependencyMetadata``), and an
outer field of the same name as one of ``Issue``'s takes its place at the outer position (``IssueDetails``' own
``labels``, ``dependencies`` and ``comments``).

A record's keys that today's ``Issue`` does not have (fields Beads removed, keys only Bee or an old export wrote) are
left out, as bd never writes them. A value of another type than bd's field holds (a ``1`` where bd has a bool, from
a table dump) is written in bd's type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from bee_tracker.bd.gojson import compact

#: Go's zero ``time.Time``, which bd writes for a time field without ``omitempty`` that was never set.
ZERO_TIME: Final = "0001-01-01T00:00:00Z"

#: How a field is written: always (``"str"``, ``"int"``, ``"time"``), or left out when empty (``"str?"``, ``"int?"``,
#: ``"bool?"``, ``"ptr?"`` for a Go pointer, left out only when nil, ``"raw?"`` for raw JSON, ``"list?"``).
Kind = str

#: Today's ``Issue`` struct, in field order (``internal/types/types.go``).
ISSUE: Final[tuple[tuple[str, Kind], ...]] = (
    ("id", "str"),
    ("title", "str"),
    ("description", "str?"),
    ("design", "str?"),
    ("acceptance_criteria", "str?"),
    ("notes", "str?"),
    ("spec_id", "str?"),
    ("status", "str?"),
    ("priority", "int"),
    ("issue_type", "str?"),
    ("assignee", "str?"),
    ("owner", "str?"),
    ("estimated_minutes", "intptr?"),
    ("created_at", "time"),
    ("created_by", "str?"),
    ("updated_at", "time"),
    ("started_at", "ptr?"),
    ("closed_at", "ptr?"),
    ("close_reason", "str?"),
    ("closed_by_session", "str?"),
    ("due_at", "ptr?"),
    ("defer_until", "ptr?"),
    ("external_ref", "ptr?"),
    ("source_system", "str?"),
    ("metadata", "raw?"),
    ("compaction_level", "int?"),
    ("compacted_at", "ptr?"),
    ("compacted_at_commit", "ptr?"),
    ("original_size", "int?"),
    ("labels", "list?"),
    ("dependencies", "list?"),
    ("comments", "list?"),
    ("sender", "str?"),
    ("ephemeral", "bool?"),
    ("no_history", "bool?"),
    ("wisp_type", "str?"),
    ("pinned", "bool?"),
    ("is_template", "bool?"),
    ("bonded_from", "list?"),
    ("await_type", "str?"),
    ("await_id", "str?"),
    ("timeout", "int?"),
    ("waiters", "list?"),
    ("source_formula", "str?"),
    ("source_location", "str?"),
    ("mol_type", "str?"),
    ("work_type", "str?"),
    ("event_kind", "str?"),
    ("actor", "str?"),
    ("target", "str?"),
    ("payload", "str?"),
)
#: The kinds of field bd writes even when absent; every other kind is left out when it holds nothing (None).
_ALWAYS: Final = frozenset({"str", "time", "int"})
#: ``Issue``'s relational fields, which each answer fills or not as bd's command does.
RELATIONS: Final = ("labels", "dependencies", "comments")


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _field(kind: Kind, value: Any) -> tuple[bool, Any]:
    """Whether bd writes a field of ``kind`` holding ``value`` (None when absent), and what it writes."""
    if kind == "str":
        return True, value if isinstance(value, str) else ""
    if kind == "time":
        return True, value if isinstance(value, str) and value else ZERO_TIME
    if kind == "int":
        return True, _int(value) or 0
    if kind == "str?":
        return isinstance(value, str) and value != "", value
    if kind == "int?":
        number = _int(value)
        return bool(number), number
    if kind == "intptr?":
        number = _int(value)
        return number is not None, number
    if kind == "bool?":
        return bool(_int(value)) if not isinstance(value, str) else False, True
    if kind == "ptr?":
        return isinstance(value, str), value
    if kind == "raw?":
        return value is not None and value != "", value
    # list?
    return isinstance(value, list) and len(value) > 0, value


def issue(
    record: Mapping[str, Any],
    *,
    labels: bool = True,
    dependencies: bool = False,
    omit: Iterable[str] = (),
) -> dict[str, Any]:
    """``record`` as bd's ``Issue``: with its labels (sorted, as bd reads them) unless ``labels`` is False, with its
    dependency records when ``dependencies`` (as :func:`dependency`), never its comments; ``omit`` leaves out fields
    an outer struct replaces."""
    left_out = {*omit, "comments"}
    if not labels:
        left_out.add("labels")
    if not dependencies:
        left_out.add("dependencies")
    values = dict(record)
    if labels and isinstance(values.get("labels"), list):
        values["labels"] = sorted(str(label) for label in values["labels"])
    if dependencies and isinstance(values.get("dependencies"), list):
        values["dependencies"] = [dependency(d) for d in sorted_dependencies(values["dependencies"])]
    shaped: dict[str, Any] = {}
    for name, kind in ISSUE:
        value = values.get(name)
        if (value is None and kind not in _ALWAYS) or name in left_out:
            continue  # most of Issue's fields are absent from a record, and left out of bd's answer
        written, value = _field(kind, value)
        if written:
            shaped[name] = value
    return shaped


def sorted_dependencies(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """An issue's dependency records in bd's order: by target (the table's key order, which bd reads them in)."""
    return sorted((d for d in records if isinstance(d, Mapping)), key=lambda d: str(d.get("depends_on_id", "")))


def dependency(record: Mapping[str, Any]) -> dict[str, Any]:
    """A dependency record as bd's ``Dependency``; its metadata is a JSON string there."""
    metadata = record.get("metadata")
    if metadata is not None and not isinstance(metadata, str):
        metadata = compact(metadata)
    shaped: dict[str, Any] = {
        "issue_id": str(record.get("issue_id", "")),
        "depends_on_id": str(record.get("depends_on_id", "")),
        "type": str(record.get("type", "")),
        "created_at": record.get("created_at") or ZERO_TIME,
    }
    if record.get("created_by"):
        shaped["created_by"] = record["created_by"]
    if metadata:
        shaped["metadata"] = metadata
    if isinstance(record.get("thread_id"), str) and record["thread_id"]:
        shaped["thread_id"] = record["thread_id"]
    return shaped


def comment(record: Mapping[str, Any], issue_id: str) -> dict[str, Any]:
    """A comment as bd's ``Comment``: its id a string (integer ids of older exports included)."""
    return {
        "id": str(record.get("id", "")),
        "issue_id": issue_id,
        "author": str(record.get("author") or ""),
        "text": str(record.get("text") or ""),
        "created_at": record.get("created_at") or ZERO_TIME,
    }


def with_counts(
    shaped: Mapping[str, Any], *, dependency_count: int, dependent_count: int, comment_count: int, parent: str | None
) -> dict[str, Any]:
    """``IssueWithCounts``: the issue, then its counts and its parent (left out when it has none)."""
    counted: dict[str, Any] = {
        **shaped,
        "dependency_count": dependency_count,
        "dependent_count": dependent_count,
        "comment_count": comment_count,
    }
    if parent is not None:
        counted["parent"] = parent
    return counted


def with_dependency_type(shaped: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """``IssueWithDependencyMetadata``: a neighbour and the type of its link."""
    return {**shaped, "dependency_type": kind}


def blocked(shaped: Mapping[str, Any], blockers: Sequence[str]) -> dict[str, Any]:
    """``BlockedIssue``: the issue and what blocks it."""
    return {**shaped, "blocked_by_count": len(blockers), "blocked_by": list(blockers)}


def tree_node(shaped: Mapping[str, Any], *, depth: int, parent_id: str, edge: str) -> dict[str, Any]:
    """``TreeNode``: the issue, its depth, the node it hangs from and the type of that edge (left out at the
    root); bd never sets ``truncated``."""
    node: dict[str, Any] = {**shaped, "depth": depth, "parent_id": parent_id}
    if edge:
        node["edge_from_parent"] = edge
    node["truncated"] = False
    return node


def details(
    record: Mapping[str, Any],
    *,
    dependencies: Sequence[dict[str, Any]],
    dependents: Sequence[dict[str, Any]],
    comments: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    """``IssueDetails`` (``bd show --json``): the issue, its labels, its neighbours both ways (as
    :func:`with_dependency_type`), its comments, its parent and, for an epic with children, their progress."""
    shaped = issue(record, omit=RELATIONS)
    labels = sorted(str(label) for label in record.get("labels") or [])
    if labels:
        shaped["labels"] = labels
    if dependencies:
        shaped["dependencies"] = list(dependencies)
    if dependents:
        shaped["dependents"] = list(dependents)
    if comments:
        shaped["comments"] = list(comments)
    parent = next((d["id"] for d in dependencies if d.get("dependency_type") == "parent-child"), None)
    if parent is not None:
        shaped["parent"] = parent
    children = [d for d in dependents if d.get("dependency_type") == "parent-child"]
    if record.get("issue_type") == "epic" and children:
        closed = sum(1 for child in children if child.get("status") == "closed")
        shaped["epic_total_children"] = len(children)
        shaped["epic_closed_children"] = closed
        shaped["epic_closeable"] = closed == len(children)
    return shaped


def statistics(
    *,
    total: int,
    open_: int,
    in_progress: int,
    closed: int,
    blocked: int,
    deferred: int,
    ready: int,
    pinned: int,
) -> dict[str, Any]:
    """``Statistics`` in struct order (an object answer, so written with its keys sorted). Current Beads never
    fills ``epics_eligible_for_closure`` nor ``average_lead_time_hours``: both are 0."""
    return {
        "total_issues": total,
        "open_issues": open_,
        "in_progress_issues": in_progress,
        "closed_issues": closed,
        "blocked_issues": blocked,
        "deferred_issues": deferred,
        "ready_issues": ready,
        "pinned_issues": pinned,
        "epics_eligible_for_closure": 0,
        "average_lead_time_hours": 0.0,
    }
