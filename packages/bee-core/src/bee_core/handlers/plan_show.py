"""bee_plan_show: one plan of this checkout's space, with its steps, contracts and owner-reported states."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bee_core.collab import plans
from bee_core.collab.binding import Binding
from bee_core.collab.lease import run_live
from bee_core.collab.tracker import Tracker
from bee_core.context import CoreContext
from bee_hostkit import Call

if TYPE_CHECKING:
    from bee_contracts.shapes.core import PlanShowArgs, PlanShowResult


def bee_plan_show(ctx: CoreContext, call: Call[PlanShowArgs]) -> PlanShowResult:
    """Plan ``args["planId"]`` of the binding's space, read from the tracker after it confirms the binding is live.

    Raises:
        BeeError: ``binding_not_live`` (no binding, or its lease expired or was left); ``unauthorized`` (no token,
            or the tracker refused it); ``not_found`` for an unknown planId or one of another space;
            ``unavailable`` or ``busy`` (retryable) when the tracker cannot answer; ``deadline_exceeded``.
    """

    async def show(tracker: Tracker, binding: Binding, lease: dict[str, Any]) -> PlanShowResult:
        plan = await plans.read_plan(tracker, binding.space, call.args["planId"], now=lease["now"])
        return plans.shown(plan)

    return run_live(ctx.instance, call.deadline, show)
