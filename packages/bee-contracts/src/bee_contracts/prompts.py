"""Each host's MCP prompts, loaded from the JSON files shipped in this package (``prompts/<host>/<name>.json``).

A prompt file holds one prompt exactly as it appears in ``prompts/list`` (name, title, description, arguments), as a
catalog file holds a tool. A host without prompts has no folder; prompts are listed in name order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from bee_contracts.catalog import CatalogError

_HERE = Path(__file__).parent / "prompts"
_PROMPT_KEYS = frozenset({"name", "title", "description", "arguments"})
_ARGUMENT_KEYS = frozenset({"name", "description", "required"})


@dataclass(frozen=True)
class PromptSpec:
    """One prompt of a host, in its wire form."""

    host: str
    name: str
    title: str
    description: str
    arguments: tuple[dict[str, Any], ...]

    def to_wire(self) -> dict[str, Any]:
        """The prompt as ``prompts/list`` carries it."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "arguments": [dict(argument) for argument in self.arguments],
        }


def _parse(host: str, path: Path) -> PromptSpec:
    raw = json.loads(path.read_text(encoding="utf-8"))
    if set(raw) != _PROMPT_KEYS:
        raise CatalogError(f"prompts/{host}/{path.name}: keys must be {sorted(_PROMPT_KEYS)}, got {sorted(raw)}")
    if path.name != f"{raw['name']}.json":
        raise CatalogError(f"prompts/{host}/{path.name}: file name must be the prompt name ({raw['name']}.json)")
    for argument in raw["arguments"]:
        if set(argument) != _ARGUMENT_KEYS or not isinstance(argument["required"], bool):
            raise CatalogError(f"prompts/{host}/{path.name}: each argument has exactly {sorted(_ARGUMENT_KEYS)}")
    return PromptSpec(host, raw["name"], raw["title"], raw["description"], tuple(raw["arguments"]))


@cache
def load_prompts(host: str) -> tuple[PromptSpec, ...]:
    """The prompts of ``host`` in name order (none for a host without a folder).

    Raises:
        CatalogError: a prompt file is malformed.
    """
    folder = _HERE / host
    if not folder.is_dir():
        return ()
    return tuple(_parse(host, path) for path in sorted(folder.glob("*.json")))
