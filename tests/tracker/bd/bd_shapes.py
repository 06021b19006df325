"""bd's ``--json`` answers as Beads' Go source writes them, for the golden tests of `bee bd`: every key, its type and
its place, read from gastownhall/beads at 7e3c7fbbea058f581e53c4caf16ceeed2b166b89 and written here by hand (never
from Bee's output, and sharing no code with Bee's own shapes).

How bd writes JSON (``cmd/bd/output.go`` ``outputJSON``): an ``encoding/json`` Encoder indented with two spaces; a
list goes out as it is (struct fields in declaration order, ``omitempty`` fields left out when empty); an object is
first marshalled, read back into ``map[string]interface{}`` and given ``"schema_version": 1``, so its keys come out
sorted at every depth (``wrapWithSchemaVersion``). Errors under ``--json`` are ``{"error", "schema_version"}``
(``cmd/bd/errors.go`` ``buildJSONError``).

A field is ``(name, kind, always)``: ``always`` when the Go field has no ``omitempty`` (or is a non-pointer struct such
as ``time.Time``, which ``omitempty`` never leaves out). Kinds: ``str``, ``int``, ``bool``, ``time`` (an RFC 3339
string), ``strs`` (a list of strings), ``raw`` (``json.RawMessage``: any JSON), or a nested shape's name.
"""

from __future__ import annotations

from typing import Any

Field = tuple[str, str, bool]

#: ``internal/types/types.go`` ``type Issue struct`` (today's fields; ``json:"-"`` ones never appear).
ISSUE: list[Field] = [
    ("id", "str", True),
    ("title", "str", True),
    ("description", "str", False),
    ("design", "str", False),
    ("acceptance_criteria", "str", False),
    ("notes", "str", False),
    ("spec_id", "str", False),
    ("status", "str", False),
    ("priority", "int", True),  # "No omitempty: 0 is valid (P0/critical)"
    ("issue_type", "str", False),
    ("assignee", "str", False),
    ("owner", "str", False),
    ("estimated_minutes", "int", False),
    ("created_at", "time", True),
    ("created_by", "str", False),
    ("updated_at", "time", True),
    ("started_at", "time", False),
    ("closed_at", "time", False),
    ("close_reason", "str", False),
    ("closed_by_session", "str", False),
    ("due_at", "time", False),
    ("defer_until", "time", False),
    ("external_ref", "str", False),
    ("source_system", "str", False),
    ("metadata", "raw", False),
    ("compaction_level", "int", False),
    ("compacted_at", "time", False),
    ("compacted_at_commit", "str", False),
    ("original_size", "int", False),
    ("labels", "strs", False),
    ("dependencies", "dependency", False),
    ("comments", "comment", False),
    ("sender", "str", False),
    ("ephemeral", "bool", False),
    ("no_history", "bool", False),
    ("wisp_type", "str", False),
    ("pinned", "bool", False),
    ("is_template", "bool", False),
    ("bonded_from", "raw", False),
    ("await_type", "str", False),
    ("await_id", "str", False),
    ("timeout", "int", False),
    ("waiters", "strs", False),
    ("source_formula", "str", False),
    ("source_location", "str", False),
    ("mol_type", "str", False),
    ("work_type", "str", False),
    ("event_kind", "str", False),
    ("actor", "str", False),
    ("target", "str", False),
    ("payload", "str", False),
]

#: ``types.go`` ``type Dependency struct``.
DEPENDENCY: list[Field] = [
    ("issue_id", "str", True),
    ("depends_on_id", "str", True),
    ("type", "str", True),
    ("created_at", "time", True),
    ("created_by", "str", False),
    ("metadata", "str", False),  # a JSON string, not an object
    ("thread_id", "str", False),
]

#: ``types.go`` ``type Comment struct``: the id is a string today (older exports had integers).
COMMENT: list[Field] = [
    ("id", "str", True),
    ("issue_id", "str", True),
    ("author", "str", True),
    ("text", "str", True),
    ("created_at", "time", True),
]

#: ``types.go`` ``type IssueWithCounts struct { *Issue; DependencyCount; DependentCount; CommentCount; Parent }``:
#: what ``bd ready --json`` (``cmd/bd/ready.go`` ``buildReadyIssueOutput``), ``bd list --json`` (``list.go``) and
#: ``bd search --json`` (``search.go``, without dependencies or parent) print, a list of them.
ISSUE_WITH_COUNTS: list[Field] = [
    *ISSUE,
    ("dependency_count", "int", True),
    ("dependent_count", "int", True),
    ("comment_count", "int", True),
    ("parent", "str", False),
]

#: ``types.go`` ``type IssueWithDependencyMetadata struct { Issue; DependencyType }``: a neighbour in ``bd show``.
ISSUE_WITH_DEPENDENCY_TYPE: list[Field] = [*ISSUE, ("dependency_type", "str", True)]

#: ``types.go`` ``type IssueDetails struct``: ``bd show --json`` prints a list of them (``cmd/bd/show.go``). Its own
#: ``labels``, ``dependencies`` and ``comments`` shadow ``Issue``'s, so they come after every ``Issue`` field.
ISSUE_DETAILS: list[Field] = [
    *[field for field in ISSUE if field[0] not in ("labels", "dependencies", "comments")],
    ("labels", "strs", False),
    ("dependencies", "neighbour", False),
    ("dependents", "neighbour", False),
    ("comments", "comment", False),
    ("parent", "str", False),
    ("epic_total_children", "int", False),
    ("epic_closed_children", "int", False),
    ("epic_closeable", "bool", False),
]

#: ``types.go`` ``type BlockedIssue struct { Issue; BlockedByCount; BlockedBy }``: ``bd blocked --json``.
BLOCKED_ISSUE: list[Field] = [*ISSUE, ("blocked_by_count", "int", True), ("blocked_by", "strs", True)]

#: ``types.go`` ``type TreeNode struct { Issue; Depth; ParentID; EdgeFromParent; Truncated }``: ``bd dep tree --json``.
TREE_NODE: list[Field] = [
    *ISSUE,
    ("depth", "int", True),
    ("parent_id", "str", True),
    ("edge_from_parent", "str", False),
    ("truncated", "bool", True),
]

#: ``types.go`` ``type Statistics struct``, inside ``cmd/bd/status.go``'s ``StatusOutput{summary, recent_activity}``
#: (``getGitActivity`` returns nil, so ``recent_activity`` is always left out).
STATISTICS: list[Field] = [
    ("total_issues", "int", True),
    ("open_issues", "int", True),
    ("in_progress_issues", "int", True),
    ("closed_issues", "int", True),
    ("blocked_issues", "int", True),
    ("deferred_issues", "int", True),
    ("ready_issues", "int", True),
    ("pinned_issues", "int", True),
    ("epics_eligible_for_closure", "int", True),
    ("average_lead_time_hours", "number", True),
]

#: ``cmd/bd/dep.go`` ``depAddCmd``: ``outputJSON(map{status, issue_id, depends_on_id, type})``, an object.
DEP_ADDED = {"status": "str", "issue_id": "str", "depends_on_id": "str", "type": "str"}
#: ``dep.go`` ``depRemoveCmd``: ``outputJSON(map{status, issue_id, depends_on_id})``.
DEP_REMOVED = {"status": "str", "issue_id": "str", "depends_on_id": "str"}
#: ``dep.go`` ``depCmd`` with ``--blocks``: ``outputJSON(map{status, blocker_id, blocked_id, type})``.
DEP_BLOCKS = {"status": "str", "blocker_id": "str", "blocked_id": "str", "type": "str"}
#: ``cmd/bd/label.go`` ``processBatchLabelOperation``: a list of ``map{status, issue_id, label}``, each sorted.
LABEL_RESULT = {"status": "str", "issue_id": "str", "label": "str"}

#: ``cmd/bd/close.go`` with ``--claim-next`` when it claimed one: ``outputJSON(map{"closed": []*Issue, "claimed":
#: *Issue})``, an object, so every key is sorted at every depth (without it, or when nothing was ready: the list).
CLOSE_CLAIMED = {"claimed": "raw", "closed": "objects"}
#: ``cmd/bd/ready.go`` with ``--claim``: ``buildReadyIssueOutput`` of the one issue claimed (``IssueWithCounts``), a
#: list; ``[]`` when nothing was claimed.

#: Fields that are Go pointers: ``omitempty`` leaves one out only when it is nil, so a pointer to 0, false or "" is
#: written (``estimated_minutes``, ``external_ref``, the epic progress of ``IssueDetails``, …).
POINTERS = frozenset(
    {
        "estimated_minutes",
        "started_at",
        "closed_at",
        "due_at",
        "defer_until",
        "external_ref",
        "compacted_at",
        "compacted_at_commit",
        "parent",
        "epic_total_children",
        "epic_closed_children",
        "epic_closeable",
    }
)

NESTED = {"dependency": DEPENDENCY, "comment": COMMENT, "neighbour": ISSUE_WITH_DEPENDENCY_TYPE}


def _kind_ok(kind: str, value: Any) -> bool:
    if kind in ("str", "time"):
        return isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "strs":
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    if kind == "raw":
        return True
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def check_struct(value: Any, fields: list[Field], where: str = "") -> None:
    """``value`` is the Go struct ``fields`` as encoding/json writes it: keys in field order, every key one of the
    fields, each of its kind, every field without omitempty there, and no empty omitempty field."""
    assert isinstance(value, dict), f"{where}: not an object"
    names = [name for name, _, _ in fields]
    keys = list(value)
    unknown = [key for key in keys if key not in names]
    assert not unknown, f"{where}: keys bd never writes: {unknown}"
    assert keys == sorted(keys, key=names.index), f"{where}: keys out of bd's order: {keys}"
    for name, kind, always in fields:
        if name not in value:
            assert not always, f"{where}: {name} is missing (bd always writes it)"
            continue
        item = value[name]
        assert _kind_ok(kind, item), f"{where}: {name} is {item!r}, not {kind}"
        if not always and kind != "raw" and name not in POINTERS:
            assert item not in ("", 0, False, [], None), f"{where}: {name} is empty, which omitempty leaves out"
        if kind in NESTED:
            for index, inner in enumerate(item):
                check_struct(inner, NESTED[kind], f"{where}.{name}[{index}]")


def check_sorted_object(value: Any, kinds: dict[str, str], where: str = "") -> None:
    """An object answer: ``kinds``' keys plus schema_version, sorted, each of its kind."""
    assert isinstance(value, dict), f"{where}: not an object"
    assert list(value) == sorted([*kinds, "schema_version"]), f"{where}: keys {list(value)}"
    assert value["schema_version"] == 1
    for name, kind in kinds.items():
        assert _kind_ok(kind, value[name]), f"{where}: {name} is {value[name]!r}, not {kind}"


def check_sorted_struct(value: Any, fields: list[Field], where: str = "") -> None:
    """A struct written as an object answer: its keys (present ones and schema_version) sorted, kinds as the struct
    says, every field without omitempty there."""
    assert isinstance(value, dict), f"{where}: not an object"
    assert list(value) == sorted(value), f"{where}: keys not sorted: {list(value)}"
    assert value.pop("schema_version", None) == 1, f"{where}: no schema_version 1"
    names = {name: (kind, always) for name, kind, always in fields}
    assert not [key for key in value if key not in names], f"{where}: keys bd never writes: {list(value)}"
    for name, (kind, always) in names.items():
        assert name in value or not always, f"{where}: {name} is missing"
        if name in value:
            assert _kind_ok(kind, value[name]), f"{where}: {name} is {value[name]!r}, not {kind}"
