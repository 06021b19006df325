"""Bounding boxes of differing areas: pixels grouped by the 16-pixel tiles they fall in, tiles joined when they
touch (corners included), one exact box per group, largest group first.

Tiles are joined a run at a time (a run is a row's unbroken stretch of marked tiles, and two runs in neighbouring
rows touch when their columns overlap or meet at a corner), so the work in Python grows with the number of runs,
not with the number of pixels or tiles; the per-pixel work is numpy's.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

TILE: Final = 16

Indices = npt.NDArray[np.intp]


def boxes(width: int, height: int, positions: Indices, limit: int = 10) -> tuple[list[list[int]], int]:
    """Up to ``limit`` boxes ``[x, y, width, height]`` around the pixels at flat ``positions``, and how many more.

    Nearby changes (within a tile of each other) share a box, so a changed word is one box, not one per letter.
    Boxes are ranked by how many pixels they hold, then top to bottom, then left to right.
    """
    if not positions.size:
        return [], 0
    ys, xs = np.divmod(positions, width)
    columns, rows = -(-width // TILE), -(-height // TILE)
    tiles = (ys // TILE) * columns + xs // TILE
    marked = np.flatnonzero(np.bincount(tiles, minlength=rows * columns))
    group_of_tile = np.full(rows * columns, -1, dtype=np.intp)
    group_of_tile[marked] = _group_tiles(marked, columns)
    group = group_of_tile[tiles]
    count = int(group_of_tile.max()) + 1
    sizes = np.bincount(group, minlength=count)
    x0, y0 = np.full(count, width, dtype=np.intp), np.full(count, height, dtype=np.intp)
    x1, y1 = np.zeros(count, dtype=np.intp), np.zeros(count, dtype=np.intp)
    np.minimum.at(x0, group, xs)
    np.minimum.at(y0, group, ys)
    np.maximum.at(x1, group, xs)
    np.maximum.at(y1, group, ys)
    # lexsort is stable and sorts by its last key first: most pixels, then topmost, then leftmost, then the group
    # whose first tile comes first.
    ranked = np.lexsort((x0, y0, -sizes))[:limit].tolist()
    found = [[int(x0[g]), int(y0[g]), int(x1[g] - x0[g] + 1), int(y1[g] - y0[g] + 1)] for g in ranked]
    return found, max(0, count - limit)


def _group_tiles(marked: Indices, columns: int) -> Indices:
    """The connected group (8-neighbourhood) of each marked tile (flat indices, sorted), numbered in the order of
    each group's first tile."""
    rows, cols = np.divmod(marked, columns)
    new_run = np.r_[True, (np.diff(marked) != 1) | (rows[1:] != rows[:-1])]
    run_of_tile = np.cumsum(new_run) - 1
    starts = np.flatnonzero(new_run)
    run_row, run_first = rows[starts], cols[starts]
    run_last = cols[np.r_[starts[1:] - 1, marked.size - 1]]
    # Runs sorted by (row, column), as keys that keep a row's columns (and one more on each side) apart from the
    # next row's: the runs of the row above that touch a run are one stretch of this order, found by bisection.
    span = columns + 2
    first_key, last_key = run_row * span + run_first + 1, run_row * span + run_last + 1
    above = (run_row - 1) * span
    lo = np.searchsorted(last_key, above + run_first, side="left")
    hi = np.searchsorted(first_key, above + run_last + 2, side="right")
    parent = list(range(starts.size))

    def root(run: int) -> int:
        while parent[run] != run:
            parent[run] = parent[parent[run]]
            run = parent[run]
        return run

    for run in np.flatnonzero(lo < hi).tolist():
        mine = root(run)
        for other in range(int(lo[run]), int(hi[run])):
            theirs = root(other)
            if theirs != mine:
                # The earlier run's root stays: a group is then named by its first run.
                first, second = min(mine, theirs), max(mine, theirs)
                parent[second] = first
                mine = first
    number: dict[int, int] = {}
    run_group = np.fromiter(
        (number.setdefault(root(run), len(number)) for run in range(starts.size)), dtype=np.intp, count=starts.size
    )
    grouped: Indices = run_group[run_of_tile]
    return grouped
