"""bee_design_slice: one element's files, mapped source and dependencies, within a byte budget."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_design.context import DesignContext
from bee_design.inventory import Inventory, split_id
from bee_design.slicing import build_slice
from bee_hostkit import Call

if TYPE_CHECKING:
    from bee_contracts.shapes.design import DesignSliceArgs, DesignSliceResult


def bee_design_slice(ctx: DesignContext, call: Call[DesignSliceArgs]) -> DesignSliceResult:
    """The slice of element ``args["id"]`` (``bundle:element``) within ``args["budgetBytes"]``.

    Raises:
        BeeError: ``not_found`` for an unknown bundle or element; ``hash_mismatch`` for stored bundle files or a
            manifest changed after import; ``budget_exceeded`` when not even the metadata fits.
    """
    args = call.args
    bundle, _ = split_id(args["id"])
    return build_slice(Inventory.load(ctx.files, bundle), args["id"], args["budgetBytes"])
