"""Line numbers from byte offsets without rescanning a file: a per-block newline count taken at ingestion.

The index holds how many ``\\n`` bytes each :data:`BLOCK_BYTES` block of the artifact contains. The line number at
an offset is then the newlines before its block plus a count within at most one block, so a search engine can
report byte offsets only (which costs nothing) and the line numbers of a page are derived here.
"""

from __future__ import annotations

import itertools
import os
from array import array
from collections.abc import Sequence

#: Block size of the line index.
BLOCK_BYTES = 64 * 1024


class LineCounter:
    """Counts newlines per block while the bytes stream in (see :class:`~bee_core.artifacts.content.ContentScanner`)."""

    def __init__(self) -> None:
        self.blocks: list[int] = []
        self._filled = 0  # bytes of the current, unfinished block
        self._current = 0

    def update(self, chunk: bytes) -> None:
        at = 0
        while at < len(chunk):
            take = min(BLOCK_BYTES - self._filled, len(chunk) - at)
            self._current += chunk.count(b"\n", at, at + take)
            self._filled += take
            at += take
            if self._filled == BLOCK_BYTES:
                self.blocks.append(self._current)
                self._filled = self._current = 0

    def finish(self) -> list[int]:
        if self._filled:
            self.blocks.append(self._current)
            self._filled = self._current = 0
        return self.blocks


class LineIndex:
    """Cumulative newline counts at block starts, for one content."""

    def __init__(self, newlines_per_block: Sequence[int]) -> None:
        self._before = array("Q", itertools.accumulate(newlines_per_block, initial=0))

    @classmethod
    def build(cls, fd: int) -> LineIndex:
        """Index the (already verified) file open as ``fd``: the slow path for a record without an index."""
        counter = LineCounter()
        offset = 0
        while chunk := os.pread(fd, 16 * BLOCK_BYTES, offset):
            counter.update(chunk)
            offset += len(chunk)
        return cls(counter.finish())

    def line_number(self, fd: int, offset: int) -> int:
        """The 1-based number of the line containing byte ``offset`` of the file open as ``fd``."""
        block = offset // BLOCK_BYTES
        start = block * BLOCK_BYTES
        within = os.pread(fd, offset - start, start).count(b"\n") if offset > start else 0
        return self._before[block] + within + 1
