"""JSON Schemas of structured arguments that travel inside strings (a packet's manifestJson, a queryJson)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

SCHEMAS: tuple[str, ...] = ("artifact-query", "context-packet-manifest")


@cache
def load_schema(name: str) -> dict[str, Any]:
    """Return the schema called ``name`` (one of :data:`SCHEMAS`).

    Raises:
        KeyError: no such schema.
    """
    if name not in SCHEMAS:
        raise KeyError(f"unknown schema {name!r}; schemas are {', '.join(SCHEMAS)}")
    text = (Path(__file__).parent / "schemas" / f"{name}.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
