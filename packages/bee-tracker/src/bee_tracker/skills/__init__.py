"""The Skills extension (io.modelcontextprotocol/skills): the bundled engineering-backlog skill.

Files are read once from the package; the listing carries a complete manifest (every file with its sha256 digest
and size) and the frontmatter verbatim. ``skills/list``, ``skills/get`` and ``resources/read`` serve them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

__all__ = [
    "CACHE_SCOPE",
    "EXTENSION_ID",
    "SKILL_NAME",
    "SKILL_URI",
    "TTL_MS",
    "Skill",
    "SkillFile",
    "bundled",
    "find_file",
    "find_skill",
    "parse_frontmatter",
]

EXTENSION_ID = "io.modelcontextprotocol/skills"
SKILL_NAME = "beads-engineering-backlog"
SKILL_URI = f"skill://{SKILL_NAME}/SKILL.md"
#: Cache hints for 2026-07-28 connections: the skill is the same bytes for every caller.
TTL_MS = 300_000
CACHE_SCOPE = "public"


@dataclass(frozen=True)
class SkillFile:
    uri: str
    data: bytes

    @property
    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class Skill:
    name: str
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...]

    @property
    def uri(self) -> str:
        return f"skill://{self.name}/SKILL.md"

    def entry(self) -> dict[str, Any]:
        """The Skill entry of skills/list and skills/get: uri, frontmatter, complete resource manifest."""
        return {
            "uri": self.uri,
            "frontmatter": dict(self.frontmatter),
            "resources": [{"uri": f.uri, "digest": f.digest, "size": len(f.data)} for f in self.files],
        }


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The YAML frontmatter of a SKILL.md as a dict (flat ``key: value`` pairs, which is all this skill uses).

    Raises:
        ValueError: no frontmatter block, or a line that is not ``key: value``.
    """
    if not text.startswith("---\n"):
        raise ValueError("SKILL.md must start with a '---' frontmatter block")
    block, _, _ = text[4:].partition("\n---\n")
    data: dict[str, Any] = {}
    for line in block.splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"frontmatter line is not 'key: value': {line!r}")
        data[key.strip()] = value.strip()
    return data


@cache
def bundled() -> tuple[Skill, ...]:
    """The skills shipped with the tracker."""
    folder = resources.files("bee_tracker.skills").joinpath(SKILL_NAME)
    files = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.is_file():
            files.append(SkillFile(f"skill://{SKILL_NAME}/{entry.name}", entry.read_bytes()))
    skill_md = next(f for f in files if f.uri == SKILL_URI)
    frontmatter = parse_frontmatter(skill_md.data.decode("utf-8"))
    if frontmatter.get("name") != SKILL_NAME:
        raise ValueError("the skill's frontmatter name must equal its directory name")
    return (Skill(SKILL_NAME, frontmatter, tuple(files)),)


def find_file(uri: str) -> SkillFile | None:
    for skill in bundled():
        for skill_file in skill.files:
            if skill_file.uri == uri:
                return skill_file
    return None


def find_skill(uri: str) -> Skill | None:
    for skill in bundled():
        if skill.uri == uri:
            return skill
    return None
