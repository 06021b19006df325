"""Skill directories and checkouts with a configured bridge, for the skill tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bee_contracts import BeeError
from bee_core.context import CoreContext
from bee_core.handlers.skill_get import bee_skill_get
from bee_core.handlers.skill_resolve import bee_skill_resolve
from bee_core.handlers.skill_search import bee_skill_search
from bee_core.instance import Instance
from bee_core.skills.config import DirectoryConfig, McpConfig, save_bridge
from bee_hostkit import Call, Deadline

HANDLERS: dict[str, Callable[[CoreContext, Call[Any]], Any]] = {
    "search": bee_skill_search,
    "get": bee_skill_get,
    "resolve": bee_skill_resolve,
}


def skill_md(name: str, description: str = "", *, prerequisites: list[str] | None = None, body: str = "") -> str:
    """A SKILL.md with the given frontmatter (prerequisites as a YAML flow list) and body."""
    lines = ["---", f"name: {name}", f"description: {description or f'How to {name}.'}"]
    if prerequisites is not None:
        lines.append(f"prerequisites: [{', '.join(prerequisites)}]")
    return "\n".join([*lines, "---", f"# {name}", body or f"Steps for {name}.", ""])


def write_skill(root: Path, skill_path: str, text: str | bytes) -> Path:
    """Write ``root/skill_path/SKILL.md``."""
    directory = root / skill_path
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "SKILL.md"
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text, encoding="utf-8")
    return target


def bridged_checkout(tmp_path: Path, *providers: DirectoryConfig | McpConfig) -> CoreContext:
    """A checkout with an initialised instance whose bridge lists ``providers``."""
    checkout = tmp_path / "checkout"
    checkout.mkdir(exist_ok=True)
    instance = Instance.select(checkout)
    instance.init()
    if providers:
        save_bridge(instance, list(providers))
    return CoreContext.open(checkout)


def call(ctx: CoreContext, tool: str, **args: Any) -> Any:
    """Run the handler of ``bee_skill_<tool>`` in process, with the schema's defaults filled in."""
    if tool == "search":
        args.setdefault("limit", 5)
    return HANDLERS[tool](ctx, Call(f"bee_skill_{tool}", args, Deadline(30)))


def failure(ctx: CoreContext, tool: str, **args: Any) -> BeeError:
    """The BeeError ``bee_skill_<tool>`` raises."""
    try:
        call(ctx, tool, **args)
    except BeeError as exc:
        return exc
    raise AssertionError(f"bee_skill_{tool}({args}) did not fail")
