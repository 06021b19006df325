"""A SKILL.md's YAML frontmatter: parsed safely, checked against the Agent Skills rules Bee relies on.

A SKILL.md starts with a ``---`` line, then YAML, then another ``---`` line. The YAML is read with PyYAML's safe
loader (plain data only, never objects), with aliases refused — an alias is how a few bytes of YAML become an
exponentially large value — and the result must be JSON data: it is compared with, and served as, the JSON
frontmatter of MCP skill listings. Dates become ISO strings, as JSON would carry them.

Bee reads three fields: ``name`` (1–64 lower-case letters, digits and single hyphens, equal to the skill
directory's name), ``description`` (1–1024 characters) and Bee's own ``prerequisites``: the skills to read first,
as skill paths within the same provider (a string or a list of strings).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Any

import yaml

from bee_contracts import BeeError, ErrorCode, invalid

#: Largest frontmatter block read, in characters; Agent Skills frontmatter is a few short fields.
MAX_FRONTMATTER_CHARS = 64 * 1024

NAME_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_NAME = 64
MAX_DESCRIPTION = 1024

#: Characters a skill-path segment may hold (the Agent Skills name rules, plus the dots and underscores that
#: organisational prefixes use).
_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class _NoAliasLoader(yaml.SafeLoader):
    """The safe loader, refusing aliases (``*anchor``), which can expand a small text into a huge value."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]  # the stubs leave events untyped
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed", mark)
        return super().compose_node(parent, index)


@dataclass(frozen=True)
class Frontmatter:
    """What Bee reads from a skill's frontmatter, and the whole frontmatter as JSON data."""

    name: str
    description: str
    #: Skill paths within the same provider, as declared.
    prerequisites: tuple[str, ...]
    fields: dict[str, Any]


def malformed(path: str, problem: str) -> BeeError:
    """The error for a skill whose frontmatter cannot be used (the message says what to fix)."""
    return invalid(
        f"skill {path}: the SKILL.md frontmatter {problem}; fix the file (it needs name and description, "
        "and may list prerequisites)",
        path=path,
    )


def escaping(path: str, reference: str, why: str) -> BeeError:
    """The error for a skill path (an argument or a declared prerequisite) that leaves the provider's skills."""
    return BeeError(
        ErrorCode.OUTSIDE_ROOT,
        f"skill path {reference!r} {why}; name a skill directory inside the provider, like git-workflow or "
        "team/release-notes",
        details={"path": path},
    )


def check_skill_path(path: str, skill_path: str) -> str:
    """``skill_path`` (a skill directory relative to its provider) when every segment stays inside the provider.

    Raises:
        BeeError: ``outside_root`` for ``..``, ``.``, empty or absolute segments, backslashes or other characters
            a directory name in a skill path may not hold.
    """
    if not skill_path:
        raise escaping(path, skill_path, "is empty")
    for segment in skill_path.split("/"):
        if segment in ("", ".", ".."):
            why = "climbs out with '..'" if segment == ".." else "has an empty or '.' segment (or is absolute)"
            raise escaping(path, skill_path, why)
        if not _SEGMENT.fullmatch(segment):
            raise escaping(path, skill_path, f"has the segment {segment!r}; use letters, digits, '.', '_' and '-'")
    return skill_path


def block(text: str) -> str:
    """The frontmatter block of a SKILL.md: the lines between its opening and closing ``---``.

    Raises:
        ValueError: no frontmatter block, or one that is too long or never closed.
    """
    lines = text.removeprefix("\ufeff").split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        raise ValueError("is missing: SKILL.md must start with a '---' line")
    size = 0
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r") == "---":
            return "\n".join(lines[1:index])
        size += len(lines[index]) + 1
        if size > MAX_FRONTMATTER_CHARS:
            break
    raise ValueError(f"is not closed by a '---' line within {MAX_FRONTMATTER_CHARS} characters")


def load(yaml_text: str) -> dict[str, Any]:
    """The YAML ``yaml_text`` (a frontmatter block) as a JSON object.

    Raises:
        ValueError: not YAML, an alias, a value JSON cannot carry, or not a mapping.
    """
    try:
        value = yaml.load(yaml_text, Loader=_NoAliasLoader)  # noqa: S506  # a SafeLoader subclass: plain data only
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
        mark = getattr(exc, "problem_mark", None)
        where = f" on line {mark.line + 2} of SKILL.md" if mark is not None else ""  # +1 for '---', +1 1-based
        raise ValueError(f"is not valid YAML ({problem}{where})") from None
    except RecursionError:
        raise ValueError("nests too deeply") from None
    if not isinstance(value, dict):
        raise ValueError("is not a mapping of fields")
    data = _jsonable(value, "")
    assert isinstance(data, dict)
    return data


def _jsonable(value: Any, where: str) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"has the non-text key {key!r}{where and f' in {where}'}")
            out[key] = _jsonable(item, f"{where}.{key}" if where else key)
        return out
    if isinstance(value, list):
        return [_jsonable(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, datetime.date):  # datetime too: YAML timestamps, carried as JSON text
        return value.isoformat()
    if value is None or isinstance(value, str | bool | int | float):
        return value
    raise ValueError(f"holds a {type(value).__name__} at {where}, which JSON cannot carry")


def read(path: str, fields: Any, skill_path: str) -> Frontmatter:
    """Check ``fields`` (a frontmatter as JSON data) for the skill at ``path`` whose directory is ``skill_path``.

    Raises:
        BeeError: ``invalid_argument`` when a field Bee reads is missing or malformed, or ``name`` is not the
            skill directory's name; ``outside_root`` when a prerequisite leaves the provider.
    """
    if not isinstance(fields, dict):
        raise malformed(path, "is not a mapping of fields")
    name, description = fields.get("name"), fields.get("description")
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name) or len(name) > MAX_NAME:
        raise malformed(
            path, f"has name {name!r}; it must be 1-{MAX_NAME} lower-case letters, digits and single hyphens"
        )
    if name != skill_path.rsplit("/", 1)[-1]:
        raise malformed(path, f"has name {name!r}, which is not the name of its directory")
    if not isinstance(description, str) or not description.strip() or len(description) > MAX_DESCRIPTION:
        raise malformed(path, f"needs a description of 1-{MAX_DESCRIPTION} characters")
    declared = fields.get("prerequisites", [])
    if isinstance(declared, str):
        declared = [declared]
    if not isinstance(declared, list) or not all(isinstance(item, str) for item in declared):
        raise malformed(path, "has prerequisites that are not a skill path or a list of them")
    prerequisites = tuple(dict.fromkeys(check_skill_path(path, item.strip().strip("/")) for item in declared))
    return Frontmatter(name, description, prerequisites, fields)


def parse(path: str, text: str, skill_path: str) -> Frontmatter:
    """The frontmatter of the SKILL.md ``text`` of the skill at ``path``.

    Raises:
        BeeError: as :func:`read`, and ``invalid_argument`` when there is no well-formed YAML block.
    """
    try:
        fields = load(block(text))
    except ValueError as exc:
        raise malformed(path, str(exc)) from None
    return read(path, fields, skill_path)
