"""JSON Schemas of the files the design package writes and reads (bundle declarations, manifests, the mapping
file, visual specs, evidence), shipped as data so the docs can link them."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from bee_hostkit.validation import SchemaValidator

__all__ = ["validator"]

_HERE = Path(__file__).parent


@cache
def validator(name: str, subject: str) -> SchemaValidator:
    """A validator for the schema ``<name>.json``; messages start with ``subject``."""
    schema: dict[str, Any] = json.loads((_HERE / f"{name}.json").read_text(encoding="utf-8"))
    return SchemaValidator(subject, schema, noun="field")
