"""A schema compiled once into plain checks that say, fast, when a value is certainly valid.

jsonschema builds its validator afresh for every property it descends into, which makes checking even a
two-argument call cost tens of microseconds, most of it spent proving that nothing is wrong. Tool arguments are
valid far more often than not, so :func:`compile_check` turns the keywords Bee's input schemas use (types,
properties, required, additionalProperties, bounds, lengths, patterns, enums, items) into closures that answer
``True`` only when every rule holds. Everything else — a keyword it does not know (``$ref``, ``anyOf``,
``patternProperties`` …), a value it will not judge (an ``enum`` of numbers, ``uniqueItems`` over objects), any
rule broken — gives ``False``, and the caller runs jsonschema, which decides and describes the problem. So this
never accepts a value jsonschema would refuse, and it never has to explain anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sized
from typing import Any

#: Answers ``True`` only when the value certainly satisfies the schema it was compiled from.
Check = Callable[[Any], bool]

_MakeCheck = Callable[[Any, Mapping[str, Any]], "Check | None"]

#: Keywords that annotate and never reject; ``$schema`` is a dialect Bee's validator class fixes anyway.
_ANNOTATIONS = frozenset(
    {"$schema", "$comment", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"}
)


def _is_integer(value: Any) -> bool:
    # As Bee's validator defines integer: a real int, never a bool, never 1.0 (see validation._is_integer).
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_TYPES: dict[str, Check] = {
    "string": lambda value: isinstance(value, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda value: isinstance(value, bool),
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "null": lambda value: value is None,
}


def _always(value: Any) -> bool:
    return True


def compile_check(schema: Any) -> Check | None:
    """The quick check for ``schema``, or ``None`` when it uses something this module does not judge."""
    if schema is True:
        return _always
    if not isinstance(schema, Mapping):
        return None  # False (nothing is valid) or not a schema: jsonschema says which
    checks: list[Check] = []
    for keyword, value in schema.items():
        if keyword in _ANNOTATIONS:
            continue
        make = _KEYWORDS.get(keyword)
        if make is None:
            return None
        check = make(value, schema)
        if check is None:
            return None
        if check is not _always:
            checks.append(check)
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    return lambda value: all(check(value) for check in checks)


def _type(value: Any, schema: Mapping[str, Any]) -> Check | None:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(name in _TYPES for name in names):
        return None
    tests = [_TYPES[name] for name in names]
    if len(tests) == 1:
        return tests[0]
    return lambda instance: any(test(instance) for test in tests)


def _properties(value: Any, schema: Mapping[str, Any]) -> Check | None:
    if not isinstance(value, Mapping):
        return None
    compiled: list[tuple[str, Check]] = []
    for name, subschema in value.items():
        check = compile_check(subschema)
        if check is None:
            return None
        if check is not _always:
            compiled.append((name, check))

    def properties(instance: Any) -> bool:
        if not isinstance(instance, dict):
            return True
        return all(check(instance[name]) for name, check in compiled if name in instance)

    return properties


def _additional_properties(value: Any, schema: Mapping[str, Any]) -> Check | None:
    known = schema.get("properties", {})
    if not isinstance(known, Mapping):
        return None
    if value is True:
        return _always
    if value is False:
        return lambda instance: not isinstance(instance, dict) or all(name in known for name in instance)
    check = compile_check(value)
    if check is None:
        return None
    extra = check
    return lambda instance: (
        not isinstance(instance, dict) or all(extra(item) for name, item in instance.items() if name not in known)
    )


def _required(value: Any, schema: Mapping[str, Any]) -> Check | None:
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        return None
    names = tuple(value)
    return lambda instance: not isinstance(instance, dict) or all(name in instance for name in names)


def _bound(compare: Callable[[Any, Any], bool]) -> _MakeCheck:
    def make(value: Any, schema: Mapping[str, Any]) -> Check | None:
        if not _is_number(value):
            return None
        return lambda instance: not _is_number(instance) or compare(instance, value)

    return make


def _size(of: type[Sized], compare: Callable[[int, int], bool]) -> _MakeCheck:
    def make(value: Any, schema: Mapping[str, Any]) -> Check | None:
        if not _is_integer(value):
            return None
        return lambda instance: not isinstance(instance, of) or compare(len(instance), value)

    return make


def _pattern(value: Any, schema: Mapping[str, Any]) -> Check | None:
    if not isinstance(value, str):
        return None
    try:
        pattern = re.compile(value)  # the engine jsonschema uses, so the same pattern means the same thing
    except re.error:
        return None
    return lambda instance: not isinstance(instance, str) or pattern.search(instance) is not None


def _enum(value: Any, schema: Mapping[str, Any]) -> Check | None:
    # Only strings are judged: jsonschema's equality treats 1, 1.0 and True with care that a set would not.
    if not isinstance(value, list) or not all(isinstance(option, str) for option in value):
        return None
    options = frozenset(value)
    return lambda instance: isinstance(instance, str) and instance in options


def _const(value: Any, schema: Mapping[str, Any]) -> Check | None:
    if not isinstance(value, str):
        return None
    return lambda instance: isinstance(instance, str) and instance == value


def _items(value: Any, schema: Mapping[str, Any]) -> Check | None:
    check = compile_check(value)
    if check is None:
        return None
    item = check
    return lambda instance: not isinstance(instance, list) or all(item(entry) for entry in instance)


def _unique_items(value: Any, schema: Mapping[str, Any]) -> Check | None:
    if value is False:
        return _always
    if value is not True:
        return None

    def unique(instance: Any) -> bool:
        if not isinstance(instance, list):
            return True
        # Strings only (anything else is left to jsonschema's equality): a set of them is exact.
        return all(isinstance(entry, str) for entry in instance) and len(set(instance)) == len(instance)

    return unique


_KEYWORDS: dict[str, _MakeCheck] = {
    "type": _type,
    "properties": _properties,
    "additionalProperties": _additional_properties,
    "required": _required,
    "minimum": _bound(lambda instance, bound: instance >= bound),
    "maximum": _bound(lambda instance, bound: instance <= bound),
    "exclusiveMinimum": _bound(lambda instance, bound: instance > bound),
    "exclusiveMaximum": _bound(lambda instance, bound: instance < bound),
    "minLength": _size(str, lambda length, bound: length >= bound),
    "maxLength": _size(str, lambda length, bound: length <= bound),
    "minItems": _size(list, lambda length, bound: length >= bound),
    "maxItems": _size(list, lambda length, bound: length <= bound),
    "minProperties": _size(dict, lambda length, bound: length >= bound),
    "maxProperties": _size(dict, lambda length, bound: length <= bound),
    "pattern": _pattern,
    "enum": _enum,
    "const": _const,
    "items": _items,
    "uniqueItems": _unique_items,
}
