"""Packing items into one result under a byte budget, dependency-first, never partial.

Required selections (and everything they depend on) are all delivered or none is: when they do not fit, the
answer is ``needs_refinement`` with no content and the bytes each selection would add. Optional selections are
added in dependency order while they fit; one whose dependency was left out is left out too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from bee_core.packet.manifest import Manifest, Selection
from bee_hostkit import Budget, with_size
from bee_hostkit.budget import own_size
from bee_hostkit.results import list_bytes, piece_bytes, result_bytes

if TYPE_CHECKING:
    from bee_contracts.shapes.core import ContextPacketItem, ContextPacketOmittedItem, ContextPacketResult

PacketStatus = Literal["complete", "incomplete", "needs_refinement"]
OmissionReason = Literal["budget", "dependency_omitted"]

_SEPARATOR = 2  # one comma in structuredContent, one in the text copy


def _omission(selection: Selection, reason: OmissionReason, cost: int) -> ContextPacketOmittedItem:
    # Kept small on purpose: the caller has the manifest, and this listing must fit even the minimum budget.
    return {"id": selection.id, "required": selection.required, "reason": reason, "bytes": cost}


def _result(
    status: PacketStatus, budget: Budget, items: list[ContextPacketItem], omitted: list[ContextPacketOmittedItem]
) -> ContextPacketResult:
    return {
        "status": status,
        "complete": status == "complete",
        "budgetBytes": budget.limit,
        "resultBytes": 0,
        "items": items,
        "omitted": omitted,
    }


class _Sizes:
    """Exact result sizes counted from the pieces already measured: nothing assembled is serialized again.

    A result's size is its frame (the result with both lists empty and resultBytes 0, a few dozen bytes) plus
    what each list's entries add (:func:`~bee_hostkit.results.list_bytes`).
    """

    def __init__(self, budget: Budget, costs: Mapping[str, int]) -> None:
        self.budget = budget
        self.costs = costs  # an item's piece plus its separator: the bytes including it adds
        self._frames: dict[PacketStatus, int] = {}
        self._omissions: dict[tuple[str, OmissionReason], tuple[ContextPacketOmittedItem, int]] = {}

    def frame(self, status: PacketStatus) -> int:
        if status not in self._frames:
            self._frames[status] = result_bytes(_result(status, self.budget, [], []))
        return self._frames[status]

    def omission(self, selection: Selection, reason: OmissionReason) -> tuple[ContextPacketOmittedItem, int]:
        """The omission entry for ``selection`` and its piece size, made once per reason."""
        key = (selection.id, reason)
        if key not in self._omissions:
            entry = _omission(selection, reason, self.costs[selection.id])
            self._omissions[key] = (entry, piece_bytes(entry))
        return self._omissions[key]

    def at_zero(self, status: PacketStatus, delivered: list[str], omission_pieces: list[int]) -> int:
        """The size of the result with these entries while its resultBytes is 0."""
        items = list_bytes(self.costs[sid] - _SEPARATOR for sid in delivered)
        return self.frame(status) + items + list_bytes(omission_pieces)


def pack(
    manifest: Manifest,
    items: dict[str, ContextPacketItem],
    budget: Budget,
    pieces: Mapping[str, int] | None = None,
) -> ContextPacketResult:
    """The packet result for ``items`` (keyed by selection id) under ``budget``.

    ``pieces`` holds each item's :func:`~bee_hostkit.results.piece_bytes` when the caller measured them while
    building the items; missing ones are measured here. Sizes are then counted, not re-serialized, and exact.

    Raises:
        BeeError: ``budget_exceeded`` when even the needs_refinement listing does not fit.
    """
    known = pieces or {}
    costs = {sid: (known[sid] if sid in known else piece_bytes(item)) + _SEPARATOR for sid, item in items.items()}
    sizes = _Sizes(budget, costs)
    needed = manifest.needed_ids()
    ordered = manifest.ordered

    chosen = [s for s in ordered if s.id in needed]
    optional = [s for s in ordered if s.id not in needed]
    smallest = own_size(
        sizes.at_zero(
            "incomplete" if optional else "complete",
            [s.id for s in chosen],
            [sizes.omission(s, "budget")[1] for s in optional],
        )
    )
    if smallest > budget.limit:
        return _needs_refinement(manifest, sizes, smallest)

    included = {s.id for s in chosen}
    size = smallest
    for selection in optional:
        if not all(dep in included for dep in selection.depends_on):
            continue
        # Including it adds the item and drops its omission entry.
        delta = costs[selection.id] - (sizes.omission(selection, "budget")[1] + _SEPARATOR)
        if size + delta + 8 <= budget.limit:  # 8: room for resultBytes to grow a few digits
            included.add(selection.id)
            size += delta

    while True:
        result = _assemble(ordered, items, sizes, included)
        if result["resultBytes"] <= budget.limit:
            return result
        # The estimate was off by a few bytes: give back the last optional item and count again.
        last_optional = [s.id for s in ordered if s.id in included and s.id not in needed][-1]
        included.discard(last_optional)


def _assemble(
    ordered: tuple[Selection, ...],
    items: dict[str, ContextPacketItem],
    sizes: _Sizes,
    included: set[str],
) -> ContextPacketResult:
    delivered: list[ContextPacketItem] = []
    omitted: list[ContextPacketOmittedItem] = []
    omission_pieces: list[int] = []
    present: list[str] = []  # in delivery order, for counting
    for selection in ordered:
        if selection.id in included and all(dep in present for dep in selection.depends_on):
            delivered.append(items[selection.id])
            present.append(selection.id)
        else:
            dropped_dependency = any(dep not in present for dep in selection.depends_on)
            reason: OmissionReason = "dependency_omitted" if dropped_dependency else "budget"
            entry, piece = sizes.omission(selection, reason)
            omitted.append(entry)
            omission_pieces.append(piece)
    status: PacketStatus = "complete" if not omitted else "incomplete"
    result = _result(status, sizes.budget, delivered, omitted)
    return with_size(result, size_at_zero=sizes.at_zero(status, present, omission_pieces))


def _needs_refinement(manifest: Manifest, sizes: _Sizes, smallest: int) -> ContextPacketResult:
    budget = sizes.budget
    omitted = []
    pieces = []
    for selection in manifest.ordered:
        entry, piece = sizes.omission(selection, "dependency_omitted" if selection.depends_on else "budget")
        omitted.append(entry)
        pieces.append(piece)
    result = _result("needs_refinement", budget, [], [])
    result["overByBytes"] = smallest - budget.limit
    frame = result_bytes(result)
    result["omitted"] = omitted
    with_size(result, size_at_zero=frame + list_bytes(pieces))
    if result["resultBytes"] > budget.limit:
        raise budget.exceeded(
            result["resultBytes"],
            what="even the needs_refinement listing of the selections",
            hint="Raise budgetBytes or send fewer selections",
        )
    return result
