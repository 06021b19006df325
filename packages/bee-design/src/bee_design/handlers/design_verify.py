"""bee_design_verify: integrity of manifests, stored files, the dependency graph, mappings and visual specs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_design.context import DesignContext
from bee_design.verify import verify
from bee_hostkit import Call

if TYPE_CHECKING:
    from bee_contracts.shapes.design import DesignVerifyArgs, DesignVerifyResult


def bee_design_verify(ctx: DesignContext, call: Call[DesignVerifyArgs]) -> DesignVerifyResult:
    """Every integrity failure under the root (of ``args["bundle"]`` alone, when given).

    Raises:
        BeeError: ``not_found`` for an unknown bundle; every other failure is reported in the result.
    """
    return verify(ctx.files, call.args.get("bundle"))
