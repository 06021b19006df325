"""Newline-delimited JSON-RPC framing with a hard size cap, independent of any I/O.

:class:`FrameSplitter` turns a byte stream into frames without ever holding more than the cap plus one chunk: an
oversized frame is reported as :class:`Oversized` with its first bytes kept, so the request id can usually be
recovered for the -32600 answer. Nothing here parses JSON-RPC semantics beyond that id (and, in
:func:`invalid_id_error`, whether it is one a request may carry).

The one framing of every stdio wire: a host's transport splits its stdin with it, and so does the warm front end,
which answers an oversized frame itself (:func:`oversized_answer`) exactly as the host would. Stdlib only, and cheap.
"""

from __future__ import annotations

import json

from bee_contracts.wire import INVALID_REQUEST, error_frame

# Annotations only (mypy reads this name as True): the typing module is a megabyte the front end need not load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

#: How much of an oversized frame is kept to look for its id.
_HEAD_KEEP = 64 * 1024


class Frame:
    """One complete frame (without its newline)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Frame) and other.data == self.data

    def __hash__(self) -> int:
        return hash(self.data)

    def __repr__(self) -> str:
        return f"Frame({self.data!r})"


class Oversized:
    """A frame longer than the cap: its size so far and its first bytes."""

    __slots__ = ("head", "size")

    def __init__(self, size: int, head: bytes) -> None:
        self.size = size
        self.head = head

    def __repr__(self) -> str:
        return f"Oversized({self.size}, {self.head[:32]!r}…)"


class FrameSplitter:
    """Split a byte stream at newlines, refusing frames longer than ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._buffer = bytearray()
        self._skipping = False  # inside an oversized frame: drop bytes until its newline
        self._skipped = 0
        self._head = b""

    def feed(self, chunk: bytes) -> Iterator[Frame | Oversized]:
        """Consume ``chunk``; yield every frame (or oversize report) it completes."""
        start = 0
        while start <= len(chunk):
            newline = chunk.find(b"\n", start)
            end = len(chunk) if newline < 0 else newline
            piece = chunk[start:end]
            if self._skipping:
                self._skipped += len(piece)
            else:
                self._buffer += piece
                if len(self._buffer) > self.limit:
                    self._skipping = True
                    self._head = bytes(self._buffer[:_HEAD_KEEP])
                    self._skipped = len(self._buffer)
                    self._buffer.clear()
            if newline < 0:
                return
            if self._skipping:
                yield Oversized(self._skipped, self._head)
                self._skipping, self._skipped, self._head = False, 0, b""
            else:
                data = bytes(self._buffer).rstrip(b"\r")
                self._buffer.clear()
                if data.strip():
                    yield Frame(data)
            start = newline + 1

    def finish(self) -> Iterator[Frame | Oversized]:
        """End of stream: yield a final unterminated frame, if any."""
        if self._skipping:
            yield Oversized(self._skipped, self._head)
        elif self._buffer.strip():
            yield Frame(bytes(self._buffer))
        self._buffer.clear()
        self._skipping = False


def oversized_answer(item: Oversized, limit: int) -> bytes:
    """The -32600 answer to a frame over ``limit`` bytes, with its id when its first bytes name one.

    The one answer to an oversized frame, whoever refuses it: a host's transport, or a warm host's front end, which
    never forwards such a frame.
    """
    return error_frame(
        recover_id(item.head),
        INVALID_REQUEST,
        f"frame of at least {item.size} bytes exceeds the {limit}-byte frame limit; send a smaller request",
        {"limitBytes": limit, "frameBytes": item.size},
    )


def recover_id(head: bytes) -> int | str | None:
    """Find the top-level ``"id"`` of a JSON-RPC object from its first bytes, or ``None``.

    A small lexer tracks strings and nesting so that an ``"id"`` key inside params (or inside an escaped JSON
    string argument) is never mistaken for the request id.
    """
    text = head.decode("utf-8", errors="replace")
    depth = 0
    i, n = 0, len(text)
    expect_key = False
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                return None
            literal = text[i : j + 1]
            i = j + 1
            if depth == 1 and expect_key and literal == '"id"':
                while i < n and text[i] in " \t\r\n":
                    i += 1
                if i < n and text[i] == ":":
                    return _leading_id(text[i + 1 :])
            expect_key = False
            continue
        if ch in "{[":
            depth += 1
            expect_key = ch == "{"
        elif ch in "}]":
            depth -= 1
            expect_key = False
        elif ch == ",":
            expect_key = depth >= 1
        i += 1
    return None


def _leading_id(rest: str) -> int | str | None:
    decoder = json.JSONDecoder()
    try:
        value, _ = decoder.raw_decode(rest.lstrip())
    except (ValueError, RecursionError):  # an "id" nested thousands deep is no id, and must not end the reader
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    return value


def peek_id(data: bytes) -> int | str | None:
    """The id of a frame that parsed as JSON but is not a valid JSON-RPC message, when it has one."""
    try:
        value = json.loads(data)
    except ValueError:
        return None
    if isinstance(value, dict):
        found = value.get("id")
        if isinstance(found, int | str) and not isinstance(found, bool):
            return found
    return None


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {json.dumps(value)}"
    if isinstance(value, float):
        return f"the number {value!r}, which is not an integer"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def invalid_id_error(message: object) -> bytes | None:
    """The -32600 answer, with id null, for a request whose id is not a string or an integer; otherwise None.

    ``message`` is a decoded JSON-RPC frame (or HTTP body). A request (an object with a ``method``) whose ``id`` is
    null, a float (``1.0`` included), a boolean, an object or an array is no valid request, and the SDK would take
    it for a notification (its parser drops an ``id`` it cannot type) and never answer: the client would wait for
    ever. Such a request is answered here instead. Notifications (no ``id`` key) and responses pass.
    """
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return None
    request_id = message["id"]
    if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)):
        return None
    return error_frame(
        None,
        INVALID_REQUEST,
        f"invalid request: the id is {_kind_of(request_id)}; a request's id must be a string or an integer "
        "(leave the id out only for a notification)",
    )
