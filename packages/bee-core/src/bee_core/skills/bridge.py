"""The skill bridge: the instance's configured providers, searched, read and resolved for the three skill tools.

The configuration is read on every call, so `bee skill bridge add|remove` takes effect without restarting the
host. Provider calls are network I/O on their own event loop (:func:`run`), each bounded by the provider timeout
and by what is left of the tool call's deadline.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import anyio

from bee_contracts import BeeError, ErrorCode, invalid
from bee_contracts.limits import MAX_RESULT_BYTES, SKILL_CHAIN_MAX
from bee_core import trust
from bee_core.instance import Instance
from bee_core.skills import frontmatter
from bee_core.skills.config import BridgeConfigError, DirectoryConfig, ProviderConfig, damaged, load_bridge
from bee_core.skills.model import Loaded, Provider, SkillSource
from bee_hostkit import Deadline, ranking
from bee_hostkit.environ import getenv

if TYPE_CHECKING:
    from bee_contracts.shapes.core import (
        SkillGetResult,
        SkillResolveResult,
        SkillSearchMatch,
        SkillSearchResult,
        SkillSearchUnreadableItem,
    )

#: Longest a provider gets to answer one tool call's requests, in seconds (also bounded by the call's deadline).
PROVIDER_TIMEOUT_SECONDS = 10.0
#: Overrides :data:`PROVIDER_TIMEOUT_SECONDS` (an operations knob; tests use it to provoke a silent provider).
ENV_PROVIDER_TIMEOUT = "BEE_SKILL_PROVIDER_TIMEOUT_SECONDS"

T = TypeVar("T")


def run(function: Callable[..., Awaitable[T]], *args: object) -> T:
    """Run an async bridge operation to completion from synchronous code (a handler thread or a CLI command)."""
    return anyio.run(function, *args)


def make_provider(config: ProviderConfig) -> Provider:
    """The provider a configuration entry describes (its client library is imported only when one is used)."""
    if isinstance(config, DirectoryConfig):
        from bee_core.skills.local import DirectoryProvider

        return DirectoryProvider(config)
    from bee_core.skills.remote import McpProvider

    return McpProvider(config)


def not_configured(instance: Instance) -> BeeError:
    """``bridge_not_configured``, saying how to add a provider, and what the checkout ships that Bee ignores."""
    first = "" if instance.exists else f"there is no Bee instance at {instance.root}: run `bee init`, then "
    details: dict[str, str] = {"command": "bee skill bridge add"}
    ships = trust.find(instance, trust.BRIDGE)
    if ships is not None:
        details |= {"shipped": str(ships.path), "adopt": trust.BRIDGE.command}
    return BeeError(
        ErrorCode.BRIDGE_NOT_CONFIGURED,
        f"no skill bridge is configured for this checkout; {first}add a provider with `bee skill bridge add NAME "
        "--dir PATH` (a local Agent Skills directory) or `bee skill bridge add NAME --mcp URL --token-env VAR` "
        f"(an MCP skill server, such as a Bee tracker){'; ' + ships.note() if ships else ''}",
        details=details,
    )


class Bridge:
    """The providers of one instance, in the order they were added."""

    def __init__(self, providers: list[Provider], timeout: float = PROVIDER_TIMEOUT_SECONDS) -> None:
        self.providers = {provider.name: provider for provider in providers}
        self.timeout = timeout

    @classmethod
    def configured(cls, instance: Instance) -> Bridge:
        """The bridge of ``instance``, as configured now.

        Raises:
            BeeError: ``bridge_not_configured`` when no provider is configured (one the checkout ships does not
                count); ``internal`` (not retryable) when the configuration file is damaged; ``forbidden`` when it
                or its folder is not private to the user.
        """
        try:
            configs = load_bridge(instance)
        except BridgeConfigError as exc:
            raise damaged(exc) from None
        if not configs:
            raise not_configured(instance)
        timeout = float(getenv(ENV_PROVIDER_TIMEOUT) or PROVIDER_TIMEOUT_SECONDS)
        return cls([make_provider(config) for config in configs], timeout)

    def _budget(self, deadline: Deadline) -> Deadline | float:
        """What bounds the next provider session: its own timeout, or the call's deadline when that is nearer (so
        that running out of it is ``deadline_exceeded``, not the provider's ``unavailable``)."""
        deadline.check("asking the skill providers")
        return deadline if deadline.remaining < self.timeout else self.timeout

    def split(self, path: str) -> tuple[Provider, str]:
        """The provider and skill path of ``provider/skill-path``.

        Raises:
            BeeError: ``invalid_argument`` without a provider part, ``not_found`` for an unknown provider,
                ``outside_root`` for a skill path that leaves the provider.
        """
        name, slash, skill_path = path.strip().partition("/")
        if not slash or not name:
            raise invalid(
                f"skill path {path!r} names no provider; give provider/skill-path as bee_skill_search returns it "
                f"(providers here: {', '.join(self.providers)})",
                path=path,
            )
        provider = self.providers.get(name)
        if provider is None:
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"no skill provider {name!r} is configured; skill paths start with one of: {', '.join(self.providers)}",
                details={"path": path},
            )
        skill_path = skill_path.removesuffix("/SKILL.md").removesuffix("/")
        return provider, frontmatter.check_skill_path(path, skill_path)

    async def search(self, query: str, limit: int, deadline: Deadline) -> SkillSearchResult:
        """Every provider's skills ranked against ``query``: the best ``limit``, the total and the unreadable."""
        words = ranking.query_words(query)
        if not words:
            raise invalid(f"query {query!r} has no words to search by; describe the task, like 'release notes'")
        matches: list[SkillSearchMatch] = []
        unreadable: list[SkillSearchUnreadableItem] = []
        for provider in self.providers.values():
            async with provider.open(self._budget(deadline)) as source:
                listing = await source.list()
            unreadable += [{"path": path, "error": error} for path, error in listing.unreadable]
            for skill in listing.skills:
                fields = [(skill.about.name, 1.0), (skill.skill_path, 1.0), (skill.about.description, 0.6)]
                score = ranking.score(words, fields)
                if score:
                    matches.append(
                        {
                            "path": skill.path,
                            "name": skill.about.name,
                            "description": skill.about.description,
                            "provider": skill.provider,
                            "score": score,
                        }
                    )
        matches.sort(key=lambda match: (-match["score"], match["path"]))
        return {"matches": matches[:limit], "total": len(matches), "unreadable": unreadable}

    async def get(self, path: str, deadline: Deadline) -> SkillGetResult:
        """One skill's complete, verified body; its prerequisites are named, not read."""
        provider, skill_path = self.split(path)
        async with provider.open(self._budget(deadline)) as source:
            loaded = await source.load(skill_path)
        return loaded.item()

    async def resolve(self, path: str, deadline: Deadline) -> SkillResolveResult:
        """The skill at ``path`` and its prerequisites, transitively, dependencies first, every body complete.

        Raises:
            BeeError: ``not_found`` for a missing prerequisite (naming the skill that declares it),
                ``invalid_argument`` for a cycle (spelled out) or a chain of more than :data:`SKILL_CHAIN_MAX`
                skills, ``result_too_large`` when the bodies cannot fit one result, and whatever reading a skill
                raises.
        """
        provider, skill_path = self.split(path)
        async with provider.open(self._budget(deadline)) as source:
            chain = await _Chain(source, provider.name, deadline).walk(skill_path)
        return {"path": chain[-1].skill.path, "skills": [loaded.item() for loaded in chain]}


class _Chain:
    """A depth-first walk of prerequisites that lists each skill after everything it needs."""

    def __init__(self, source: SkillSource, provider: str, deadline: Deadline) -> None:
        self.source = source
        self.provider = provider
        self.deadline = deadline
        self.order: list[Loaded] = []
        self.done: set[str] = set()
        self.total_bytes = 0

    async def walk(self, root: str) -> list[Loaded]:
        await self._visit(root, [])
        return self.order

    async def _visit(self, skill_path: str, trail: list[str]) -> None:
        if skill_path in trail:
            cycle = " -> ".join(f"{self.provider}/{step}" for step in [*trail[trail.index(skill_path) :], skill_path])
            raise invalid(
                f"the prerequisites of {self.provider}/{trail[0]} form a cycle: {cycle}; remove one of them",
                cycle=cycle,
            )
        if skill_path in self.done:
            return
        if len(self.done) + len(trail) >= SKILL_CHAIN_MAX:
            raise invalid(
                f"the prerequisites of {self.provider}/{trail[0]} go beyond {SKILL_CHAIN_MAX} skills; "
                "a chain that long cannot be read whole",
                path=f"{self.provider}/{trail[0]}",
            )
        self.deadline.check("reading skill prerequisites")
        try:
            loaded = await self.source.load(skill_path)
        except BeeError as exc:
            if exc.code is not ErrorCode.NOT_FOUND or not trail:
                raise
            needed_by = f"{self.provider}/{trail[-1]}"
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"skill {needed_by} declares the prerequisite {skill_path!r}, which provider {self.provider!r} "
                "does not serve; fix the skill's prerequisites",
                details={"path": needed_by, "prerequisite": f"{self.provider}/{skill_path}"},
            ) from None
        self.total_bytes += len(loaded.data)
        if self.total_bytes > MAX_RESULT_BYTES:
            # The result carries every body twice (structured and as text): past this it can never fit.
            root = f"{self.provider}/{trail[0] if trail else skill_path}"
            raise BeeError(
                ErrorCode.RESULT_TOO_LARGE,
                f"the bodies of {root} and its prerequisites come to over {MAX_RESULT_BYTES} bytes, more than "
                "one result can carry; nothing partial was delivered (read them one by one with bee_skill_get)",
                details={"path": root, "limitBytes": MAX_RESULT_BYTES},
            )
        for prerequisite in loaded.skill.about.prerequisites:
            await self._visit(prerequisite, [*trail, skill_path])
        self.done.add(skill_path)
        self.order.append(loaded)
