"""Edits to a JSON object's text that change what they change and not one character more.

:class:`JsonText` sets, appends and deletes values at a path of keys by splicing text into the original: what it
does not touch keeps its bytes (whitespace, comments, trailing commas, number and string spellings, key order).
New text follows the file's layout: an entry goes on its own line at its siblings' indentation when they are one
per line (on the line after the last one, whose trailing comment stays with it), inline after them otherwise, with
the file's indentation unit, line ending and trailing-comma habit. Removing an entry Bee added gives back the bytes
that were there before.

After the edits, the text is parsed again and its values compared with the values the edits were meant to give
(every number spelling and key order included); a difference is :class:`EditFailed`, and nothing is written.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from bee_cli.jsontree import JsonSyntaxError, Node, parse, plain
from bee_contracts.jsonvalues import quote, write_json

#: A path to a value: object keys and array positions, from the top.
Where = tuple[str | int, ...]

_SPACES = re.compile(r"[ \t]*+")
# From the end of an entry to the end of its line, over spaces and comments that stay on that line.
_REST_OF_LINE = re.compile(r"[ \t]*+(?:/\*[^\r\n]*?\*/[ \t]*+)*+(?://[^\r\n]*+)?")
_LINE_BREAK = re.compile(r"[ \t]*+\r?\n")
_FIRST_INDENT = re.compile(r"\n([ \t]+)\S")

Splice = tuple[int, int, str]


class EditFailed(Exception):
    """An edit did not give the values it was meant to (a defect in Bee, never in the file); nothing is written."""


def _blank(text: str) -> bool:
    return not text.strip(" \t\r\n")


def _line_start(text: str, at: int) -> int:
    return text.rfind("\n", 0, at) + 1


def _starts_line(text: str, at: int) -> bool:
    return not text[_line_start(text, at) : at].strip(" \t")


def _indent_at(text: str, at: int) -> str:
    start = _line_start(text, at)
    return text[start : _SPACES.match(text, start).end()]  # type: ignore[union-attr]  # * always matches


def _indent_unit(text: str) -> str:
    found = _FIRST_INDENT.search(text)
    if found is None:
        return "  "
    unit = found.group(1)
    return "\t" if unit.startswith("\t") else " " * len(unit)


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quote(key)}: {_inline(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(item) for item in value) + "]"
    return write_json(value)


def _block(value: Any, prefix: str, unit: str, newline: str) -> str:
    inner = prefix + unit
    if isinstance(value, dict) and value:
        lines = [f"{inner}{quote(key)}: {_block(item, inner, unit, newline)}" for key, item in value.items()]
        return "{" + newline + ("," + newline).join(lines) + newline + prefix + "}"
    if isinstance(value, list) and value:
        lines = [inner + _block(item, inner, unit, newline) for item in value]
        return "[" + newline + ("," + newline).join(lines) + newline + prefix + "]"
    return _inline(value)


class JsonText:
    """The text of a JSON (JSONC with ``jsonc``) document, edited in place.

    A text that is only whitespace (and comments) is an empty object, written after them. The caller checks that
    the document is an object before editing it (:meth:`get` with no keys gives the whole value).

    Raises:
        JsonSyntaxError: ``text`` is not one JSON value (see :func:`bee_cli.jsontree.parse`).
    """

    def __init__(self, text: str, *, jsonc: bool) -> None:
        self.original = text
        self.jsonc = jsonc
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.unit = _indent_unit(text)
        root = parse(text, jsonc=jsonc)
        #: A value written on one line gets its new entries inline; a new or blank file is laid out on lines.
        self.one_line = root is not None and "\n" not in text[root.start : root.end]
        if root is None:
            text = (text.rstrip() + self.newline if text.strip() else "") + "{}" + self.newline
            root = parse(text, jsonc=jsonc)
            assert root is not None
        self.text = text
        self._root: Node = root
        self._value: Any = plain(root, text)
        self._edited = False

    @property
    def changed(self) -> bool:
        """Whether the text differs from the one it was made from."""
        return self._edited and self.text != self.original

    def has(self, where: Where) -> bool:
        """Whether there is a value at ``where``."""
        return self._node(where) is not None

    def get(self, where: Where) -> Any:
        """The value at ``where`` (numbers as their spellings); do not change it.

        Raises:
            LookupError: there is none.
        """
        value = self._value
        for key in where:
            if isinstance(value, dict):
                holds = key in value
            else:
                holds = isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value)
            if not holds:
                raise LookupError(where)
            value = value[key]
        return value

    def put(self, where: Where, value: Any) -> bool:
        """Set the value at ``where`` (a new object key is added last); False when it already was ``value``.

        Raises:
            LookupError: ``where``'s parent is not there, or is not an object (for a key) or array (for a position).
        """
        parent, key = self._parent(where)
        at = parent.index(key)
        if at is None:
            if isinstance(key, int):
                raise LookupError(where)
            splices = self._insert(parent, key, value)
        else:
            if write_json(self.get(where)) == write_json(value):
                return False
            entry = parent.entries[at]
            prefix = _indent_at(self.text, entry.start) if self._lined(parent) else None
            splices = [(entry.value.start, entry.value.end, self._render(value, prefix))]
        self._apply(splices)
        self._mirror(where)[key] = copy.deepcopy(value)
        return True

    def append(self, where: Where, value: Any) -> None:
        """Add ``value`` at the end of the array at ``where``.

        Raises:
            LookupError: there is no array there.
        """
        node = self._node(where)
        if node is None or node.kind != "array":
            raise LookupError(where)
        self._apply(self._insert(node, None, value))
        self.get(where).append(copy.deepcopy(value))

    def delete(self, where: Where) -> bool:
        """Remove the object key or array item at ``where`` with its separator; False when there is none.

        Raises:
            LookupError: ``where``'s parent is not there.
        """
        parent, key = self._parent(where)
        at = parent.index(key)
        if at is None:
            return False
        self._apply(self._removal(parent, at))
        del self._mirror(where)[key]
        return True

    def result(self) -> str:
        """The edited text, once it has been checked to hold exactly the values the edits were meant to give.

        Raises:
            EditFailed: it does not.
        """
        if write_json(plain(self._root, self.text)) != write_json(self._value):
            raise EditFailed("the edited text does not hold the values the edit was meant to give")
        return self.text

    # -- where things are ----------------------------------------------------------------------------------------

    def _node(self, where: Where) -> Node | None:
        node = self._root
        for key in where:
            at = node.index(key)
            if at is None:
                return None
            node = node.entries[at].value
        return node

    def _parent(self, where: Where) -> tuple[Node, str | int]:
        if not where:
            raise LookupError(where)
        parent = self._node(where[:-1])
        key = where[-1]
        if parent is None or parent.kind != ("array" if isinstance(key, int) else "object"):
            raise LookupError(where)
        return parent, key

    def _mirror(self, where: Where) -> Any:
        """The container that holds ``where`` in the values the edits are meant to give."""
        return self.get(where[:-1])

    def _lined(self, node: Node) -> bool:
        """Whether ``node``'s entries stand one per line (for an empty one: whether the file is laid out on lines)."""
        if node.entries:
            return _starts_line(self.text, node.entries[0].start)
        return not self.one_line

    # -- the splices -----------------------------------------------------------------------------------------------

    def _render(self, value: Any, prefix: str | None) -> str:
        return _inline(value) if prefix is None else _block(value, prefix, self.unit, self.newline)

    def _insert(self, parent: Node, key: str | None, value: Any) -> list[Splice]:
        text, newline = self.text, self.newline
        entries = parent.entries
        lined = self._lined(parent)
        indent = ""
        if lined:
            indent = _indent_at(text, entries[0].start) if entries else _indent_at(text, parent.start) + self.unit
        body = ("" if key is None else quote(key) + ": ") + self._render(value, indent if lined else None)
        if not entries:
            start, end = parent.start + 1, parent.end - 1
            if not lined:
                return [(start, end, body) if _blank(text[start:end]) else (start, start, body + " ")]
            if _blank(text[start:end]):
                return [(start, end, newline + indent + body + newline + _indent_at(text, parent.start))]
            return [(start, start, newline + indent + body)]  # before the comments there
        last = entries[-1]
        if last.comma is None:
            anchor, lead, tail = last.value.end, [(last.value.end, last.value.end, ",")], ""
        else:  # the file ends its entries with commas (JSONC): so does the new one
            anchor, lead, tail = last.comma + 1, [], ","
        if not lined:
            return [*lead, (anchor, anchor, " " + body + tail)]
        stop = _REST_OF_LINE.match(text, anchor).end()  # type: ignore[union-attr]  # * always matches
        if text.startswith(("\n", "\r\n"), stop):
            # At the end of the last entry's line, with that line's own break, so taking it out restores the bytes.
            at, newline = stop, "\n" if text[stop] == "\n" else "\r\n"
        else:
            at = anchor
        return [*lead, (at, at, newline + indent + body + tail)]

    def _removal(self, parent: Node, at: int) -> list[Splice]:
        text = self.text
        entries = parent.entries
        entry = entries[at]
        end = entry.value.end if entry.comma is None else entry.comma + 1
        if len(entries) == 1:
            start, stop = parent.start + 1, parent.end - 1
            if _blank(text[start : entry.start]) and _blank(text[end:stop]):
                return [(start, stop, "")]
            return [self._cut(entry.start, end)]
        if entry.comma is None:  # the last entry: the comma before it goes with it
            comma = entries[at - 1].comma
            assert comma is not None
            if self._whole_lines(entry.start, end) is None:
                if _blank(text[comma + 1 : entry.start]):
                    return [(comma, end, "")]
                # Something stands between (a comment): it stays, without the spaces that led to the entry.
                start = len(text[: entry.start].rstrip(" \t"))
                return [(comma, comma + 1, ""), (start, end, "")]
            return [(comma, comma + 1, ""), self._cut(entry.start, end)]
        lines = self._whole_lines(entry.start, end)
        if lines is not None:
            return [(*lines, "")]
        before = entries[at - 1].comma if at else None
        if before is not None and _blank(text[before + 1 : entry.start]):
            return [(before + 1, end, "")]
        return [(entry.start, _SPACES.match(text, end).end(), "")]  # type: ignore[union-attr]  # * always matches

    def _whole_lines(self, start: int, end: int) -> tuple[int, int] | None:
        """The lines ``[start, end)`` fills, line break included, when nothing else stands on them."""
        if not _starts_line(self.text, start):
            return None
        brk = _LINE_BREAK.match(self.text, end)
        return None if brk is None else (_line_start(self.text, start), brk.end())

    def _cut(self, start: int, end: int) -> Splice:
        lines = self._whole_lines(start, end)
        return (*lines, "") if lines is not None else (start, end, "")

    def _apply(self, splices: list[Splice]) -> None:
        text = self.text
        # From the end, so earlier offsets stay valid; splices at one offset land in the order given.
        for start, end, new in sorted(splices, key=lambda splice: splice[0])[::-1]:
            text = text[:start] + new + text[end:]
        try:
            root = parse(text, jsonc=self.jsonc)
        except JsonSyntaxError as exc:
            raise EditFailed(f"the edit gave text that is not JSON ({exc.problem})") from None
        if root is None:
            raise EditFailed("the edit gave an empty text")
        self.text, self._root, self._edited = text, root, True
