"""Layout shifts: whether the differing pixels are the reference moved by a few pixels.

A 1-pixel shift of a page changes about 0.8% of its pixels, so a ratio tolerance alone would let it pass. For
each offset up to :data:`RADIUS` pixels the differing pixels of the evidence are compared with the reference at
that offset (those whose offset position lies beyond the image edge are left out); when one offset makes at least
:data:`EXPLAINED` of them match, the content moved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from bee_design.visual.diff import Indices, PixelDiff, distance, limit_for

#: Largest shift looked for, in pixels along each axis.
RADIUS: Final = 3
#: Share of the differing pixels a shift must explain.
EXPLAINED: Final = 0.9
#: Fewer differing pixels than this are never called a shift (too few to tell).
MIN_PIXELS: Final = 8
#: At most this many differing pixels are tested (an even sample of them).
SAMPLE: Final = 20000


@dataclass(frozen=True)
class Shift:
    """The content moved by ``(dx, dy)`` pixels (right and down are positive); ``explained`` is the share matched."""

    dx: int
    dy: int
    explained: float


def detect_shift(diff: PixelDiff, members: Indices, threshold: float) -> Shift | None:
    """The shift that explains the differing pixels ``members`` (indices into ``diff``), if one does."""
    if members.size < MIN_PIXELS:
        return None
    if members.size > SAMPLE:
        members = members[:: -(-members.size // SAMPLE)]
    positions = diff.positions[members]
    ys, xs = np.divmod(positions, diff.width)
    seen = diff.evidence[positions]
    limit = limit_for(threshold)
    best: Shift | None = None
    offsets = sorted(
        ((dx, dy) for dy in range(-RADIUS, RADIUS + 1) for dx in range(-RADIUS, RADIUS + 1) if dx or dy),
        key=lambda o: (abs(o[0]) + abs(o[1]), o[1], o[0]),
    )
    for dx, dy in offsets:
        sy, sx = ys - dy, xs - dx
        inside = (sx >= 0) & (sx < diff.width) & (sy >= 0) & (sy < diff.height)
        before = np.take(diff.reference, sy * diff.width + sx, mode="clip")
        judged = np.count_nonzero(inside)  # content moved in from beyond the edge can be neither matched nor not
        if judged < MIN_PIXELS:
            continue
        matched = inside & ((before == seen) | (distance(before, seen) <= limit))
        share = float(np.count_nonzero(matched)) / judged
        if best is None or share > best.explained:
            best = Shift(dx, dy, round(share, 4))
    return best if best is not None and best.explained >= EXPLAINED else None
