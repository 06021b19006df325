"""Beads' own ready, blocked and search rules, written for the tests from Beads' Go source (gastownhall/beads at
7e3c7fbbea058f581e53c4caf16ceeed2b166b89), to check the tracker against. Nothing here shares code with Bee.

- Import (``cmd/bd/import_shared.go`` ``parseJSONLFile``, ``internal/storage/issueops/create.go``): tombstones and
  ``_type`` records other than issues are skipped; the legacy ``wisp`` flag means ``ephemeral``; a missing priority
  is 0, a missing status ``open``, a missing type ``task``; the last line of an id wins; an issue that is
  ``ephemeral`` or ``no_history`` goes to the wisps table (``IsWisp``); a dependency is kept only when its target
  is in the same table as its issue (``PersistDependencies``).
- Blocked (``internal/storage/issueops/blocked.go`` ``ComputeBlockedIDsInTx``): active means in the table and not
  closed or pinned; ``blocks``/``conditional-blocks`` block when both ends are active; ``waits-for`` blocks an
  active issue while its spawner has an active child (``all-children``) or, with ``any-children``, an active child
  and no closed one.
- Ready (``ready_work.go`` ``GetReadyWorkInTx`` with ``cmd/bd/ready.go``'s filter): status ``open``, not pinned,
  not ephemeral (the issues table only), not an orchestration type, own ``defer_until`` not in the future, no parent
  deferred into the future, not blocked and not a direct child of a blocked issue; ordered by priority, then
  ``created_at`` newest first, then id. ``created_at`` is what the issues table holds: a ``DATETIME`` without
  fractional seconds (``internal/storage/schema/migrations/0001_create_issues.up.sql``), into which Dolt, as MySQL,
  rounds a time's fraction (half a second up), so issues created within one rounded second are ordered by id.
- ``bd blocked`` (``GetBlockedIssuesInTx``): the blocked set with wisps counted, plus active children of blocked
  issues, with each one's active blockers (or its parent).
- Search (``filters.go`` ``BuildIssueFilterClauses`` and ``LooksLikeIssueID``): the query lower-cased; for an
  id-like query, the id equal or starting with it, or the title or external_ref containing it; otherwise the
  lower-cased title or the id containing it; MySQL ``LIKE`` with ``%``, ``_`` and the backslash escape, compared
  byte for byte (Dolt's default collation).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

ORCHESTRATION = ("merge-request", "gate", "molecule", "message", "agent", "role", "rig")
_ZERO = datetime(1, 1, 1, tzinfo=UTC)


def dolt_datetime(value: datetime | None) -> datetime | None:
    """``value`` as a ``DATETIME`` column without fractional seconds keeps it: rounded to the nearest second."""
    if value is None:
        return None
    whole = value.replace(microsecond=0)
    return whole + timedelta(seconds=1) if value.microsecond >= 500_000 else whole


def go_time(value: object) -> datetime | None:
    """A Go ``time.Time`` from a JSON RFC 3339 string (None when absent or unreadable)."""
    if not isinstance(value, str) or not value:
        return None
    text = re.sub(r"(\.\d{6})\d+", r"\1", value.replace("Z", "+00:00").replace("z", "+00:00"))
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def go_lower(text: str) -> str:
    """Go's strings.ToLower: unicode.ToLower rune by rune (simple case mapping, no context)."""
    out = []
    for rune in text:
        lowered = rune.lower()
        out.append(lowered if len(lowered) == 1 else {"\u0130": "i"}.get(rune, rune))
    return "".join(out)


def _flag(record: dict[str, Any], key: str) -> bool:
    return record.get(key) is True or (type(record.get(key)) is int and record.get(key) != 0)


@dataclass
class Issue:
    id: str
    title: str
    status: str
    priority: int
    issue_type: str
    created_at: datetime
    defer_until: datetime | None
    pinned: bool
    wisp: bool
    external_ref: str
    labels: list[str]


@dataclass
class Dep:
    issue_id: str
    depends_on_id: str
    type: str
    metadata: str


@dataclass
class Beads:
    """A Beads database after importing some JSONL lines: the issues and wisps tables and their dependencies."""

    issues: dict[str, Issue] = field(default_factory=dict)
    wisps: dict[str, Issue] = field(default_factory=dict)
    deps: list[Dep] = field(default_factory=list)
    wisp_deps: list[Dep] = field(default_factory=list)

    @classmethod
    def imported(cls, lines: Iterable[str | bytes]) -> Beads:
        records: dict[str, dict[str, Any]] = {}
        deleted: set[str] = set()
        for raw in lines:
            text = raw.decode() if isinstance(raw, bytes) else raw
            if not text.strip():
                continue
            record = json.loads(text)
            if record.get("_type", "issue") != "issue" or not isinstance(record.get("id"), str):
                continue
            if record.get("status") == "tombstone":  # deletes the id wherever it stands (shadowed lines aside)
                deleted.add(record["id"])
                continue
            records.pop(record["id"], None)
            records[record["id"]] = record  # the last line of an id wins
        for issue_id in deleted:
            records.pop(issue_id, None)
        db = cls()
        for record in records.values():
            wisp = _flag(record, "ephemeral") or _flag(record, "no_history") or _flag(record, "wisp")
            issue = Issue(
                id=record["id"],
                title=str(record.get("title") or ""),
                status=str(record.get("status") or "open"),
                priority=record["priority"] if isinstance(record.get("priority"), int) else 0,
                issue_type=str(record.get("issue_type") or "task"),
                created_at=dolt_datetime(go_time(record.get("created_at"))) or _ZERO,
                defer_until=go_time(record.get("defer_until")),
                pinned=_flag(record, "pinned"),
                wisp=wisp,
                external_ref=str(record.get("external_ref") or ""),
                labels=[str(label) for label in record.get("labels") or []],
            )
            (db.wisps if wisp else db.issues)[issue.id] = issue
        for record in records.values():
            own = db.wisps if record["id"] in db.wisps else db.issues
            for dep in record.get("dependencies") or []:
                if not isinstance(dep, dict) or dep.get("depends_on_id") not in own:
                    continue  # PersistDependencies: a target missing from the issue's own table is skipped
                metadata = dep.get("metadata")
                kept = Dep(
                    record["id"],
                    dep["depends_on_id"],
                    str(dep.get("type") or ""),
                    metadata if isinstance(metadata, str) else "",
                )
                (db.wisp_deps if own is db.wisps else db.deps).append(kept)
        return db

    # -- blocked.go -----------------------------------------------------------------------------------------------

    def _active(self, include_wisps: bool) -> set[str]:
        tables = [self.issues, self.wisps] if include_wisps else [self.issues]
        return {i.id for table in tables for i in table.values() if i.status not in ("closed", "pinned")}

    def _deps(self, include_wisps: bool) -> list[Dep]:
        return [*self.deps, *self.wisp_deps] if include_wisps else list(self.deps)

    def computed_blocked(self, include_wisps: bool = False) -> tuple[set[str], set[str]]:
        """ComputeBlockedIDsInTx: (blocked ids, active ids)."""
        active = self._active(include_wisps)
        deps = self._deps(include_wisps)
        blocked = set()
        waits = []
        for dep in deps:
            if dep.type in ("blocks", "conditional-blocks"):
                if dep.issue_id in active and dep.depends_on_id in active:
                    blocked.add(dep.issue_id)
            elif dep.type == "waits-for" and dep.issue_id in active:
                waits.append(dep)
        closed = {
            i.id
            for table in ([self.issues, self.wisps] if include_wisps else [self.issues])
            for i in table.values()
            if i.status == "closed"
        }
        for dep in waits:
            children = [d.issue_id for d in deps if d.type == "parent-child" and d.depends_on_id == dep.depends_on_id]
            if _gate(dep.metadata) == "any-children":
                if children and not any(c in closed for c in children) and any(c in active for c in children):
                    blocked.add(dep.issue_id)
            elif any(c in active for c in children):
                blocked.add(dep.issue_id)
        return blocked, active

    def _children_of(self, parents: set[str]) -> list[tuple[str, str]]:
        """getChildrenOfIssuesInTx: (child, parent) over both dependency tables."""
        return [
            (d.issue_id, d.depends_on_id)
            for d in [*self.deps, *self.wisp_deps]
            if d.type == "parent-child" and d.depends_on_id in parents
        ]

    # -- ready_work.go --------------------------------------------------------------------------------------------

    def ready(self, now: datetime, *, priority: int | None = None, labels: Iterable[str] = ()) -> list[str]:
        """GetReadyWorkInTx as `bd ready` calls it (status open, sort priority, no limit)."""
        wanted = list(labels)
        deferred = {i.id for i in self.issues.values() if i.defer_until is not None and i.defer_until > now}
        hidden = {child for child, _ in self._children_of(deferred)}
        blocked, _ = self.computed_blocked(include_wisps=False)
        hidden |= blocked | {child for child, _ in self._children_of(blocked)}
        chosen = [
            i
            for i in self.issues.values()
            if i.status == "open"
            and not i.pinned
            and not i.wisp
            and i.issue_type not in ORCHESTRATION
            and (i.defer_until is None or i.defer_until <= now)
            and i.id not in hidden
            and (priority is None or i.priority == priority)
            and all(label in i.labels for label in wanted)
        ]
        chosen.sort(key=lambda i: i.id)
        chosen.sort(key=lambda i: i.created_at, reverse=True)
        chosen.sort(key=lambda i: i.priority)
        return [i.id for i in chosen]

    def bd_blocked(self) -> dict[str, list[str]]:
        """GetBlockedIssuesInTx: each listed issue with its blockers (or its blocked parent)."""
        blocked, active = self.computed_blocked(include_wisps=True)
        child_to_parent = dict(self._children_of(blocked))
        blocked_set = set(blocked) | {c for c in child_to_parent if c in active}
        blockers: dict[str, list[str]] = {}
        for dep in self._deps(True):
            blocking = dep.type in ("blocks", "waits-for", "conditional-blocks")
            if blocking and dep.issue_id in blocked_set and dep.depends_on_id in active:
                blockers.setdefault(dep.issue_id, []).append(dep.depends_on_id)
        for child, parent in child_to_parent.items():
            if child in active and child in blocked_set and child not in blockers:
                blockers[child] = [parent]
        return blockers

    # -- filters.go -----------------------------------------------------------------------------------------------

    def search(self, query: str) -> set[str]:
        """`bd search QUERY --status all`: the ids of every match, in the issues and the wisps tables."""
        lowered = go_lower(query)
        found = set()
        for issue in [*self.issues.values(), *self.wisps.values()]:
            if looks_like_issue_id(query):
                hit = (
                    issue.id == lowered
                    or mysql_like(issue.id, lowered + "%")
                    or mysql_like(go_lower(issue.title), "%" + lowered + "%")
                    or mysql_like(go_lower(issue.external_ref), "%" + lowered + "%")
                )
            else:
                pattern = "%" + lowered + "%"
                hit = mysql_like(go_lower(issue.title), pattern) or mysql_like(issue.id, pattern)
            if hit:
                found.add(issue.id)
        return found


def _gate(metadata: str) -> str:
    if not metadata.strip():
        return "all-children"
    try:
        value = json.loads(metadata)
    except ValueError:
        return "all-children"
    return "any-children" if isinstance(value, dict) and value.get("gate") == "any-children" else "all-children"


def looks_like_issue_id(query: str) -> bool:
    index = query.find("-")
    if index <= 0 or index >= len(query) - 1 or " " in query:
        return False
    return all(ch.isascii() and (ch.isalnum() or ch in "-.") for ch in query)


def mysql_like(text: str, pattern: str) -> bool:
    """MySQL's LIKE, byte for byte: % any run, _ any one character, a backslash makes the next one literal."""
    regex = []
    index = 0
    while index < len(pattern):
        ch = pattern[index]
        if ch == "\\":
            index += 1
            regex.append(re.escape(pattern[index] if index < len(pattern) else "\\"))
        elif ch == "%":
            regex.append(".*")
        elif ch == "_":
            regex.append(".")
        else:
            regex.append(re.escape(ch))
        index += 1
    return re.fullmatch("".join(regex), text, flags=re.DOTALL) is not None
