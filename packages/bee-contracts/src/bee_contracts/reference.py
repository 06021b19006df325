"""Render docs/reference/ from the contracts: ``python -m bee_contracts.reference DIR``.

The rendering is deterministic, so a test can regenerate it and compare with what is committed.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from bee_contracts import errors, limits
from bee_contracts._version import CONTRACT_VERSION, __version__
from bee_contracts.catalog import HOSTS, ToolSpec, load_catalog
from bee_contracts.contract import contract_digest
from bee_contracts.schemas import SCHEMAS, load_schema

_HEADER = "<!-- Generated from bee-contracts by `./dev docs`; do not edit by hand. -->\n\n"
_HOST_TITLES = {
    "core": "Core host (`bee mcp serve`)",
    "design": "Design host",
    "discovery": "Core host, discovery view (`bee mcp serve --discovery`)",
    "tracker": "Tracker host",
}


def _type_of(schema: dict[str, Any]) -> str:
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        kind = " | ".join(kind)
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array of {_type_of(schema['items'])}"
    return str(kind)


def _constraints(schema: dict[str, Any]) -> str:
    parts = []
    if "enum" in schema:
        parts.append("one of " + ", ".join(f"`{v}`" for v in schema["enum"]))
    if "minimum" in schema or "maximum" in schema:
        parts.append(f"{schema.get('minimum', '')}–{schema.get('maximum', '')}")
    for key, label in (
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("minItems", "min items"),
        ("maxItems", "max items"),
        ("pattern", "pattern"),
    ):
        if key in schema:
            parts.append(f"{label} `{schema[key]}`")
    if "default" in schema:
        parts.append(f"default `{json.dumps(schema['default'])}`")
    return "; ".join(parts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _properties_table(schema: dict[str, Any]) -> str:
    props: dict[str, Any] = schema.get("properties", {})
    if not props:
        return "_No fields._\n"
    required = set(schema.get("required", []))
    rows = ["| name | type | required | constraints | description |", "| --- | --- | --- | --- | --- |"]
    for name, prop in props.items():
        rows.append(
            f"| `{name}` | {_type_of(prop)} | {'yes' if name in required else 'no'} | {_cell(_constraints(prop))} "
            f"| {_cell(prop.get('description', ''))} |"
        )
    return "\n".join(rows) + "\n"


def render_tool(spec: ToolSpec) -> str:
    hints = ", ".join(f"{key} `{str(value).lower()}`" for key, value in spec.annotations.items())
    schemas = {"inputSchema": spec.input_schema, "outputSchema": spec.output_schema}
    return (
        f"## `{spec.name}` — {spec.title}\n\n{spec.description}\n\nAnnotations: {hints}.\n\n"
        f"### Arguments\n\n{_properties_table(spec.input_schema)}\n"
        f"### Result (`structuredContent`, and the same JSON as text)\n\n{_properties_table(spec.output_schema)}\n"
        "<details><summary>Full JSON Schemas</summary>\n\n"
        f"```json\n{json.dumps(schemas, indent=2)}\n```\n\n"
        "</details>\n"
    )


def _anchor(spec: ToolSpec) -> str:
    """The anchor GitHub gives a tool's heading (name — title): lower case, punctuation dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", f"{spec.name} — {spec.title}".lower()).replace(" ", "-")


def render_host(host: str) -> str:
    tools = load_catalog(host)
    body = "\n".join(render_tool(spec) for spec in tools) if tools else "_This host serves no tools yet._\n"
    listing = "\n".join(f"- [`{spec.name}`](#{_anchor(spec)})" for spec in tools)
    title = f"# {_HOST_TITLES[host]} — tool reference\n\nBee {__version__}, contract {CONTRACT_VERSION}."
    return f"{_HEADER}{title}\n\n{listing}\n\n{body}"


def render_index() -> str:
    rows = ["| code | retryable | meaning |", "| --- | --- | --- |"]
    rows += [
        f"| `{code.value}` | {'yes' if info.retryable else 'no'} | {info.summary} |"
        for code, info in errors.CODES.items()
    ]
    limit_rows = ["| limit | value |", "| --- | --- |"] + [f"| `{k}` | {v} |" for k, v in limits.as_dict().items()]
    hosts = "\n".join(f"- [{_HOST_TITLES[h]}]({h}.md): {len(load_catalog(h))} tools" for h in HOSTS)
    schemas = "\n".join(f"- [`{name}`](schemas/{name}.json)" for name in SCHEMAS)
    return (
        f"{_HEADER}# Bee contract reference\n\n"
        f"- Version: `{__version__}` (lockstep across all packages)\n- Contract version: `{CONTRACT_VERSION}`\n"
        f"- Contract digest: `{contract_digest()}`\n\n## Hosts\n\n{hosts}\n\n## Limits\n\n"
        + "\n".join(limit_rows)
        + "\n\n"
        "## Error envelope\n\nA failed tool call is a result with `isError: true` whose one text content is the JSON "
        "envelope `{error, code, retryable, outcome_unknown, details?}`, and which carries no `structuredContent`: "
        "clients built on the TypeScript SDK (Claude Code, Cursor, VS Code, the MCP Inspector) check "
        "`structuredContent` against the tool's success `outputSchema` even when `isError` is true, and would show a "
        "schema complaint instead of the message. `error` says what to change; `retryable` says whether the same call "
        "can succeed later; `outcome_unknown` says a write may or may not have landed (a deadline passed mid-write). "
        "The codes are a closed list:\n\n" + "\n".join(rows) + "\n\n"
        f"## Embedded schemas\n\n{schemas}\n"
    )


def render_all() -> dict[str, str]:
    """Every generated file, keyed by its path relative to docs/reference/."""
    files = {"index.md": render_index()}
    files.update({f"{host}.md": render_host(host) for host in HOSTS})
    files.update({f"schemas/{name}.json": json.dumps(load_schema(name), indent=2) + "\n" for name in SCHEMAS})
    return files


def write_all(target: Path) -> list[Path]:
    written = []
    for relative, text in render_all().items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m bee_contracts.reference DIR")
    for path in write_all(Path(sys.argv[1])):
        print(path)
