"""The bee-json-v1 packet: its header, its checksum and which strings may be written without quotes.

A packet is one header line and a body (docs/representation.md is the specification)::

    bee-json-v1 <expandedBytes> <check>\\n<body>

``expandedBytes`` is the UTF-8 size of the minified JSON the body stands for (number spellings as given), and
``check`` is the first 8 hex digits of the sha256 of the body's UTF-8 bytes.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from bee_contracts.jsonvalues import NUMBER

MAGIC = "bee-json-v1"
CHECK_HEX = 8

#: Characters no bare (unquoted) token may contain: JSON's structure, quotes, escapes and every control or line
#: separator character (so a bare token never spans lines and reads the same in any tool).
_FORBIDDEN = re.compile('[\\x00-\\x1f\\x7f-\\x9f\u2028\u2029\ud800-\udfff"\\\\,{}\\[\\]]')
_LITERALS = frozenset({"true", "false", "null"})
_HEADER = re.compile(r"bee-json-v1 (0|[1-9][0-9]{0,15}) ([0-9a-f]{8})\Z")
_OTHER_VERSION = re.compile(r"bee-json-v[0-9]+\b")

#: The marker after ``[`` or ``{`` that opens a table.
TABLE = "@"


def checksum(body: str) -> str:
    """The ``check`` field for ``body``."""
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:CHECK_HEX]


def header(expanded_bytes: int, body: str) -> str:
    """The header line (without its newline) of the packet carrying ``body``."""
    return f"{MAGIC} {expanded_bytes} {checksum(body)}"


@dataclass(frozen=True)
class Header:
    """A parsed header."""

    expanded_bytes: int
    check: str


class HeaderError(ValueError):
    """The packet's first line is not a bee-json-v1 header; ``other_version`` names another version's magic."""

    def __init__(self, message: str, other_version: str | None = None) -> None:
        super().__init__(message)
        self.other_version = other_version


def split_packet(packet: str) -> tuple[Header, str]:
    """Split a packet into its parsed header and its body.

    Raises:
        HeaderError: no header line, another version, or a malformed header.
    """
    first, newline, body = packet.partition("\n")
    if not newline:
        raise HeaderError("a packet starts with a header line 'bee-json-v1 <expandedBytes> <check>' and a newline")
    match = _HEADER.match(first)
    if match is None:
        other = _OTHER_VERSION.match(first)
        if other is not None and other.group() != MAGIC:
            raise HeaderError(f"this is a {other.group()} packet; this host reads {MAGIC}", other.group())
        shown = first[:60] + ("…" if len(first) > 60 else "")
        raise HeaderError(f"the first line {shown!r} is not a {MAGIC} header '{MAGIC} <expandedBytes> <check>'")
    return Header(int(match.group(1)), match.group(2)), body


def bare_value(text: str) -> bool:
    """Whether a string value may be written without quotes and still read back as the same string."""
    return (
        bool(text)
        and text.strip() == text
        and text[0] != TABLE
        and _FORBIDDEN.search(text) is None
        and text not in _LITERALS
        and NUMBER.match(text) is None
    )


def bare_key(text: str) -> bool:
    """Whether an object key may be written without quotes."""
    return bool(text) and text.strip() == text and text[0] != TABLE and ":" not in text and not _FORBIDDEN.search(text)


def bare_segment(text: str) -> bool:
    """Whether one segment of a table column path may be written without quotes."""
    return bare_key(text) and "." not in text and "=" not in text
