"""Packing items into one result under a byte budget, dependency-first, never partial.

Required selections (and everything they depend on) are all delivered or none is: when they do not fit, the
answer is ``needs_refinement`` with no content and the bytes each selection would add. Optional selections are
added in dependency order while they fit; one whose dependency was left out is left out too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from bee_core.packet.manifest import Manifest, Selection
from bee_hostkit import Budget, with_size
from bee_hostkit.results import piece_bytes

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


def pack(manifest: Manifest, items: dict[str, ContextPacketItem], budget: Budget) -> ContextPacketResult:
    """The packet result for ``items`` (keyed by selection id) under ``budget``.

    Raises:
        BeeError: ``budget_exceeded`` when even the needs_refinement listing does not fit.
    """
    needed = manifest.needed_ids()
    costs = {sid: piece_bytes(item) + _SEPARATOR for sid, item in items.items()}
    ordered = manifest.ordered

    chosen = [s for s in ordered if s.id in needed]
    optional = [s for s in ordered if s.id not in needed]
    smallest = with_size(
        _result(
            "incomplete" if optional else "complete",
            budget,
            [items[s.id] for s in chosen],
            [_omission(s, "budget", costs[s.id]) for s in optional],
        )
    )
    if smallest["resultBytes"] > budget.limit:
        return _needs_refinement(manifest, costs, budget, smallest["resultBytes"])

    included = {s.id for s in chosen}
    size = smallest["resultBytes"]
    for selection in optional:
        if not all(dep in included for dep in selection.depends_on):
            continue
        # Including it adds the item and drops its omission entry.
        delta = costs[selection.id] - (piece_bytes(_omission(selection, "budget", costs[selection.id])) + _SEPARATOR)
        if size + delta + 8 <= budget.limit:  # 8: room for resultBytes to grow a few digits
            included.add(selection.id)
            size += delta

    while True:
        result = _assemble(ordered, items, costs, included, budget)
        if result["resultBytes"] <= budget.limit:
            return result
        # The estimate was off by a few bytes: give back the last optional item and measure again.
        last_optional = [s.id for s in ordered if s.id in included and s.id not in needed][-1]
        included.discard(last_optional)


def _assemble(
    ordered: tuple[Selection, ...],
    items: dict[str, ContextPacketItem],
    costs: dict[str, int],
    included: set[str],
    budget: Budget,
) -> ContextPacketResult:
    delivered: list[ContextPacketItem] = []
    omitted: list[ContextPacketOmittedItem] = []
    present: set[str] = set()
    for selection in ordered:
        if selection.id in included and all(dep in present for dep in selection.depends_on):
            delivered.append(items[selection.id])
            present.add(selection.id)
        else:
            dropped_dependency = any(dep not in present for dep in selection.depends_on)
            reason: OmissionReason = "dependency_omitted" if dropped_dependency else "budget"
            omitted.append(_omission(selection, reason, costs[selection.id]))
    status: PacketStatus = "complete" if not omitted else "incomplete"
    return with_size(_result(status, budget, delivered, omitted))


def _needs_refinement(manifest: Manifest, costs: dict[str, int], budget: Budget, smallest: int) -> ContextPacketResult:
    omitted = [
        _omission(selection, "dependency_omitted" if selection.depends_on else "budget", costs[selection.id])
        for selection in manifest.ordered
    ]
    result = _result("needs_refinement", budget, [], omitted)
    result["overByBytes"] = smallest - budget.limit
    with_size(result)
    if result["resultBytes"] > budget.limit:
        raise budget.exceeded(
            result["resultBytes"],
            what="even the needs_refinement listing of the selections",
            hint="Raise budgetBytes or send fewer selections",
        )
    return result
