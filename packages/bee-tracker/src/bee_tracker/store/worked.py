"""The team's work on issues since an import brought them: found before a re-import replaces or deletes them.

An imported issue starts at activity revision 1, and every write the tools make to an issue raises it by one and
records one event in its history (:meth:`~.ops.Write.record`, :meth:`~.ops.Write.finish`); an issue created through
the tools has no line of its own (``raw_line`` and ``raw_revision`` are null), and its creation is one event more.
So an issue was *worked* on when it was created here or its activity revision passed 1, and its newest events of
the tools (the ``bd …`` events a backup brought are Beads' own history) are exactly the writes that replacing it
would discard: claims, comments, edits, links and labels. :func:`describe` says what they were.

Replacing such an issue with exactly what it is now (the tracker's own export of it, imported back) discards
nothing: :func:`fingerprints` of the issue before and after the import tell that case apart.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from bee_contracts.words import counted
from bee_tracker.store.batched import in_batches, marks
from bee_tracker.store.db import Tx
from bee_tracker.store.records import beads_records

#: The columns of an issue an import reads before it replaces it, for :class:`Prior`.
STATE: Final = (
    "id, activity_revision, CASE WHEN raw_line IS NULL AND raw_revision IS NULL THEN 1 ELSE 0 END, assignee, status"
)
#: Tools' events only: a backup's history events are written with tools named ``bd <event type>``.
_TOOLS_ONLY = "substr(tool, 1, 3) <> 'bd '"
#: Keys of an event that are not a field's ``[old, new]``.
_LISTS = frozenset({"comment", "linked", "unlinked", "labels", "created", "forced"})
#: Issues the message of a refusal spells out (all of them are in its details).
_SPELLED_OUT: Final = 10


@dataclass(frozen=True)
class Prior:
    """An issue an earlier import or the tools left, as an import finds it (a row of :data:`STATE`)."""

    id: str
    revision: int
    created_here: int
    assignee: str | None
    status: str

    @property
    def writes(self) -> int:
        """How many writes of the tools it has had since it was imported (or created here)."""
        return self.revision - 1 + int(bool(self.created_here))


def fingerprints(tx: Tx, issue_ids: Iterable[str]) -> dict[str, str]:
    """A digest of each live issue among ``issue_ids`` as it reads now: every field, label, dependency and comment
    (what an export writes of it)."""
    found = {}
    for batch in in_batches(sorted(issue_ids)):
        for issue_id, record in beads_records(tx, batch).items():
            text = json.dumps(record, sort_keys=True, ensure_ascii=False)
            found[issue_id] = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return found


def describe(tx: Tx, worked: Sequence[Prior], lines: Mapping[str, int]) -> list[dict[str, Any]]:
    """What the tools did to each of ``worked`` since it was imported, read before it is replaced (its comments go
    with it); ``lines`` gives the number of the line (or row) that replaces each."""
    events: dict[str, list[tuple[Any, ...]]] = {prior.id: [] for prior in worked}
    comments: dict[tuple[str, int], dict[str, Any]] = {}
    for batch in in_batches(sorted(events)):
        # newest first: each issue's first `writes` rows are its writes since its import
        for issue_id, at, actor, tool, changes in tx.rows(
            f"SELECT issue_id, at, actor, tool, changes FROM events WHERE issue_id IN ({marks(batch)}) "
            f"AND {_TOOLS_ONLY} ORDER BY seq DESC",
            batch,
        ):
            events[issue_id].append((at, actor, tool, json.loads(changes)))
        for issue_id, int_id, author, created_at, text in tx.rows(
            f"SELECT issue_id, int_id, author, created_at, text FROM comments WHERE issue_id IN ({marks(batch)}) "
            "AND int_id IS NOT NULL",
            batch,
        ):
            comments[(issue_id, int_id)] = {"id": int_id, "author": author, "created_at": created_at, "text": text}
    found = []
    for prior in worked:
        writes = list(reversed(events[prior.id][: prior.writes]))
        found.append(_description(prior, writes, comments, lines.get(prior.id)))
    return found


class _Writes:
    """What a series of writes did to one issue: fields edited (as imported, now), comments added, link and label
    changes."""

    def __init__(self, writes: list[tuple[Any, ...]]) -> None:
        self.edits: dict[str, list[Any]] = {}
        self.links: list[dict[str, Any]] = []
        self.added: list[str] = []
        self.removed: list[str] = []
        self.noted: list[int] = []
        for _, _, _, changes in writes:
            for key, value in changes.items():
                self._take(key, value)
        # A field changed, then changed back, was not edited.
        self.edits = {key: change for key, change in self.edits.items() if change[0] != change[1]}

    def _take(self, key: str, value: Any) -> None:
        if key == "comment":
            self.noted += value
        elif key in ("linked", "unlinked"):
            self.links += [{"action": "link" if key == "linked" else "unlink", **item} for item in value]
        elif key == "labels":
            self.added += value.get("added", [])
            self.removed += value.get("removed", [])
        elif key not in _LISTS and isinstance(value, list) and len(value) == 2:
            self.edits[key] = [self.edits[key][0] if key in self.edits else value[0], value[1]]


def _description(
    prior: Prior,
    writes: list[tuple[Any, ...]],
    comments: Mapping[tuple[str, int], dict[str, Any]],
    line: int | None,
) -> dict[str, Any]:
    done = _Writes(writes)
    description: dict[str, Any] = {"id": prior.id, "line": line}
    if prior.created_here:
        description["created_here"] = True
    holder = prior.assignee if prior.assignee and prior.status != "closed" else None  # bee_tracker.claims' rule
    if holder is not None and ("assignee" in done.edits or prior.created_here):
        description["claim"] = {"holder": holder, "status": prior.status}
    found = [comments[(prior.id, number)] for number in done.noted if (prior.id, number) in comments]
    parts: dict[str, Any] = {
        "comments": found,
        "edits": done.edits,
        "links": done.links,
        "labels": {"added": done.added, "removed": done.removed} if done.added or done.removed else None,
    }
    description.update({key: value for key, value in parts.items() if value})
    description["writes"] = [{"at": at, "actor": actor, "tool": tool} for at, actor, tool, _ in writes]
    return description


def summary(description: Mapping[str, Any]) -> str:
    """One issue's work in a few words: ``t-a (claimed by alice@example.com; 1 comment; edited priority; 3 writes
    by alice@example.com)``."""
    parts = []
    if description.get("created_here"):
        parts.append("created in this tracker")
    if "claim" in description:
        parts.append(f"claimed by {description['claim']['holder']}")
    if "comments" in description:
        parts.append(counted(len(description["comments"]), "comment"))
    if "edits" in description:
        parts.append("edited " + ", ".join(description["edits"]))
    if "links" in description:
        parts.append(counted(len(description["links"]), "link change"))
    if "labels" in description:
        parts.append("labels changed")
    writes = description["writes"]
    actors = sorted({str(write["actor"]) for write in writes})
    parts.append(f"{counted(len(writes), 'write')} by {', '.join(actors)}")
    return f"{description['id']} ({'; '.join(parts)})"


def spelled_out(descriptions: Sequence[Mapping[str, Any]]) -> str:
    """The first few of ``descriptions`` summarised (:func:`summary`), and how many more there are."""
    shown = ", ".join(summary(d) for d in descriptions[:_SPELLED_OUT])
    rest = len(descriptions) - _SPELLED_OUT
    return shown + (f", and {counted(rest, 'more issue')}" if rest > 0 else "")
