"""bee_plan_next: the ready contracts of a plan, bounded by limit, with counts of what was left out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bee_core.collab import plans
from bee_core.collab.binding import Binding
from bee_core.collab.lease import run_live
from bee_core.collab.tracker import Tracker
from bee_core.context import CoreContext
from bee_hostkit import Call

if TYPE_CHECKING:
    from bee_contracts.shapes.core import PlanNextArgs, PlanNextResult


def bee_plan_next(ctx: CoreContext, call: Call[PlanNextArgs]) -> PlanNextResult:
    """At most ``args["limit"]`` ready steps of plan ``args["planId"]``, in plan order; claims nothing.

    Raises:
        BeeError: as :func:`bee_core.handlers.plan_show.bee_plan_show`.
    """

    async def ready(tracker: Tracker, binding: Binding, lease: dict[str, Any]) -> PlanNextResult:
        plan = await plans.read_plan(tracker, binding.space, call.args["planId"], now=lease["now"])
        return plans.next_steps(plan, call.args["limit"])

    return run_live(ctx.instance, call.deadline, ready)
