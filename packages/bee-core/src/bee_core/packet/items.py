"""One packet item per selection: index metadata, an outline, or a body (whole file, symbol or line range)."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from bee_contracts import BeeError, ErrorCode, invalid
from bee_core.packet.cache import ContentCache
from bee_core.packet.manifest import Selection
from bee_core.packet.outline import Outline, Symbol, outline
from bee_core.packet.source import SourceFile, normalize_hash, read_source
from bee_hostkit import ConfinedRoot, Deadline
from bee_hostkit.results import piece_bytes

if TYPE_CHECKING:
    from bee_contracts.shapes.core import ContextPacketItem


def build_item(
    files: ConfinedRoot, selection: Selection, cache: ContentCache, deadline: Deadline | None = None
) -> ContextPacketItem:
    """The packet item for ``selection``, read from the checkout ``files``.

    Raises:
        BeeError: see :func:`measured_item`.
    """
    return measured_item(files, selection, cache, deadline)[0]


def measured_item(
    files: ConfinedRoot, selection: Selection, cache: ContentCache, deadline: Deadline | None = None
) -> tuple[ContextPacketItem, int]:
    """The packet item for ``selection`` and the bytes it adds to a result (its piece size, exact).

    The file is always read and hashed; what depends only on the content — its text facts, its outline and the
    outline's size — comes from ``cache``, so a repeat neither parses nor measures a whole outline again. Only an
    outline, or a body of one symbol, needs the parse: a whole-file or line-range body never does.

    Raises:
        BeeError: what :func:`~bee_core.packet.source.read_source` raises (``outside_root`` among them);
            ``hash_mismatch`` when the pinned hash differs, ``not_found`` for a missing symbol,
            ``invalid_argument`` for an ambiguous symbol, a range past the end, or content too large to read.
    """
    source = read_source(files, selection.path, cache, deadline)
    if selection.hash is not None:
        expected = normalize_hash(selection.hash)
        if expected != source.sha256:
            raise BeeError(
                ErrorCode.HASH_MISMATCH,
                f"{selection.describe()} is pinned to {expected} but the file now hashes to {source.sha256}; "
                "re-read it (representation index gives the current hash) and update the pin",
                details={"id": selection.id, "path": selection.path, "expected": expected, "actual": source.sha256},
            )
    item: ContextPacketItem = {
        "id": selection.id,
        "path": selection.path,
        "representation": selection.representation,
        "required": selection.required,
        "sha256": source.sha256,
        "bytes": source.size,
        "language": source.language,
        "binary": source.binary,
    }
    if source.lines is not None:
        item["lines"] = source.lines
    if selection.representation == "index" or source.binary:
        return item, piece_bytes(item)  # a binary file is reported as binary: facts, never content
    if source.data is None:
        raise invalid(
            f"{selection.describe()} is {source.size} bytes, too large to outline or return as a body; "
            "use representation index",
            path=selection.path,
        )
    if selection.representation == "outline":
        file_outline = _outline_of(source, cache)
        item["outlineSource"] = file_outline.source
        if selection.symbol is not None:
            qualified, symbol = _find_symbol(selection, file_outline)
            item["symbol"] = qualified
            item["symbols"] = [symbol]
            return item, piece_bytes(item)
        # The shared symbol list is counted from its cached size: the item is measured with an empty list.
        item["symbols"] = []
        frame = piece_bytes(item)
        item["symbols"] = file_outline.symbols
        return item, frame - _EMPTY_LIST + file_outline.symbols_bytes
    item = _body(item, selection, source, cache)
    return item, piece_bytes(item)


#: What an empty list adds to a result: ``[]`` in each copy.
_EMPTY_LIST = piece_bytes([])


def _outline_of(source: SourceFile, cache: ContentCache) -> Outline:
    return cache.outline(source.sha256, source.language, lambda: outline(source.language, source.data or b""))


def _body(item: ContextPacketItem, selection: Selection, source: SourceFile, cache: ContentCache) -> ContextPacketItem:
    text = source.text
    total = source.lines or 0
    if selection.symbol is not None:
        qualified, symbol = _find_symbol(selection, _outline_of(source, cache))
        start, end = symbol["startLine"], symbol["endLine"]
        item["symbol"] = qualified
    elif selection.line_range is not None:
        start, end = selection.line_range
        if end > total:
            raise invalid(
                f"{selection.describe()} asks for lines {start}-{end} but the file has {total} lines; "
                f"give a range within 1-{total}",
                id=selection.id,
                lines=total,
            )
    else:
        item["startLine"], item["endLine"] = (1, total) if total else (0, 0)
        item["text"] = text
        return item
    lines = text.split("\n")
    item["startLine"], item["endLine"] = start, end
    chunk = "\n".join(lines[start - 1 : end])
    item["text"] = chunk + "\n" if end < len(lines) else chunk
    return item


def _find_symbol(selection: Selection, file_outline: Outline) -> tuple[str, Symbol]:
    wanted = selection.symbol or ""
    found = file_outline.find(wanted)
    if len(found) == 1:
        return found[0]
    if not found:
        names = file_outline.qualified_names()
        close = difflib.get_close_matches(wanted, names, n=5, cutoff=0.5)
        hint = f"; close matches: {', '.join(close)}" if close else "; ask for the outline to see the symbols"
        raise BeeError(
            ErrorCode.NOT_FOUND,
            f"{selection.describe()}: no symbol {wanted!r} in this file{hint}",
            details={"id": selection.id, "symbol": wanted, "closeMatches": close},
        )
    candidates = [f"{name} (line {symbol['startLine']})" for name, symbol in found]
    raise invalid(
        f"{selection.describe()}: symbol {wanted!r} is ambiguous ({', '.join(candidates[:8])}); "
        "use the qualified name or a line range",
        id=selection.id,
        candidates=[name for name, _ in found],
    )
