"""JSON as ``bd --json`` prints it: Go's encoding/json with two-space indents, and bd's wrapping of objects.

bd writes every ``--json`` answer with an ``encoding/json`` Encoder indented by two spaces (``cmd/bd/output.go``
``outputJSON``): keys in the order of the Go struct, ``<``, ``>`` and ``&`` escaped as ``\\u003c``, ``\\u003e`` and
``\\u0026``, U+2028 and U+2029 escaped, invalid UTF-8 replaced by U+FFFD, a number as Go formats a float64 or an int,
and a newline at the end. Before that, ``wrapWithSchemaVersion`` passes a list through unchanged but turns an object
into a map with ``"schema_version": 1`` added: Go writes a map with its keys sorted, at every depth (the object went
through ``map[string]interface{}`` whole), so an object answer's keys come out sorted. With
``BD_JSON_ENVELOPE=1`` every answer is ``{"data": …, "schema_version": 1}`` instead, the payload as it was.

Errors under ``--json`` are ``{"error": …, "schema_version": 1}`` (``cmd/bd/errors.go`` ``buildJSONError``).

An answer without floats is written by orjson (its two-space indent, escapes and empty containers are Go's), then
given Go's HTML and line-separator escapes: a list of a hundred whole issues is an agent's every ``bd ready --json``,
and the standard library's indenting encoder takes several times as long. Floats (Go writes ``1`` for ``1.0``), lone
surrogates and integers past 64 bits take the encoder here, which writes everything as Go does.
"""

from __future__ import annotations

import json
import os
import re
from decimal import Decimal
from typing import Any

import orjson

#: bd's JSON schema version (``JSONSchemaVersion``), added to every object answer.
SCHEMA_VERSION = 1
#: The environment variable that opts into bd's envelope (``jsonEnvelopeEnabled``).
ENVELOPE_ENV = "BD_JSON_ENVELOPE"

_INDENT = "  "
_SURROGATE = re.compile("[\ud800-\udfff]")
#: U+2028 and U+2029 in UTF-8.
_LS, _PS = "\u2028".encode(), "\u2029".encode()


def _string(text: str) -> str:
    """A JSON string as Go writes it (see the module docstring); a lone surrogate becomes U+FFFD, as Go writes
    bytes that are not UTF-8."""
    quoted = json.dumps(_SURROGATE.sub("\ufffd", text), ensure_ascii=False)
    quoted = quoted.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return quoted.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _float(number: float) -> str:
    """A float64 as Go's encoding/json writes it: plain decimals from 1e-6 up to 1e21, exponents beyond."""
    if number == 0:
        return "0"
    if 1e-6 <= abs(number) < 1e21:
        text = format(Decimal(repr(number)), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    mantissa, exponent = repr(number).split("e")
    return f"{mantissa}e{exponent[0]}{exponent[1:].lstrip('0').rjust(2, '0')}"


def _encode(value: Any, depth: int, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = "\n" + _INDENT * (depth + 1)
        out.append("{")
        for index, (key, item) in enumerate(value.items()):
            out.append(("," if index else "") + inner + _string(str(key)) + ": ")
            _encode(item, depth + 1, out)
        out.append("\n" + _INDENT * depth + "}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner = "\n" + _INDENT * (depth + 1)
        out.append("[")
        for index, item in enumerate(value):
            out.append(("," if index else "") + inner)
            _encode(item, depth + 1, out)
        out.append("\n" + _INDENT * depth + "]")
    elif isinstance(value, str):
        out.append(_string(value))
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif value is None:
        out.append("null")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_float(value))
    else:
        raise TypeError(f"no JSON form for {type(value).__name__}")


def _has_float(value: Any) -> bool:
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
        elif isinstance(item, float):
            return True
    return False


def _go_escapes(text: bytes) -> bytes:
    """Go's escapes of ``<``, ``>``, ``&``, U+2028 and U+2029 (none of which JSON's syntax uses outside strings) in
    UTF-8 ``text``: on bytes, where a replace is a memory scan, not a walk over characters."""
    if b"<" in text or b">" in text or b"&" in text:
        text = text.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")
    if _LS in text or _PS in text:
        text = text.replace(_LS, b"\\u2028").replace(_PS, b"\\u2029")
    return text


def dumps(value: Any) -> str:
    """``value`` as Go's indented Encoder writes it, with its trailing newline."""
    if not _has_float(value):
        try:
            return _go_escapes(orjson.dumps(value, option=orjson.OPT_INDENT_2)).decode() + "\n"
        except (orjson.JSONEncodeError, TypeError):
            pass  # a lone surrogate, an integer past 64 bits, a key that is not a string: written below
    return slow_dumps(value)


def slow_dumps(value: Any) -> str:
    """:func:`dumps` by this module's own encoder, which writes any value as Go does."""
    out: list[str] = []
    _encode(value, 0, out)
    out.append("\n")
    return "".join(out)


def compact(value: Any) -> str:
    """``value`` as Go's ``json.Marshal`` writes it (no spaces), for a field bd keeps as a JSON string."""
    return _string_free(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _string_free(text: str) -> str:
    text = _SURROGATE.sub("\ufffd", text)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _sorted(value: Any) -> Any:
    """``value`` as it comes out of Go's ``map[string]interface{}``: every object's keys sorted, at every depth."""
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list | tuple):
        return [_sorted(item) for item in value]
    return value


def enveloped() -> bool:
    """Whether bd's envelope is asked for (``BD_JSON_ENVELOPE=1``)."""
    return os.environ.get(ENVELOPE_ENV) == "1"


def answer(value: Any) -> str:
    """What ``outputJSON`` prints for ``value``: a list as it is, an object with sorted keys and
    ``schema_version``; or, in the envelope, ``{"data": value, "schema_version": 1}``."""
    if enveloped():
        return dumps({"data": value, "schema_version": SCHEMA_VERSION})
    if isinstance(value, list | tuple):
        return dumps(value)
    return dumps(_sorted({**value, "schema_version": SCHEMA_VERSION}))


def error(message: str) -> str:
    """What bd prints for a failure under ``--json``."""
    inner = {"error": message}
    if enveloped():
        return dumps({"data": inner, "schema_version": SCHEMA_VERSION})
    return dumps({**inner, "schema_version": SCHEMA_VERSION})
