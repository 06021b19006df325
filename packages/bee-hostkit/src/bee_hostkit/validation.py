"""Argument validation against a tool's inputSchema, before any handler runs.

The low-level SDK server does not validate; every Bee host does, here, and answers ``invalid_argument`` with a
message that names the argument and what to change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bee_contracts import BeeError, ErrorCode


class SchemaValidator:
    """Validates JSON values against one schema; the jsonschema import is deferred to first use (cold start).

    ``subject`` prefixes every message (a tool name, or the name of an argument that carries embedded JSON) and
    ``noun`` names what a path points at ("argument", "field").
    """

    def __init__(self, subject: str, schema: Mapping[str, Any], *, noun: str = "argument") -> None:
        self.subject = subject
        self.schema = dict(schema)
        self.noun = noun
        self._validator: Any = None

    def _compiled(self) -> Any:
        if self._validator is None:
            from jsonschema import Draft202012Validator

            Draft202012Validator.check_schema(self.schema)
            self._validator = Draft202012Validator(self.schema)
        return self._validator

    def check(self, value: Any) -> None:
        """Raise ``invalid_argument`` describing the most relevant problem with ``value``, if any.

        Raises:
            BeeError: ``invalid_argument`` with the offending path and rule in details.
        """
        from jsonschema.exceptions import best_match

        error = best_match(self._compiled().iter_errors(value))
        if error is not None:
            raise BeeError(
                ErrorCode.INVALID_ARGUMENT,
                f"{self.subject}: {describe(error, self.noun)}",
                details={self.noun: _path(error), "schemaRule": error.validator},
            )

    def validate(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Check an arguments object and return it with the schema's top-level defaults filled in.

        Raises:
            BeeError: ``invalid_argument`` describing the first problem found.
        """
        args = dict(arguments or {})
        self.check(args)
        for name, prop in self.schema.get("properties", {}).items():
            if name not in args and isinstance(prop, dict) and "default" in prop:
                args[name] = prop["default"]
        return args


def _path(error: Any) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "(top level)"


def _shorten(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(error: Any, noun: str = "argument") -> str:
    """A message for one jsonschema error that says what to change."""
    where = f"{noun} {_path(error)}"
    rule = error.validator
    value = error.validator_value
    if rule == "required":
        missing = [name for name in value if name not in (error.instance or {})]
        if not missing:
            return str(error.message)
        inside = f" in {where}" if error.absolute_path else ""
        return f"missing required {noun} {missing[0]!r}{inside}"
    if rule == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        if not extra:
            return str(error.message)
        inside = f" in {where}" if error.absolute_path else ""
        return f"unknown {noun} {extra[0]!r}{inside}; allowed: {', '.join(allowed)}"
    if rule == "type":
        return f"{where} must be of type {value}, got {_shorten(error.instance)}"
    if rule in {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}:
        bounds = [str(error.schema.get(k)) for k in ("minimum", "maximum") if k in error.schema]
        span = "–".join(bounds)
        return f"{where} is {_shorten(error.instance)}, outside the allowed range {span}"
    if rule in {"minLength", "maxLength"}:
        size = len(error.instance) if isinstance(error.instance, str) else "?"
        return f"{where} has length {size}; {rule} is {value}"
    if rule in {"minItems", "maxItems"}:
        size = len(error.instance) if isinstance(error.instance, list) else "?"
        return f"{where} has {size} items; {rule} is {value}"
    if rule == "uniqueItems":
        return f"{where} repeats an item; list each one once"
    if rule == "enum":
        return f"{where} is {_shorten(error.instance)}; use one of {', '.join(map(str, value))}"
    if rule == "pattern":
        return f"{where} is {_shorten(error.instance)}, which does not match the pattern {value!r}"
    return f"{where}: {error.message}"
