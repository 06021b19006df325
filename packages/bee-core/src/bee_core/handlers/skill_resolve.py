"""bee_skill_resolve: a skill and all its prerequisites, dependencies first, every body complete."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_core.context import CoreContext
from bee_core.skills.bridge import Bridge, run
from bee_hostkit import Call

if TYPE_CHECKING:
    from bee_contracts.shapes.core import SkillResolveArgs, SkillResolveResult


def bee_skill_resolve(ctx: CoreContext, call: Call[SkillResolveArgs]) -> SkillResolveResult:
    """The chain of ``args["path"]``: every prerequisite before the skills that need it, the skill itself last.

    Raises:
        BeeError: as bee_skill_get for any skill of the chain, plus ``not_found`` for a missing prerequisite and
            ``invalid_argument`` for a cycle or a chain over 32 skills; nothing partial is ever returned.
    """
    bridge = Bridge.configured(ctx.instance)
    return run(bridge.resolve, call.args["path"], call.deadline)
