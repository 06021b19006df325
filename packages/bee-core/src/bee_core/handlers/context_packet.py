"""bee_context_packet: selected source from the checkout as one bounded packet."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_core.context import CoreContext
from bee_core.packet.items import measured_item
from bee_core.packet.manifest import parse_manifest
from bee_core.packet.pack import pack
from bee_hostkit import Budget, Call

if TYPE_CHECKING:
    from bee_contracts.shapes.core import ContextPacketArgs, ContextPacketItem, ContextPacketResult


def bee_context_packet(ctx: CoreContext, call: Call[ContextPacketArgs]) -> ContextPacketResult:
    """Build the packet for ``args["manifestJson"]`` within ``args["budgetBytes"]``.

    Every selection is read and checked before anything is packed, so a bad selection fails the call whatever
    the budget.

    Raises:
        BeeError: see :func:`~bee_core.packet.manifest.parse_manifest`, :func:`~bee_core.packet.items.build_item`
            and :func:`~bee_core.packet.pack.pack`; ``deadline_exceeded`` past 15 seconds.
    """
    args, deadline = call.args, call.deadline
    manifest = parse_manifest(args["manifestJson"])
    budget = Budget(args["budgetBytes"])
    items: dict[str, ContextPacketItem] = {}
    pieces: dict[str, int] = {}
    for selection in manifest.ordered:
        deadline.check(f"reading {selection.path}")
        items[selection.id], pieces[selection.id] = measured_item(ctx.files, selection, ctx.content, deadline)
    deadline.check("packing the result")
    return pack(manifest, items, budget, pieces)
