"""bee_skill_get: one skill's complete, verified SKILL.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_core.context import CoreContext
from bee_core.skills.bridge import Bridge, run
from bee_hostkit import Call

if TYPE_CHECKING:
    from bee_contracts.shapes.core import SkillGetArgs, SkillGetResult


def bee_skill_get(ctx: CoreContext, call: Call[SkillGetArgs]) -> SkillGetResult:
    """The skill at ``args["path"]`` (provider/skill-path); its prerequisites are named, not read.

    Raises:
        BeeError: ``bridge_not_configured``; ``invalid_argument`` for a path without a provider or a malformed
            SKILL.md frontmatter; ``not_found`` for an unknown provider or skill; ``outside_root`` for a path that
            leaves a skill directory; ``hash_mismatch`` when served content fails its manifest digest;
            ``result_too_large`` for a body over 256 KiB; ``unavailable`` when the provider cannot be reached.
    """
    bridge = Bridge.configured(ctx.instance)
    return run(bridge.get, call.args["path"], call.deadline)
