"""The artifact query language: a JSON document that filters, orders, pages and projects rows. Never SQL or code.

::

    {"from": "items",                                   json artifacts: where the array of rows is
     "where": {"and": [{"path": "status", "op": "eq", "value": "failed"},
                       {"not": {"path": "tags", "op": "contains", "value": "flaky"}}]},
     "select": ["name", {"path": "timing.seconds", "as": "seconds"}],
     "orderBy": [{"path": "timing.seconds", "direction": "desc"}, "name"],
     "limit": 20, "offset": 0}

Paths are dotted strings (``"a.b.0"``: a number indexes an array) or arrays of keys and indexes (``["a.b", 0]``;
``[]`` is the row itself). Operators: ``eq``/``ne`` (JSON equality: ``1`` equals ``1.0``, ``true`` never equals
``1``), ``lt``/``lte``/``gt``/``gte`` (numbers with numbers, strings with strings by code point; any other pair is
false), ``in``/``nin`` (equal to one of an array), ``contains`` (substring of a string, or element of an array),
``startsWith``/``endsWith`` (strings) and ``exists`` (``value`` true by default). A path that is missing in a row
makes every test false except ``ne``, ``nin`` and ``exists: false`` (the negations). ``orderBy`` sorts missing
values first, then null, false, true, numbers, strings, arrays and objects (``desc`` reverses); ties keep the
artifact's order. ``select`` omits a field that is missing in a row rather than inventing a null.

The structure is checked against the ``artifact-query`` schema in bee-contracts; the rules a schema cannot say
well (one form per condition, operand types) are checked here, with the location of the problem in the message.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from bee_contracts import BeeError, invalid
from bee_contracts.limits import ARTIFACT_QUERY_MAX_BYTES
from bee_contracts.schemas import load_schema
from bee_hostkit.validation import SchemaValidator, parse_json_argument

if TYPE_CHECKING:
    from bee_contracts.shapes.core import ArtifactQueryRow

Segment = str | int
Path = tuple[Segment, ...]
Predicate = Callable[[Any], bool]

#: Deepest nesting of the query document accepted (conditions nest; this keeps evaluation shallow).
MAX_DEPTH = 64

OPERATORS = ("eq", "ne", "lt", "lte", "gt", "gte", "in", "nin", "contains", "startsWith", "endsWith", "exists")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Query:
    """A checked query, ready to run."""

    source: Path | None
    where: Predicate | None
    select: tuple[tuple[str, Path], ...] | None
    order: tuple[tuple[Path, bool], ...]  # (path, descending)
    limit: int
    offset: int


# -- paths ---------------------------------------------------------------------------------------------------------


def _path(raw: Any, where: str) -> Path:
    if isinstance(raw, list):
        return tuple(raw)
    parts = tuple(str(raw).split("."))
    if "" in parts:
        raise invalid(
            f"queryJson: {where} {raw!r} has an empty segment; write keys with dots or empty keys in the array "
            'form, e.g. ["a.b", 0]',
            field=where,
        )
    return parts


def _name(raw: Any) -> str:
    return raw if isinstance(raw, str) else ".".join(str(part) for part in raw)


def resolve(value: Any, path: Path) -> Any:
    """The value at ``path`` inside ``value``, or :data:`MISSING`.

    A segment names a key of an object; against an array, an integer or an all-digit string is an index.
    """
    for segment in path:
        if isinstance(value, dict):
            key = segment if isinstance(segment, str) else str(segment)
            if key not in value:
                return MISSING
            value = value[key]
        elif isinstance(value, list):
            if isinstance(segment, int):
                index = segment
            elif segment.isascii() and segment.isdigit():
                index = int(segment)
            else:
                return MISSING
            if not 0 <= index < len(value):
                return MISSING
            value = value[index]
        else:
            return MISSING
    return value


# -- values --------------------------------------------------------------------------------------------------------


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def same(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value, booleans only with booleans, arrays and objects deeply."""
    if _number(a) and _number(b):
        return bool(a == b)
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    return bool(a == b)


def _ordered(a: Any, b: Any) -> bool:
    return (_number(a) and _number(b)) or (isinstance(a, str) and isinstance(b, str))


def sort_key(value: Any) -> tuple[int, Any]:
    """A key that orders any JSON values: missing, null, false, true, numbers, strings, arrays, objects."""
    if value is MISSING:
        return (0, 0)
    if value is None:
        return (1, 0)
    if isinstance(value, bool):
        return (2, int(value))
    if _number(value):
        return (3, value)
    if isinstance(value, str):
        return (4, value)
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return (5 if isinstance(value, list) else 6, canonical)


# -- conditions ----------------------------------------------------------------------------------------------------


def _test(op: str, path: Path, operand: Any) -> Predicate:
    def at(row: Any) -> Any:
        return resolve(row, path)

    if op == "eq":
        return lambda row: same(at(row), operand)
    if op == "ne":
        return lambda row: not same(at(row), operand)
    if op in ("in", "nin"):
        choices = list(operand)
        hit: Predicate = lambda row: any(same(at(row), choice) for choice in choices)  # noqa: E731
        return hit if op == "in" else (lambda row: not hit(row))
    if op == "exists":
        wanted = True if operand is MISSING else bool(operand)
        return lambda row: (at(row) is not MISSING) is wanted
    if op == "contains":
        if isinstance(operand, str):
            return lambda row: (
                (isinstance(v := at(row), str) and operand in v)
                or (isinstance(v, list) and any(same(item, operand) for item in v))
            )
        return lambda row: isinstance(v := at(row), list) and any(same(item, operand) for item in v)
    if op == "startsWith":
        return lambda row: isinstance(v := at(row), str) and v.startswith(operand)
    if op == "endsWith":
        return lambda row: isinstance(v := at(row), str) and v.endswith(operand)
    compare: Callable[[Any, Any], bool] = {
        "lt": lambda a, b: a < b,
        "lte": lambda a, b: a <= b,
        "gt": lambda a, b: a > b,
        "gte": lambda a, b: a >= b,
    }[op]
    return lambda row: _ordered(v := at(row), operand) and compare(v, operand)


def _operand(op: str, raw: dict[str, Any], where: str) -> Any:
    value = raw.get("value", MISSING)
    if op == "exists":
        if value is not MISSING and not isinstance(value, bool):
            raise invalid(f"queryJson: {where}.value must be true or false for op exists", field=where)
        return value
    if value is MISSING:
        raise invalid(f"queryJson: {where} needs a value for op {op}", field=where)
    if op in ("lt", "lte", "gt", "gte") and not (_number(value) or isinstance(value, str)):
        raise invalid(f"queryJson: {where}.value must be a number or a string for op {op}", field=where)
    if op in ("in", "nin") and not isinstance(value, list):
        raise invalid(f"queryJson: {where}.value must be an array for op {op}, e.g. [1, 2]", field=where)
    if op in ("startsWith", "endsWith") and not isinstance(value, str):
        raise invalid(f"queryJson: {where}.value must be a string for op {op}", field=where)
    return value


def _condition(raw: dict[str, Any], where: str) -> Predicate:
    forms = [key for key in ("and", "or", "not", "path") if key in raw]
    if len(forms) != 1 or (forms != ["path"] and len(raw) != 1):
        raise invalid(
            f"queryJson: {where} must have exactly one form: {{and: [...]}}, {{or: [...]}}, {{not: {{...}}}} or "
            f"{{path, op, value}}; it has keys {', '.join(sorted(raw))}",
            field=where,
        )
    form = forms[0]
    if form in ("and", "or"):
        parts = [_condition(item, f"{where}.{form}.{i}") for i, item in enumerate(raw[form])]
        if form == "and":
            return lambda row: all(part(row) for part in parts)
        return lambda row: any(part(row) for part in parts)
    if form == "not":
        inner = _condition(raw["not"], f"{where}.not")
        return lambda row: not inner(row)
    if "op" not in raw:
        raise invalid(f"queryJson: {where} needs an op, one of {', '.join(OPERATORS)}", field=where)
    op = raw["op"]
    return _test(op, _path(raw["path"], f"{where}.path"), _operand(op, raw, where))


# -- the document --------------------------------------------------------------------------------------------------


@cache
def _validator() -> SchemaValidator:
    # Values are data compared exactly with the rows' (integers keep every digit), so no 2**53 bound here.
    return SchemaValidator("queryJson", load_schema("artifact-query"), noun="field", safe_integers=False)


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(current, dict):
            stack.extend((item, depth + 1) for item in current.values())
        elif isinstance(current, list):
            stack.extend((item, depth + 1) for item in current)
    return deepest


def _load(query_json: str) -> Any:
    size = len(query_json.encode("utf-8"))
    if size > ARTIFACT_QUERY_MAX_BYTES:
        raise invalid(
            f"queryJson is {size} bytes, over the {ARTIFACT_QUERY_MAX_BYTES}-byte limit; use fewer conditions "
            "(an in/nin list instead of many eq tests)",
            bytes=size,
            limitBytes=ARTIFACT_QUERY_MAX_BYTES,
        )
    raw = parse_json_argument(
        "queryJson",
        query_json,
        hint='pass an object such as {"where": {"path": "status", "op": "eq", "value": "failed"}, "limit": 20}',
    )
    if _depth(raw) > MAX_DEPTH:
        raise invalid(f"queryJson nests deeper than {MAX_DEPTH} levels; flatten the and/or groups")
    return raw


@lru_cache(maxsize=128)
def parse_query(query_json: str) -> Query:
    """Parse and check a query (memoized: the result is immutable and a pure function of the text).

    Raises:
        BeeError: ``invalid_argument`` for JSON over 64 KiB, malformed JSON, a schema violation (an unknown
            operator or field is named, with the allowed ones), or an operand of the wrong type.
    """
    raw = _load(query_json)
    try:
        _validator().check(raw)
    except BeeError as exc:
        if (exc.details or {}).get("schemaRule") != "anyOf":
            raise
        # The schema's anyOf (a path, or an object with one) gives no useful message of its own.
        where = exc.details["field"] if exc.details else "?"
        raise invalid(
            f'queryJson: field {where} must be a path (a dotted string such as "a.b" or an array such as '
            '["a", 0]) or, in select and orderBy, an object with a path',
            field=where,
        ) from None
    where = _condition(raw["where"], "where") if "where" in raw else None
    select = None
    if "select" in raw:
        chosen: list[tuple[str, Path]] = []
        for i, item in enumerate(raw["select"]):
            spec = item if isinstance(item, dict) else {"path": item}
            name = spec.get("as") or _name(spec["path"])
            if name in (existing for existing, _ in chosen):
                raise invalid(f"queryJson: select.{i} repeats the output name {name!r}; give one an `as`", field=i)
            chosen.append((name, _path(spec["path"], f"select.{i}")))
        select = tuple(chosen)
    order = []
    for i, item in enumerate(raw.get("orderBy", [])):
        spec = item if isinstance(item, dict) else {"path": item}
        order.append((_path(spec["path"], f"orderBy.{i}"), spec.get("direction", "asc") == "desc"))
    source = _path(raw["from"], "from") if "from" in raw else None
    return Query(source, where, select, tuple(order), raw.get("limit", 50), raw.get("offset", 0))


# -- running -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One row of an artifact: its 0-based index, its line (JSONL only) and its value."""

    index: int
    line_number: int | None
    value: Any


def project(query: Query, row: Row) -> ArtifactQueryRow:
    """The row as the answer carries it."""
    if query.select is None:
        value = row.value
    else:
        value = {}
        for name, path in query.select:
            found = resolve(row.value, path)
            if found is not MISSING:
                value[name] = found
    if row.line_number is None:
        return {"index": row.index, "value": value}
    return {"index": row.index, "lineNumber": row.line_number, "value": value}


def _by(path: Path) -> Callable[[Row], tuple[int, Any]]:
    return lambda row: sort_key(resolve(row.value, path))


def run(query: Query, rows: Sequence[Row], check: Callable[[], None]) -> tuple[int, list[Row]]:
    """The number of rows that match and the page of them, in order. ``check`` is called every few thousand rows.

    Raises:
        BeeError: whatever ``check`` raises (the deadline).
    """
    where = query.where
    if where is None:
        matched = list(rows)
    else:
        matched = []
        for start in range(0, len(rows), 4096):
            check()
            matched.extend(row for row in rows[start : start + 4096] if where(row.value))
    check()
    for path, descending in reversed(query.order):  # stable sorts, least significant key first
        matched.sort(key=_by(path), reverse=descending)
    return len(matched), matched[query.offset : query.offset + query.limit]
