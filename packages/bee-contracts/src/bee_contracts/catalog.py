"""Each host's tool catalog, loaded from the JSON files shipped in this package.

A catalog file holds one tool exactly as it appears in ``tools/list`` (name, title, description, inputSchema,
outputSchema, annotations). Tools of a host are listed in name order, so the order is deterministic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

#: The catalogs, by the name of the host (or view) that lists them. ``discovery`` is the core host's compact view
#: (`bee mcp serve --discovery`): three tools that find, describe and invoke the ``core`` tools.
HOSTS: tuple[str, ...] = ("core", "design", "discovery", "tracker")

_HERE = Path(__file__).parent

_TOOL_KEYS = frozenset({"name", "title", "description", "inputSchema", "outputSchema", "annotations"})
_ANNOTATION_KEYS = frozenset({"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"})


@dataclass(frozen=True)
class ToolSpec:
    """One tool of a host's catalog, in its wire form."""

    host: str
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    annotations: dict[str, bool]

    def to_wire(self) -> dict[str, Any]:
        """The tool as ``tools/list`` carries it."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": dict(self.annotations),
        }


class CatalogError(ValueError):
    """A catalog file is malformed; raised at load time so a broken catalog never ships silently."""


def _parse(host: str, filename: str, raw: dict[str, Any]) -> ToolSpec:
    keys = set(raw)
    if keys != _TOOL_KEYS:
        raise CatalogError(f"{host}/{filename}: keys must be {sorted(_TOOL_KEYS)}, got {sorted(keys)}")
    if filename != f"{raw['name']}.json":
        raise CatalogError(f"{host}/{filename}: file name must be the tool name ({raw['name']}.json)")
    for key in ("inputSchema", "outputSchema"):
        if raw[key].get("type") != "object":
            raise CatalogError(f"{host}/{filename}: {key} must be object-rooted (2025-11-25 clients need it)")
    annotations = raw["annotations"]
    if set(annotations) != _ANNOTATION_KEYS or not all(isinstance(v, bool) for v in annotations.values()):
        raise CatalogError(f"{host}/{filename}: annotations must set each of {sorted(_ANNOTATION_KEYS)} to a boolean")
    return ToolSpec(
        host=host,
        name=raw["name"],
        title=raw["title"],
        description=raw["description"],
        input_schema=raw["inputSchema"],
        output_schema=raw["outputSchema"],
        annotations=annotations,
    )


@cache
def load_catalog(host: str) -> tuple[ToolSpec, ...]:
    """Return the tools of ``host`` in name order.

    Raises:
        KeyError: ``host`` is not one of :data:`HOSTS`.
        CatalogError: a catalog file is malformed.
    """
    if host not in HOSTS:
        raise KeyError(f"unknown host {host!r}; hosts are {', '.join(HOSTS)}")
    # A plain path, not importlib.resources: this runs at every host's start-up and the latter costs ~20 ms.
    folder = _HERE / "catalogs" / host
    if not folder.is_dir():
        return ()
    specs = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            specs.append(_parse(host, entry.name, json.loads(entry.read_text(encoding="utf-8"))))
    return tuple(specs)


def catalog_by_name(host: str) -> dict[str, ToolSpec]:
    """The tools of ``host`` keyed by name."""
    return {spec.name: spec for spec in load_catalog(host)}
