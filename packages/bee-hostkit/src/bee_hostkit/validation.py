"""Argument validation against a tool's inputSchema, before any handler runs.

The low-level SDK server does not validate; every Bee host does, here, and answers ``invalid_argument`` with a
message that names the argument and what to change. Beyond the schema, a value no handler can use is refused
here too, so that it never reaches a handler and comes back as ``internal``:

- JSON Schema's ``integer`` is a real integer: ``1.0`` (which jsonschema would admit) and booleans are not;
- numbers must be ones every JSON reader holds exactly: integers within ±(2**53 - 1), the range I-JSON
  (RFC 7493) guarantees, where a validator asks for it (tool arguments), and nowhere a number too long to parse or
  too large for a double (:class:`OversizedNumber`);
- nesting stops at :data:`MAX_DEPTH` levels.

JSON carried inside a string argument (``manifestJson``, ``queryJson``) is parsed by :func:`parse_json_argument`,
which turns every way the text can defeat the parser into ``invalid_argument`` naming the argument.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from functools import cache
from typing import Any

from bee_contracts import BeeError, ErrorCode, invalid
from bee_hostkit._quickcheck import compile_check

#: The largest integer magnitude I-JSON (RFC 7493) guarantees every reader holds exactly.
MAX_SAFE_INTEGER = 2**53 - 1

_OUTSIDE_SAFE = f"outside ±{MAX_SAFE_INTEGER} (2**53 - 1), the integers every JSON reader holds exactly"

#: How deeply arguments (and JSON inside string arguments) may nest; no Bee tool needs more than a few levels.
MAX_DEPTH = 64


class OversizedNumber(float):
    """A JSON number no reader can hold: an integer too long to parse, or a number beyond a double's range.

    JSON parsing (the stdio transport's, and :func:`parse_json_argument`) yields one in its place, keeping the text
    for the message; it behaves as an infinite float, and validation refuses it wherever it appears.
    """

    __slots__ = ("text",)

    text: str

    def __new__(cls, text: str) -> OversizedNumber:
        number = super().__new__(cls, math.inf if not text.startswith("-") else -math.inf)
        number.text = text
        return number

    def __repr__(self) -> str:
        digits = self.text.lstrip("-")
        return self.text if len(digits) <= 20 else f"{self.text[:12]}… ({len(digits)} characters)"


def read_int(text: str) -> int | OversizedNumber:
    """A ``parse_int`` hook for :func:`json.loads`: Python refuses to parse integers of more than 4,300 digits."""
    try:
        return int(text)
    except ValueError:
        return OversizedNumber(text)


def read_float(text: str) -> float:
    """A ``parse_float`` hook for :func:`json.loads`: a number that overflows a double is kept as its text."""
    number = float(text)
    return number if math.isfinite(number) else OversizedNumber(text)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_json(text: str | bytes) -> Any:
    """Parse JSON the way Bee reads it: numbers through :func:`read_int` and :func:`read_float`, no NaN/Infinity.

    Raises:
        ValueError: not JSON (:class:`json.JSONDecodeError`), not UTF-8, or NaN/Infinity.
        RecursionError: nested too deeply for the parser.
    """
    return json.loads(text, parse_int=read_int, parse_float=read_float, parse_constant=_no_constants)


def parse_json_argument(name: str, text: str, *, hint: str = "") -> Any:
    """Parse the JSON text carried in argument ``name``; ``hint`` (what a good value looks like) ends the message.

    Numbers too long or too large to hold come back as :class:`OversizedNumber` (validation refuses them with
    their location); ``NaN`` and ``Infinity`` are not JSON and are refused here.

    Raises:
        BeeError: ``invalid_argument`` naming ``name`` when the text is not JSON (with line and column) or nests
            too deeply for the parser.
    """
    advice = f"; {hint}" if hint else ""
    try:
        return read_json(text)
    except json.JSONDecodeError as exc:
        raise invalid(f"{name} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}){advice}") from None
    except RecursionError:
        raise invalid(f"{name} nests too deeply to read (the limit is {MAX_DEPTH} levels){advice}") from None
    except ValueError as exc:  # NaN, Infinity
        raise invalid(f"{name} is not valid JSON ({exc}){advice}") from None


class SchemaValidator:
    """Validates JSON values against one schema, compiled once; jsonschema runs only when a value may be invalid.

    A valid value is recognised by the schema's quick check (:mod:`bee_hostkit._quickcheck`, compiled here once);
    only a value it cannot vouch for goes through jsonschema, which decides and builds the detailed message. So
    jsonschema is imported, and its validator built, on the first doubtful value (cold start stays light).

    ``subject`` prefixes every message (a tool name, or the name of an argument that carries embedded JSON) and
    ``noun`` names what a path points at ("argument", "field").
    """

    def __init__(
        self, subject: str, schema: Mapping[str, Any], *, noun: str = "argument", safe_integers: bool = True
    ) -> None:
        self.subject = subject
        self.schema = dict(schema)
        self.noun = noun
        #: Refuse integers beyond ±MAX_SAFE_INTEGER (off where values are data compared exactly, as in queryJson).
        self.safe_integers = safe_integers
        self._quick = compile_check(self.schema)
        self._validator: Any = None

    def _compiled(self) -> Any:
        if self._validator is None:
            from jsonschema import Draft202012Validator

            Draft202012Validator.check_schema(self.schema)
            self._validator = _strict_validator_class()(self.schema)
        return self._validator

    def check(self, value: Any) -> None:
        """Raise ``invalid_argument`` describing the most relevant problem with ``value``, if any.

        Raises:
            BeeError: ``invalid_argument`` with the offending path and rule in details.
        """
        self._check_values(value)
        if self._quick is not None and self._quick(value):
            return
        from jsonschema.exceptions import best_match

        error = best_match(self._compiled().iter_errors(value))
        if error is not None:
            raise BeeError(
                ErrorCode.INVALID_ARGUMENT,
                f"{self.subject}: {describe(error, self.noun)}",
                details={self.noun: _path(error), "schemaRule": error.validator},
            )

    def _check_values(self, value: Any) -> None:
        """Refuse nesting past MAX_DEPTH and numbers no reader can hold, before the (recursive) schema check."""
        stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
        while stack:
            current, where = stack.pop()
            if isinstance(current, dict | list):
                if len(where) >= MAX_DEPTH:
                    self._refuse(where, f"nests deeper than {MAX_DEPTH} levels; flatten it", "maxDepth")
                items = current.items() if isinstance(current, dict) else enumerate(current)
                stack.extend((item, (*where, key)) for key, item in items)
            elif isinstance(current, float):
                if isinstance(current, OversizedNumber):
                    self._refuse(where, f"is {current!r}, a number too large to hold exactly", "number")
                if not math.isfinite(current):  # the SDK's parser reads NaN and Infinity, which JSON does not have
                    self._refuse(where, f"is {current!r}, not a finite number; JSON numbers are finite", "number")
                if self.safe_integers and abs(current) > MAX_SAFE_INTEGER:
                    self._refuse(where, f"is {current!r}, {_OUTSIDE_SAFE}", "number")
            elif self.safe_integers and isinstance(current, int) and abs(current) > MAX_SAFE_INTEGER:
                self._refuse(where, f"is {_shorten(current)}, {_OUTSIDE_SAFE}", "number")  # bool: |x| <= 1

    def _refuse(self, where: tuple[Any, ...], problem: str, rule: str) -> None:
        path = ".".join(str(part) for part in where) or "(top level)"
        shown = path if len(path) <= 80 else path[:79] + "…"
        raise BeeError(
            ErrorCode.INVALID_ARGUMENT,
            f"{self.subject}: {self.noun} {shown} {problem}",
            details={self.noun: path, "schemaRule": rule},
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


def _is_integer(checker: Any, instance: Any) -> bool:
    # jsonschema admits 1.0 as an integer (JSON Schema's definition); a handler slicing with it fails.
    return isinstance(instance, int) and not isinstance(instance, bool)


@cache
def _strict_validator_class() -> Any:
    """Draft 2020-12 with ``integer`` meaning a real integer (made once, on first use)."""
    from jsonschema import Draft202012Validator, validators

    checker = Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer)
    return validators.extend(Draft202012Validator, type_checker=checker)


def _path(error: Any) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "(top level)"


def _shorten(value: Any, limit: int = 80) -> str:
    if isinstance(value, int) and value.bit_length() > 4 * limit:
        # repr of an integer past Python's 4,300-digit conversion limit raises; a caller can send one (JSON
        # integers are unbounded), and the message needs only its size.
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
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
        if value == "integer":
            return f"{where} must be an integer, got {_shorten(error.instance)}"
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
