"""A local Agent Skills directory as a skill provider.

Each directory below the provider's root that holds a ``SKILL.md`` is a skill; its skill path is the directory
relative to the root (``git-workflow``, ``team/release-notes``). The listing walks real directories only — it
never follows a symlinked directory, and skips hidden ones (``.git``, ``.bee``) — to at most :data:`MAX_DEPTH`
levels and :data:`MAX_SKILLS` skills.

Every read goes through :class:`~bee_hostkit.ConfinedRoot`: the skill directory is opened from the provider's root
without following a symlink out of it, and its ``SKILL.md`` is then opened confined to the skill directory itself,
so a ``SKILL.md`` that is a symlink to another skill's file (or anywhere else) is refused.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from bee_contracts import BeeError, ErrorCode
from bee_contracts.limits import SKILL_BODY_MAX_BYTES
from bee_core.skills import frontmatter
from bee_core.skills.config import DirectoryConfig
from bee_core.skills.model import Listing, Loaded, Skill, SkillSource, text_of, too_large
from bee_hostkit import ConfinedRoot, Deadline

SKILL_FILE = "SKILL.md"

#: How deep below the root skills are looked for, and how many are listed.
MAX_DEPTH = 6
MAX_SKILLS = 1000


def skill_directories(root: Path) -> tuple[list[str], bool]:
    """The skill paths below ``root`` in path order, and whether the listing stopped at :data:`MAX_SKILLS`."""
    found: list[str] = []
    pending: list[tuple[str, int]] = [("", 0)]
    while pending:
        relative, depth = pending.pop()
        try:
            with os.scandir(root / relative) as scan:
                entries = sorted(scan, key=lambda entry: entry.name, reverse=True)
        except OSError:
            continue  # vanished or unreadable meanwhile: it holds no skill we could read
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
                continue
            child = f"{relative}/{entry.name}" if relative else entry.name
            if os.path.lexists(os.path.join(entry.path, SKILL_FILE)):
                found.append(child)
                if len(found) >= MAX_SKILLS:
                    return sorted(found), True
            if depth + 1 < MAX_DEPTH:
                pending.append((child, depth + 1))
    return sorted(found), False


class DirectorySource:
    """One open directory provider."""

    def __init__(self, name: str, root: ConfinedRoot) -> None:
        self.name = name
        self.root = root

    async def list(self) -> Listing:
        listing = Listing()
        paths, stopped = skill_directories(self.root.path)
        for skill_path in paths:
            try:
                listing.skills.append((await self.load(skill_path)).skill)
            except BeeError as exc:
                listing.unreadable.append((f"{self.name}/{skill_path}", exc.message))
        if stopped:
            listing.unreadable.append(
                (f"{self.name}/", f"the listing stopped at {MAX_SKILLS} skills; split the directory into providers")
            )
        return listing

    async def load(self, skill_path: str) -> Loaded:
        path = f"{self.name}/{skill_path}"
        frontmatter.check_skill_path(path, skill_path)
        try:
            directory = self.root.directory(skill_path)
            try:
                with directory.open(SKILL_FILE) as opened:
                    if opened.size > SKILL_BODY_MAX_BYTES:
                        raise too_large(path, opened.size)
                    data = opened.read()
            finally:
                directory.close()
        except BeeError as exc:
            raise self._mapped(path, exc) from None
        about = frontmatter.parse(path, text_of(path, data), skill_path)
        return Loaded(Skill(self.name, skill_path, about), data)

    def _mapped(self, path: str, exc: BeeError) -> BeeError:
        """Confinement errors in the words of skills (they are worded for a checkout)."""
        if exc.code is ErrorCode.NOT_FOUND:
            return BeeError(
                ErrorCode.NOT_FOUND,
                f"no skill {path}: provider {self.name!r} has no {path.partition('/')[2]}/{SKILL_FILE}; "
                "bee_skill_search lists the skills there are",
                details={"path": path},
            )
        if exc.code is ErrorCode.OUTSIDE_ROOT:
            return BeeError(
                ErrorCode.OUTSIDE_ROOT,
                f"skill {path}: its directory or {SKILL_FILE} leads out of the skill directory (through a symlink "
                "or to Bee's own state); skills are read only from inside their own directory",
                details={"path": path},
            )
        return exc


class DirectoryProvider:
    """A configured local skills directory."""

    def __init__(self, config: DirectoryConfig) -> None:
        self.name = config.name
        self.path = config.path

    def where(self) -> str:
        return self.path

    @asynccontextmanager
    async def open(self, within: Deadline | float) -> AsyncIterator[SkillSource]:
        del within  # local reads are bounded by the skill limits, not by a network wait
        try:
            root = ConfinedRoot(Path(self.path))
        except OSError as exc:
            raise BeeError(
                ErrorCode.UNAVAILABLE,
                f"skill provider {self.name!r}: its directory {self.path} cannot be opened ({exc.strerror}); "
                f"restore it, or replace the provider with `bee skill bridge remove {self.name}` and add it again",
                details={"provider": self.name},
                retryable=False,
            ) from None
        try:
            yield DirectorySource(self.name, root)
        finally:
            root.close()
