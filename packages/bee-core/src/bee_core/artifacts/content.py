"""Facts about artifact bytes, learned while they stream in: sha256, size, lines, and what kind of content it is.

Kinds:

- ``binary``: a NUL byte anywhere, or bytes that are not UTF-8;
- ``json``: the whole file is one JSON value (RFC 8259: no NaN/Infinity);
- ``jsonl``: not one JSON value, but every non-blank line is one;
- ``text``: any other UTF-8 without NUL bytes.

JSON kinds are recognised only up to :data:`MAX_JSON_BYTES`; a larger file is ``text`` (searchable and readable,
not queryable), because querying parses the whole file into memory.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from bee_core.artifacts.lines import LineCounter
from bee_core.artifacts.records import Kind

#: Largest artifact recognised as JSON or JSONL (and so queryable), in bytes.
MAX_JSON_BYTES = 64 * 1024 * 1024

_JSON_STARTS = frozenset('{["-0123456789tfn')
_PEEK = 64 * 1024

_MEDIA_TYPES: dict[str, str] = {
    "text": "text/plain; charset=utf-8",
    "json": "application/json",
    "jsonl": "application/jsonl",
    "binary": "application/octet-stream",
}


@dataclass(frozen=True)
class ContentFacts:
    """What one pass over the bytes established."""

    sha256: str
    size: int
    lines: int
    text: bool  # UTF-8 without NUL bytes
    line_blocks: list[int]  # newlines per block (see bee_core.artifacts.lines)


class ContentScanner:
    """Feed chunks in order; :meth:`finish` returns the facts. Hashing and checks run at memory speed."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self._size = 0
        self._lines = LineCounter()
        self._last = b""
        self._text = True
        self._decoder = codecs.getincrementaldecoder("utf-8")()

    def update(self, chunk: bytes) -> None:
        if not chunk:
            return
        self._hash.update(chunk)
        self._size += len(chunk)
        self._lines.update(chunk)
        self._last = chunk[-1:]
        if self._text:
            if b"\x00" in chunk:
                self._text = False
            elif chunk.isascii() and not self._decoder.getstate()[0]:
                pass  # ASCII outside a multi-byte sequence is valid UTF-8; isascii is far faster than decoding
            else:
                try:
                    self._decoder.decode(chunk)
                except UnicodeDecodeError:
                    self._text = False

    def finish(self) -> ContentFacts:
        if self._text:
            try:
                self._decoder.decode(b"", final=True)
            except UnicodeDecodeError:  # the bytes end inside a multi-byte sequence
                self._text = False
        blocks = self._lines.finish()
        # A last line without a terminator is still a line.
        lines = sum(blocks) + (1 if self._size and self._last != b"\n" else 0)
        return ContentFacts(self._hash.hexdigest(), self._size, lines, self._text, blocks)


def _no_constants(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def loads(text: str) -> Any:
    """Parse strict JSON (NaN and Infinity refused); integers keep every digit.

    Raises:
        ValueError: not JSON (``json.JSONDecodeError`` is a ValueError); RecursionError when nested too deeply.
    """
    return json.loads(text, parse_constant=_no_constants)


def classify(facts: ContentFacts, path: Path) -> Kind:
    """The kind of the bytes stored at ``path`` (already scanned into ``facts``)."""
    if not facts.text:
        return "binary"
    if facts.size == 0 or facts.size > MAX_JSON_BYTES:
        return "text"
    with open(path, "rb") as handle:
        head = handle.read(_PEEK).lstrip(b" \t\r\n")[:1]
    # Every JSON value (and so every JSONL line) starts with one of these: most logs are rejected unread.
    if head and head.decode("ascii", "replace") not in _JSON_STARTS:
        return "text"
    text = path.read_bytes().decode("utf-8")
    try:
        loads(text)
        return "json"
    except (ValueError, RecursionError):
        pass
    rows = 0
    for line in io.StringIO(text, newline="\n"):
        if not line.strip():
            continue
        try:
            loads(line)
        except (ValueError, RecursionError):
            return "text"
        rows += 1
    return "jsonl" if rows else "text"


def media_type_for(name: str, kind: Kind) -> str:
    """A media type from the name's extension, else from the kind."""
    if kind in ("json", "jsonl"):
        return _MEDIA_TYPES[kind]
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed or _MEDIA_TYPES[kind]
