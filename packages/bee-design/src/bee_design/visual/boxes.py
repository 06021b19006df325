"""Bounding boxes of differing areas: pixels grouped by the 16-pixel tiles they fall in, tiles joined when they
touch (corners included), one exact box per group, largest group first."""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

TILE: Final = 16


def boxes(width: int, height: int, positions: npt.NDArray[np.intp], limit: int = 10) -> tuple[list[list[int]], int]:
    """Up to ``limit`` boxes ``[x, y, width, height]`` around the pixels at flat ``positions``, and how many more.

    Nearby changes (within a tile of each other) share a box, so a changed word is one box, not one per letter.
    """
    if not positions.size:
        return [], 0
    ys, xs = np.divmod(positions, width)
    columns = -(-width // TILE)
    tiles = (ys // TILE) * columns + xs // TILE
    marked = np.unique(tiles)
    group = _group_tiles(marked.tolist(), columns)
    label = np.searchsorted(marked, tiles)
    pixel_group = np.asarray([group[t] for t in marked.tolist()], dtype=np.intp)[label]
    order = np.argsort(pixel_group, kind="stable")
    sorted_groups = pixel_group[order]
    starts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
    gx, gy = xs[order], ys[order]
    x0, x1 = np.minimum.reduceat(gx, starts), np.maximum.reduceat(gx, starts)
    y0, y1 = np.minimum.reduceat(gy, starts), np.maximum.reduceat(gy, starts)
    sizes = np.diff(np.r_[starts, len(order)])
    ranked = sorted(range(len(starts)), key=lambda g: (-int(sizes[g]), int(y0[g]), int(x0[g])))
    found = [[int(x0[g]), int(y0[g]), int(x1[g] - x0[g] + 1), int(y1[g] - y0[g] + 1)] for g in ranked[:limit]]
    return found, max(0, len(ranked) - limit)


def _group_tiles(tiles: list[int], columns: int) -> dict[int, int]:
    """Connected groups of marked tiles (8-neighbourhood), as tile -> group number."""
    marked = set(tiles)
    group: dict[int, int] = {}
    number = -1
    for start in tiles:
        if start in group:
            continue
        number += 1
        group[start] = number
        stack = [start]
        while stack:
            tile = stack.pop()
            row, column = divmod(tile, columns)
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    c = column + dc
                    near = (row + dr) * columns + c
                    if 0 <= c < columns and near in marked and near not in group:
                        group[near] = number
                        stack.append(near)
    return group
