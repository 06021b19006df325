"""bee_skill_search: skills from every configured provider, ranked against a query."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_core.context import CoreContext
from bee_core.skills.bridge import Bridge, run
from bee_hostkit import Call

if TYPE_CHECKING:
    from bee_contracts.shapes.core import SkillSearchArgs, SkillSearchResult


def bee_skill_search(ctx: CoreContext, call: Call[SkillSearchArgs]) -> SkillSearchResult:
    """The best ``args["limit"]`` matches for ``args["query"]`` across the bridge's providers.

    Raises:
        BeeError: ``bridge_not_configured``; ``invalid_argument`` for a query without words to search by;
            ``unavailable`` (retryable) when a provider cannot be reached, ``unauthorized``/``forbidden`` when it
            refuses the token, ``unsupported`` when it serves no skills.
    """
    bridge = Bridge.configured(ctx.instance)
    return run(bridge.search, call.args["query"], call.args["limit"], call.deadline)
