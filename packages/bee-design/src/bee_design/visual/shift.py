"""Layout shifts: whether the differing pixels are the reference moved by a few pixels.

A 1-pixel shift of a page changes about 0.8% of its pixels, so a ratio tolerance alone would let it pass. For
each offset up to :data:`RADIUS` pixels the differing pixels of the evidence are compared with the reference at
that offset (those whose offset position lies beyond the image edge are left out); when one offset makes at least
:data:`EXPLAINED` of them match, the content moved. A pixel matches when its colour distance is within the
threshold, as the compiled kernel measures it (:mod:`.kernel`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from bee_design.visual import kernel
from bee_design.visual.diff import Flags, Indices, PixelDiff

#: Largest shift looked for, in pixels along each axis.
RADIUS: Final = 3
#: Share of the differing pixels a shift must explain.
EXPLAINED: Final = 0.9
#: Fewer differing pixels than this are never called a shift (too few to tell).
MIN_PIXELS: Final = 8
#: At most this many differing pixels are tested (an even sample of them).
SAMPLE: Final = 20000

# Offsets nearest first, ring by ring (by |dx| + |dy|); among equally good ones the first tried wins, so the order is
# part of the definition.
_RINGS: Final = [
    sorted(
        ((dx, dy) for dy in range(-RADIUS, RADIUS + 1) for dx in range(-RADIUS, RADIUS + 1) if abs(dx) + abs(dy) == d),
        key=lambda o: (o[1], o[0]),
    )
    for d in range(1, 2 * RADIUS + 1)
]
# Below this share an offset cannot end up as the answer: shares are kept to 4 places, and one that rounds below
# EXPLAINED is never reported (nor can it keep a share that rounds to EXPLAINED or more from replacing it).
_RELEVANT: Final = EXPLAINED - 0.0001


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
    width, height = diff.width, diff.height
    positions = diff.positions[members]
    ys, xs = np.divmod(positions, width)
    seen, reference = diff.evidence_words[positions], diff.reference_words
    # Pixels at least RADIUS from every edge have their offset position inside the image whatever the offset.
    interior = (xs >= RADIUS) & (xs < width - RADIUS) & (ys >= RADIUS) & (ys < height - RADIUS)
    inner, outer = np.flatnonzero(interior), np.flatnonzero(~interior)
    inner_positions, inner_seen = positions[inner], seen[inner]
    best: Shift | None = None
    for ring in _RINGS:
        ruled_out = _ruled_out(
            ring, reference, inner_positions, inner_seen, most_judged=members.size, threshold=threshold, width=width
        )
        for (dx, dy), out in zip(ring, ruled_out.tolist(), strict=True):
            if out:
                continue
            before, after = reference[inner_positions - (dy * width + dx)], inner_seen
            judged = inner.size
            if outer.size:
                sy, sx = ys[outer] - dy, xs[outer] - dx
                # Content moved in from beyond the edge can be neither matched nor not.
                inside = (sx >= 0) & (sx < width) & (sy >= 0) & (sy < height)
                judged += int(np.count_nonzero(inside))
                before = np.concatenate((before, reference[(sy * width + sx)[inside]]))
                after = np.concatenate((after, seen[outer][inside]))
            if judged < MIN_PIXELS:
                continue
            share = float(judged - kernel.count_exceeding(before, after, threshold)) / judged
            if best is None or share > best.explained:
                best = Shift(dx, dy, round(share, 4))
                if share == 1.0:  # nothing explains more
                    return best
    return best if best is not None and best.explained >= EXPLAINED else None


def _ruled_out(
    offsets: list[tuple[int, int]],
    reference: kernel.Words,
    positions: Indices,
    seen: kernel.Words,
    *,
    most_judged: int,
    threshold: float,
    width: int,
) -> Flags:
    """Which ``offsets`` certainly explain less than :data:`_RELEVANT` of the pixels, told from an even sample of
    the interior ones (``positions``, ``seen`` their colours) just large enough to hold too many misses.

    The offsets are tried on the sample in one call to the kernel; usually only the one that moved the content is
    left to be measured on every pixel.
    """
    allowed = int(most_judged * (1 - _RELEVANT))  # more misses than this and the share is below _RELEVANT
    if positions.size <= allowed:
        return np.zeros(len(offsets), dtype=bool)
    count = allowed + 1
    pick = np.arange(count) * positions.size // count  # distinct, spread evenly
    shifts = np.array([dy * width + dx for dx, dy in offsets], dtype=np.intp)
    before = reference[positions[pick][None, :] - shifts[:, None]]
    after = np.tile(seen[pick], len(offsets))
    misses = kernel.exceeding(before.reshape(-1), after, threshold).reshape(len(offsets), -1).sum(axis=1)
    ruled: Flags = misses > allowed
    return ruled
