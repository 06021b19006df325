"""Editors' configuration files as JSON documents: read with the line and column of any problem, written back
atomically with nothing lost.

A file is refused, never rewritten, when it is not valid JSON (or JSONC, for editors that allow comments), when an
object repeats a key (a rewrite would keep only the last), or when its top level is not an object. Rewriting keeps
every key, their order and the file's indentation; only the values Bee sets change. JSONC's trailing commas are
dropped (they carry nothing); comments cannot survive a rewrite, so a file with comments is read but reported as
such, and callers refuse to change it.
"""

from __future__ import annotations

import json
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bee_contracts.files import write_atomic


class ConfigFileError(Exception):
    """A configuration file Bee will not rewrite; the message names the file, the place and what to change."""

    def __init__(self, path: Path, problem: str, line: int | None = None, column: int | None = None) -> None:
        where = f" at line {line}, column {column}" if line is not None else ""
        super().__init__(f"{path}{where}: {problem}")
        self.path = path
        self.line = line
        self.column = column


@dataclass
class JsonDocument:
    """A parsed configuration file and what is needed to write it back the way it was written."""

    path: Path
    data: dict[str, Any]
    indent: int | str = 2
    #: Permission bits of the file as found (None: the file does not exist yet).
    mode: int | None = None
    #: Line and column of the first comment, for JSONC files that have one.
    comment: tuple[int, int] | None = None


def json_type(value: Any) -> str:
    """The JSON name of ``value``'s type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    names = {dict: "object", list: "array", str: "string", int: "number", float: "number"}
    return names.get(type(value), type(value).__name__)


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _blank_jsonc(path: Path, text: str) -> tuple[str, tuple[int, int] | None]:
    """``text`` with comments and trailing commas turned into spaces (newlines kept, so every position stays where
    it was), and where the first comment is.

    Raises:
        ConfigFileError: a block comment is never closed.
    """
    out = list(text)
    first_comment: int | None = None
    pending_comma: int | None = None  # a comma that is trailing if the next token closes its object or array
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            pending_comma = None
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if ch == "/" and i + 1 < n and text[i + 1] in "/*":
            first_comment = i if first_comment is None else first_comment
            if text[i + 1] == "/":
                end = text.find("\n", i)
                end = n if end < 0 else end
            else:
                close = text.find("*/", i + 2)
                if close < 0:
                    raise ConfigFileError(path, "a /* comment is never closed", *_position(text, i))
                end = close + 2
            for k in range(i, end):
                if out[k] != "\n":
                    out[k] = " "
            i = end
            continue
        if ch == ",":
            pending_comma = i
        elif ch in "}]" and pending_comma is not None:
            out[pending_comma] = " "
            pending_comma = None
        elif not ch.isspace():
            pending_comma = None
        i += 1
    return "".join(out), None if first_comment is None else _position(text, first_comment)


class _DuplicateKeyError(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKeyError(key)
        found[key] = value
    return found


def _no_constants(name: str) -> Any:
    raise ValueError(name)


def _indent_of(text: str) -> int | str:
    found = re.search(r"\n([ \t]+)\S", text)
    if found is None:
        return 2
    unit = found.group(1)
    return "\t" if unit.startswith("\t") else len(unit)


def read_document(path: Path, *, jsonc: bool) -> JsonDocument | None:
    """The JSON object in ``path`` (symlinks followed), or None when there is no such file. A file holding only
    whitespace is an empty object.

    Raises:
        ConfigFileError: the file is not valid JSON (JSONC with ``jsonc``), repeats a key, holds something other
            than an object, or cannot be read.
    """
    real = path.resolve()
    try:
        raw = real.read_bytes()
        mode = stat.S_IMODE(real.stat().st_mode)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigFileError(path, f"unreadable: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigFileError(path, f"not UTF-8 (byte {exc.start})") from None
    comment = None
    parsed_text = text
    if jsonc:
        parsed_text, comment = _blank_jsonc(path, text)
    if not parsed_text.strip():
        return JsonDocument(real, {}, mode=mode, comment=comment)
    try:
        data = json.loads(parsed_text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        kind = "JSON with comments" if jsonc else "JSON"
        raise ConfigFileError(
            path, f"not valid {kind} ({exc.msg}); fix it, Bee does not overwrite it", exc.lineno, exc.colno
        ) from None
    except _DuplicateKeyError as exc:
        raise ConfigFileError(path, f"the key {exc.args[0]!r} appears twice in one object; remove one") from None
    except ValueError as exc:
        raise ConfigFileError(path, f"{exc.args[0]} is not JSON; fix it") from None
    if not isinstance(data, dict):
        raise ConfigFileError(path, f"the top level is a JSON {json_type(data)}, not an object; fix it")
    return JsonDocument(real, data, indent=_indent_of(text), mode=mode, comment=comment)


def write_document(document: JsonDocument, *, secret: bool = False) -> None:
    """Write ``document`` back atomically, with its indentation and permission bits (0644 for a new file).

    With ``secret`` (it holds a credential) the file is made readable by its owner only.

    Raises:
        OSError: the file or its folder cannot be written; the file is then unchanged.
    """
    mode = 0o644 if document.mode is None else document.mode
    if secret:
        mode &= ~0o077
    text = json.dumps(document.data, indent=document.indent, ensure_ascii=False) + "\n"
    write_atomic(document.path, text.encode("utf-8"), mode=mode)
