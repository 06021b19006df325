"""What the skill bridge hands around: skills, their loaded bodies, listings, and the seam every provider fills.

A skill is named to agents by its **path**, ``<provider>/<skill-path>``: the name the instance gave the provider
in ``bee skill bridge add``, then the skill directory relative to the provider (``git-workflow``,
``acme/billing/refunds``). The provider part keeps skills of different origins apart, as the Skills extension
asks of hosts: two providers may both serve ``refunds``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from bee_contracts import BeeError, ErrorCode, invalid
from bee_contracts.limits import SKILL_BODY_MAX_BYTES
from bee_core.skills.frontmatter import Frontmatter

if TYPE_CHECKING:
    from bee_contracts.shapes.core import SkillGetResult
    from bee_hostkit import Deadline


@dataclass(frozen=True)
class Skill:
    """One skill a provider serves, as its listing (or its own SKILL.md) describes it."""

    provider: str
    skill_path: str
    about: Frontmatter
    #: MCP providers: the SKILL.md resource URI, the manifest (every file's URI and digest) and the SKILL.md's
    #: size in bytes as the manifest gives it (None when it gives none).
    uri: str = ""
    manifest: Mapping[str, str] = field(default_factory=dict)
    size: int | None = None

    @property
    def path(self) -> str:
        return f"{self.provider}/{self.skill_path}"

    def prerequisite_paths(self) -> list[str]:
        """The paths of the skills this one needs first (prerequisites name skills of the same provider)."""
        return [f"{self.provider}/{skill_path}" for skill_path in self.about.prerequisites]


def too_large(path: str, size: int) -> BeeError:
    """The error for a SKILL.md over the limit the skill tools serve."""
    return BeeError(
        ErrorCode.RESULT_TOO_LARGE,
        f"skill {path}: SKILL.md is {size} bytes, over the {SKILL_BODY_MAX_BYTES}-byte limit the skill tools "
        "serve; nothing was delivered (split the skill, moving detail into files it references)",
        details={"path": path, "bytes": size, "limitBytes": SKILL_BODY_MAX_BYTES},
    )


def text_of(path: str, data: bytes) -> str:
    """A SKILL.md's bytes as text.

    Raises:
        BeeError: ``invalid_argument`` when they are not UTF-8.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise invalid(
            f"skill {path}: SKILL.md is not UTF-8 text (byte {exc.start}); save it as UTF-8", path=path
        ) from None


@dataclass(frozen=True)
class Loaded:
    """A skill with its complete, verified SKILL.md."""

    skill: Skill
    data: bytes

    def __post_init__(self) -> None:
        if len(self.data) > SKILL_BODY_MAX_BYTES:
            raise too_large(self.skill.path, len(self.data))

    def text(self) -> str:
        """The body as text (the bytes were checked to be UTF-8 when the skill was read)."""
        return text_of(self.skill.path, self.data)

    def item(self) -> SkillGetResult:
        """The skill as bee_skill_get answers it (and as each entry of bee_skill_resolve)."""
        about = self.skill.about
        return {
            "path": self.skill.path,
            "name": about.name,
            "description": about.description,
            "provider": self.skill.provider,
            "prerequisites": self.skill.prerequisite_paths(),
            "body": self.text(),
            "sha256": "sha256:" + hashlib.sha256(self.data).hexdigest(),
            "bytes": len(self.data),
        }


@dataclass
class Listing:
    """Every skill a provider lists, and those it lists but Bee cannot serve (path, why)."""

    skills: list[Skill] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)


class SkillSource(Protocol):
    """A provider, open for the length of one tool call."""

    async def list(self) -> Listing:
        """Every skill the provider serves.

        Raises:
            BeeError: the provider cannot be read (``unavailable`` when it cannot be reached).
        """

    async def load(self, skill_path: str) -> Loaded:
        """The skill at ``skill_path`` with its verified body.

        Raises:
            BeeError: ``not_found`` for no such skill, ``hash_mismatch`` for content that fails its digest,
                ``invalid_argument`` for malformed frontmatter, ``outside_root`` for a path that leaves the skill.
        """


class Provider(Protocol):
    """A configured provider: what `bee skill bridge add` recorded, able to open a :class:`SkillSource`."""

    name: str

    def where(self) -> str:
        """Where the provider is, for people (a directory, a URL)."""

    def open(self, within: Deadline | float) -> AbstractAsyncContextManager[SkillSource]:
        """Open the provider; every provider call made through it ends within ``within``: the call's deadline
        (running out of it is ``deadline_exceeded``) or the provider's own timeout in seconds (``unavailable``).

        Raises:
            BeeError: the provider cannot be opened (``unavailable``, ``unauthorized``, ``unsupported``).
        """
