"""The packet manifest: parsed, validated against its schema in bee-contracts, and ordered dependency-first."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, Literal

from bee_contracts import BeeError, ErrorCode, invalid
from bee_contracts.schemas import load_schema
from bee_hostkit.validation import SchemaValidator, parse_json_argument

#: How a selection is delivered: file metadata, the symbol structure, or source text.
Representation = Literal["index", "outline", "body"]


@dataclass(frozen=True)
class Selection:
    """One entry of the manifest."""

    id: str
    path: str
    representation: Representation
    required: bool
    symbol: str | None = None
    line_range: tuple[int, int] | None = None
    hash: str | None = None
    depends_on: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"selection {self.id!r} ({self.path})"


@dataclass(frozen=True)
class Manifest:
    """Selections in manifest order, plus the dependency-first order they are packed in."""

    selections: tuple[Selection, ...]
    ordered: tuple[Selection, ...]

    def by_id(self) -> dict[str, Selection]:
        return {selection.id: selection for selection in self.selections}

    def needed_ids(self) -> set[str]:
        """Ids that must be delivered: required selections and, transitively, what they depend on."""
        index = self.by_id()
        needed: set[str] = set()
        stack = [s.id for s in self.selections if s.required]
        while stack:
            current = stack.pop()
            if current not in needed:
                needed.add(current)
                stack.extend(index[current].depends_on)
        return needed


_EXAMPLE = (
    'pass the manifest as a serialized object such as {"selections": [{"id": "a", "path": "README.md", '
    '"representation": "index"}]}'
)


@cache
def _validator() -> SchemaValidator:
    return SchemaValidator("manifestJson", load_schema("context-packet-manifest"), noun="field")


@lru_cache(maxsize=64)
def parse_manifest(manifest_json: str) -> Manifest:
    """Parse and check a manifest (memoized: the result is immutable and a pure function of the text).

    Raises:
        BeeError: ``invalid_argument`` for malformed or too deeply nested JSON, a schema violation (a line number
            that is not an integer, a number too large to hold among them), duplicate or unknown ids,
            options that do not go with the representation, a bad range, or a dependency cycle.
    """
    raw: Any = parse_json_argument("manifestJson", manifest_json, hint=_EXAMPLE)
    _validator().check(raw)
    selections = tuple(_selection(entry) for entry in raw["selections"])
    seen: set[str] = set()
    for selection in selections:
        if selection.id in seen:
            raise invalid(f"manifestJson: selection id {selection.id!r} is used twice; give each selection its own id")
        seen.add(selection.id)
    for selection in selections:
        for dependency in selection.depends_on:
            if dependency == selection.id:
                raise invalid(f"manifestJson: {selection.describe()} depends on itself; remove it from dependsOn")
            if dependency not in seen:
                raise invalid(
                    f"manifestJson: {selection.describe()} depends on {dependency!r}, which is not a selection id; "
                    f"ids are {', '.join(sorted(seen))}"
                )
    return Manifest(selections, _dependency_order(selections))


def _selection(entry: dict[str, Any]) -> Selection:
    representation = entry["representation"]
    symbol = entry.get("symbol")
    raw_range = entry.get("range")
    label = f"selection {entry['id']!r}"
    if symbol is not None and representation == "index":
        raise invalid(
            f"manifestJson: {label} gives a symbol, which only outline and body take; "
            "drop it or change the representation"
        )
    if raw_range is not None and representation != "body":
        raise invalid(f"manifestJson: {label} gives a range, which only body takes; drop it or use representation body")
    if symbol is not None and raw_range is not None:
        raise invalid(f"manifestJson: {label} gives both symbol and range; choose one")
    line_range = None
    if raw_range is not None:
        start, end = raw_range["start"], raw_range["end"]
        if end < start:
            raise invalid(f"manifestJson: {label} has range start {start} after end {end}; give start <= end")
        line_range = (start, end)
    return Selection(
        id=entry["id"],
        path=entry["path"],
        representation=representation,
        required=entry.get("required", True),
        symbol=symbol,
        line_range=line_range,
        hash=entry.get("hash"),
        depends_on=tuple(entry.get("dependsOn", ())),
    )


def _dependency_order(selections: tuple[Selection, ...]) -> tuple[Selection, ...]:
    """Dependencies first, otherwise manifest order (a stable topological sort).

    Raises:
        BeeError: ``invalid_argument`` naming the cycle.
    """
    index = {s.id: s for s in selections}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    ordered: list[Selection] = []

    def visit(selection: Selection, path: list[str]) -> None:
        mark = state.get(selection.id)
        if mark == 2:
            return
        if mark == 1:
            cycle = [*path[path.index(selection.id) :], selection.id]
            raise BeeError(
                ErrorCode.INVALID_ARGUMENT,
                f"manifestJson: dependsOn forms a cycle ({' -> '.join(cycle)}); remove one of these dependencies",
                details={"cycle": cycle},
            )
        state[selection.id] = 1
        for dependency in selection.depends_on:
            visit(index[dependency], [*path, selection.id])
        state[selection.id] = 2
        ordered.append(selection)

    for selection in selections:
        visit(selection, [])
    return tuple(ordered)
