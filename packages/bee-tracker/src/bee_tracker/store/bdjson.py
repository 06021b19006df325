"""Issue lines written the way ``bd`` writes them: its key order, and the spelling of the file a line came from.

``bd`` writes an issue as Go's encoding/json marshals its ``Issue`` struct: keys in the struct's field order, empty
optional fields left out, ``<``, ``>``, ``&``, U+2028 and U+2029 escaped, no spaces. :data:`KEY_ORDER` is that
order across every era of the struct (``internal/types/types.go`` in the Beads repository): today's fields, with the
ones later removed (``content_hash``, ``source_repo``, the tombstone fields, the agent fields…) where they last
stood, then what ``bd export`` adds around an issue (``_type`` first; the dependency and comment counts and the
computed ``parent`` last).

A rebuilt line keeps the keys it was imported with in their order; a key it did not have goes where ``bd``'s
struct puts it: right after the nearest key before it in :data:`KEY_ORDER` (:func:`place`). It is also spelled
like its original line (:func:`style_of`): separators with or without a space, as Python's ``json.dumps`` and
hand-written files have them, ``<>&`` escaped or not (beads_rust leaves them as they are), and text beyond ASCII
as UTF-8 or as ``\\u`` escapes (Python's default).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

#: Every key bd's issue struct has marshalled, in struct order (see the module docstring).
STRUCT_ORDER: Final = (
    "id",
    "content_hash",
    "title",
    "description",
    "design",
    "acceptance_criteria",
    "notes",
    "spec_id",
    "status",
    "priority",
    "issue_type",
    "assignee",
    "owner",
    "estimated_minutes",
    "created_at",
    "created_by",
    "updated_at",
    "started_at",
    "closed_at",
    "close_reason",
    "closed_by_session",
    "lease_expires_at",
    "heartbeat_at",
    "lease_granted_node",
    "due_at",
    "defer_until",
    "external_ref",
    "source_system",
    "metadata",
    "compaction_level",
    "compacted_at",
    "compacted_at_commit",
    "original_size",
    "source_repo",
    "labels",
    "dependencies",
    "comments",
    "deleted_at",
    "deleted_by",
    "delete_reason",
    "original_type",
    "sender",
    "wisp",
    "ephemeral",
    "replies_to",
    "relates_to",
    "duplicate_of",
    "superseded_by",
    "no_history",
    "wisp_type",
    "pinned",
    "is_template",
    "bonded_from",
    "creator",
    "validations",
    "quality_score",
    "crystallizes",
    "await_type",
    "await_id",
    "timeout",
    "waiters",
    "holder",
    "source_formula",
    "source_location",
    "hook_bead",
    "role_bead",
    "agent_state",
    "last_activity",
    "role_type",
    "rig",
    "mol_type",
    "work_type",
    "event_kind",
    "actor",
    "target",
    "payload",
)
#: The full order of a line as ``bd export`` writes it: the record type, the issue, then the counts around it.
KEY_ORDER: Final = ("_type", *STRUCT_ORDER, "dependency_count", "dependent_count", "comment_count", "parent")
_RANK: Final = {key: rank for rank, key in enumerate(KEY_ORDER)}
_TAIL: Final = 1 + len(STRUCT_ORDER)


def place(values: Mapping[str, Any], key_order: Iterable[str] | None) -> dict[str, Any]:
    """``values`` in the order of the line they came from (``key_order``), each new key where bd puts it.

    Keys of ``key_order`` that are no longer in ``values`` are dropped. A key ``values`` adds goes right after the
    nearest present key before it in :data:`KEY_ORDER` (first when there is none), except that the counts ``bd
    export`` writes around an issue go after every key of the issue; keys bd never writes go at the end, in the
    order ``values`` has them.
    """
    keys = [key for key in dict.fromkeys(key_order or ()) if key in values]
    present = set(keys)
    for key in sorted((k for k in values if k not in present and k in _RANK), key=_RANK.__getitem__):
        rank = _RANK[key]
        before = [(_RANK[k], index) for index, k in enumerate(keys) if _RANK.get(k, rank) < rank]
        if rank >= _TAIL:  # what bd export adds after the issue goes after all of the issue, in any era's order
            at = max((index for _, index in before), default=-1) + 1
        else:
            at = max(before)[1] + 1 if before else 0
        keys.insert(at, key)
        present.add(key)
    keys.extend(key for key in values if key not in present)
    return {key: values[key] for key in keys}


@dataclass(frozen=True)
class LineStyle:
    """How a JSONL file spells its lines."""

    item_separator: str = ","
    key_separator: str = ":"
    #: Whether ``<``, ``>`` and ``&`` are written as ``\\u003c``, ``\\u003e``, ``\\u0026`` (Go does).
    html_escaped: bool = True
    #: Whether text beyond ASCII is written as ``\\u`` escapes (Python's json.dumps does by default).
    ascii_only: bool = False

    def as_text(self) -> str:
        return json.dumps([self.item_separator, self.key_separator, self.html_escaped, self.ascii_only])

    @classmethod
    def from_text(cls, text: str | None) -> LineStyle:
        """The style :meth:`as_text` wrote, or bd's when there is none (or it cannot be read)."""
        try:
            items, keys, html, ascii_only = json.loads(text) if text else (",", ":", True, False)
        except (ValueError, TypeError):
            return GO
        if items not in (",", ", ") or keys not in (":", ": ") or not isinstance(html, bool):
            return GO
        return cls(items, keys, html, ascii_only is True)


#: What bd (Go's encoding/json) writes.
GO: Final = LineStyle()


#: A ``\\u`` escape of a character beyond ASCII.
_BEYOND_ASCII: Final = re.compile(
    r"\\u(?:00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3})"
)


def style_of(line: str) -> LineStyle:
    """The style of one JSON object line: its first separators outside strings, whether it escapes ``<>&``, and
    whether it escapes text beyond ASCII.

    What a line does not show (no separators, no ``<>&``, no text beyond ASCII) reads as bd's own spelling.
    """
    item = key = None
    in_string = escaped = False
    for index, char in enumerate(line):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in ",:":
            spaced = line[index + 1 : index + 2] == " "
            if char == "," and item is None:
                item = ", " if spaced else ","
            elif char == ":" and key is None:
                key = ": " if spaced else ":"
            if item is not None and key is not None:
                break
    raw = any(char in line for char in "<>&")
    return LineStyle(
        item or ",", key or ":", html_escaped=not raw, ascii_only=line.isascii() and bool(_BEYOND_ASCII.search(line))
    )


def dumps(value: Any, style: LineStyle = GO) -> str:
    """One JSON line in ``style`` (bd's by default: UTF-8 text with ``<>&``, U+2028 and U+2029 escaped)."""
    text = json.dumps(value, ensure_ascii=style.ascii_only, separators=(style.item_separator, style.key_separator))
    if style.html_escaped:
        text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
