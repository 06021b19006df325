"""Per-pixel comparison of two RGBA images of the same size, with numpy.

The colour difference is the perceptual YIQ distance pixelmatch uses (Kotsarenko and Ramos, "Measuring perceived
color difference using YIQ NTSC transmission color space"), on colours blended over white: a pixel differs when
its squared distance exceeds ``35215 × threshold²`` (35215 is the largest possible), so ``threshold`` runs from 0
(any change) to 1. A differing pixel is anti-aliased, as in pixelmatch, when among its eight neighbours it has
both a darker and a brighter one, at most two of equal brightness, and the darkest or the brightest of them sits
in a flat area (more than two identical neighbours) in both images — the soft edge of a shape drawn slightly
differently, not a change of content. Counts equal pixelmatch's (a test checks that against the compiled port).

The work is proportional to the pixels whose RGBA values differ: the images are compared as 32-bit words first,
and only those pixels get colour distances and anti-aliasing checks, on flat word arrays (one gather per
neighbour). Pillow's ImageChops is not used: its ``difference().getbbox()`` ignores RGB-only changes by default
and silently compares only the overlap of images of different sizes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from bee_contracts import invalid
from bee_design.visual.images import Pixels

#: The largest possible squared YIQ distance (black against white).
MAX_DELTA: Final = 35215.0

Indices = npt.NDArray[np.intp]
Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]
Words = npt.NDArray[np.uint32]

# pixelmatch scans a neighbourhood column by column (x outer, y inner); ties between equally dark (or bright)
# neighbours go to the first one found, so the order is part of the definition.
_NEIGHBOURS: Final = tuple((dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx, dy) != (0, 0))

# Colour conversions as lookup tables, one over the red and green bytes of a word and one over blue: r*c1 + g*c2
# is looked up, then b*c3 added, which is the float64 arithmetic pixelmatch does in the same order, so results are
# bit-identical to computing them, at two table reads per pixel.
_LEVELS = np.arange(256, dtype=np.float64)
_RED, _GREEN = np.tile(_LEVELS, 256), np.repeat(_LEVELS, 256)  # index = red + 256 * green: a word's low 16 bits
_Y_RG, _Y_B = _RED * 0.29889531 + _GREEN * 0.58662247, _LEVELS * 0.11448223
_I_RG, _I_B = _RED * 0.59597799 - _GREEN * 0.2741761, _LEVELS * 0.32180189
_Q_RG, _Q_B = _RED * 0.21147017 - _GREEN * 0.52261711, _LEVELS * 0.31114694
_OPAQUE: Final = np.uint32(0xFF000000)


def limit_for(threshold: float) -> float:
    """The squared-distance limit above which a pixel differs, for a threshold from 0 to 1."""
    return MAX_DELTA * threshold * threshold


def words_of(image: Pixels) -> Words:
    """Each RGBA pixel as one 32-bit word, flat in row-major order (equal words are equal pixels)."""
    contiguous = np.ascontiguousarray(image)
    return contiguous.view(np.uint32).reshape(-1)


def _opaque(words: Words) -> bool:
    return bool((words >= _OPAQUE).all())


def _blended(words: Words) -> tuple[Floats, Floats, Floats]:
    """R, G and B blended over white (for pixels that are not all opaque)."""
    channels = words.view(np.uint8).reshape(-1, 4).astype(np.float64)
    opacity = channels[:, 3] / 255.0
    red, green, blue = (255.0 + (channels[:, c] - 255.0) * opacity for c in range(3))
    return red, green, blue


def luma(words: Words) -> Floats:
    """The Y (brightness) of each pixel (RGBA words)."""
    if _opaque(words):
        y: Floats = np.take(_Y_RG, words & 0xFFFF) + np.take(_Y_B, (words >> 16) & 0xFF)
        return y
    r, g, b = _blended(words)
    return r * 0.29889531 + g * 0.58662247 + b * 0.11448223


def _yiq(words: Words) -> tuple[Floats, Floats, Floats]:
    if _opaque(words):
        rg, blue = words & 0xFFFF, (words >> 16) & 0xFF
        return (
            np.take(_Y_RG, rg) + np.take(_Y_B, blue),
            np.take(_I_RG, rg) - np.take(_I_B, blue),
            np.take(_Q_RG, rg) + np.take(_Q_B, blue),
        )
    r, g, b = _blended(words)
    return (
        r * 0.29889531 + g * 0.58662247 + b * 0.11448223,
        r * 0.59597799 - g * 0.2741761 - b * 0.32180189,
        r * 0.21147017 - g * 0.52261711 + b * 0.31114694,
    )


def distance(first: Words, second: Words) -> Floats:
    """The squared YIQ distance between two lists of pixels, pair by pair."""
    y1, i1, q1 = _yiq(first)
    y2, i2, q2 = _yiq(second)
    y, i, q = y1 - y2, i1 - i2, q1 - q2
    result: Floats = 0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q
    return result


class _Neighbourhood:
    """Pixels at flat ``positions`` of a ``width`` × ``height`` image: which of their neighbours exist."""

    def __init__(self, width: int, height: int, positions: Indices) -> None:
        self.width = width
        self.positions = positions
        ys, xs = np.divmod(positions, width)
        self._sides = {(-1, 0): xs > 0, (1, 0): xs < width - 1, (0, -1): ys > 0, (0, 1): ys < height - 1}
        self.on_edge: Flags = ~(self._sides[-1, 0] & self._sides[1, 0] & self._sides[0, -1] & self._sides[0, 1])

    def neighbour(self, dx: int, dy: int) -> tuple[Indices, Flags]:
        """Flat positions of the neighbour at ``(dx, dy)`` and whether it is inside the image."""
        inside = self._sides[dx, 0] & self._sides[0, dy] if dx and dy else self._sides[dx, dy]
        near: Indices = self.positions + (dy * self.width + dx)
        return near, inside


def _many_siblings(width: int, height: int, words: Words, positions: Indices) -> Flags:
    """Whether each pixel has more than two identical neighbours (a pixel on the image edge counts one extra)."""
    around = _Neighbourhood(width, height, positions)
    count = around.on_edge.astype(np.int8)
    centre = words[positions]
    for dx, dy in _NEIGHBOURS:
        near, inside = around.neighbour(dx, dy)
        count += inside & (np.take(words, near, mode="clip") == centre)
    many: Flags = count > 2
    return many


def antialiased(width: int, height: int, image: Words, other: Words, positions: Indices) -> Flags:
    """Whether each pixel at flat ``positions`` of ``image`` looks anti-aliased, judged against ``other`` too."""
    # A pixel with more than two identical neighbours has more than two of equal brightness: it is not
    # anti-aliased, and telling so takes word comparisons only, no brightness.
    around = _Neighbourhood(width, height, positions)
    centre = image[positions]
    same = around.on_edge.astype(np.int8)
    for dx, dy in _NEIGHBOURS:
        near, inside = around.neighbour(dx, dy)
        same += inside & (np.take(image, near, mode="clip") == centre)
    result = np.zeros(len(positions), dtype=bool)
    open_ = np.flatnonzero(same <= 2)
    if open_.size:
        result[open_] = _antialiased(width, height, image, other, positions[open_])
    return result


def _antialiased(width: int, height: int, image: Words, other: Words, positions: Indices) -> Flags:
    count = len(positions)
    around = _Neighbourhood(width, height, positions)
    centre = luma(image[positions])
    zeroes = around.on_edge.astype(np.int8)
    darkest, brightest = np.zeros(count), np.zeros(count)
    low, high = np.zeros(count, dtype=np.intp), np.zeros(count, dtype=np.intp)
    # One neighbour at a time, keeping the running darkest and brightest: a strict comparison keeps the first one
    # found, as pixelmatch does.
    for dx, dy in _NEIGHBOURS:
        near, inside = around.neighbour(dx, dy)
        delta = centre - luma(np.take(image, near, mode="clip"))
        zeroes += inside & (delta == 0)
        darker = inside & (delta < darkest)
        np.copyto(darkest, delta, where=darker)
        np.copyto(low, near, where=darker)
        brighter = inside & (delta > brightest)
        np.copyto(brightest, delta, where=brighter)
        np.copyto(high, near, where=brighter)
    chosen = np.flatnonzero((zeroes <= 2) & (darkest < 0) & (brightest > 0))
    result = np.zeros(count, dtype=bool)
    if chosen.size:
        result[chosen] = _flat_on_both(width, height, image, other, low[chosen]) | _flat_on_both(
            width, height, image, other, high[chosen]
        )
    return result


def _flat_on_both(width: int, height: int, image: Words, other: Words, positions: Indices) -> Flags:
    """Many siblings in ``image`` and in ``other``; the second is only looked at where the first holds."""
    flags = _many_siblings(width, height, image, positions)
    where = np.flatnonzero(flags)
    if where.size:
        flags[where] = _many_siblings(width, height, other, positions[where])
    return flags


@dataclass
class PixelDiff:
    """The pixels whose RGBA values differ between two same-size images, with their colour distances.

    ``positions`` are flat row-major indices of those pixels (``ys``/``xs`` their coordinates) and ``delta`` their
    squared YIQ distances. Anti-aliasing is judged on demand and remembered.
    """

    width: int
    height: int
    reference: Words
    evidence: Words
    positions: Indices
    delta: Floats
    #: Per differing pixel: -1 not judged yet, 0 not anti-aliased, 1 anti-aliased.
    _aa: npt.NDArray[np.int8] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._aa = np.full(len(self.positions), -1, dtype=np.int8)

    @property
    def ys(self) -> Indices:
        return self.positions // self.width

    @property
    def xs(self) -> Indices:
        return self.positions % self.width

    def over(self, threshold: float) -> Indices:
        """Indices (into ``positions``) of the pixels whose distance exceeds ``threshold``'s limit."""
        return np.flatnonzero(self.delta > limit_for(threshold))

    def antialiased(self, index: Indices) -> Flags:
        """Whether each differing pixel ``index[k]`` is anti-aliased in either image."""
        unknown = index[self._aa[index] < 0]
        if unknown.size:
            positions = self.positions[unknown]
            flags = antialiased(self.width, self.height, self.reference, self.evidence, positions)
            rest = np.flatnonzero(~flags)
            if rest.size:
                flags[rest] = antialiased(self.width, self.height, self.evidence, self.reference, positions[rest])
            self._aa[unknown] = flags
        judged: Flags = self._aa[index] == 1
        return judged


def check_same_size(first: tuple[int, int], second: tuple[int, int], labels: tuple[str, str]) -> None:
    """Refuse to compare images whose ``(width, height)`` differ (known from their headers, before decoding).

    Raises:
        BeeError: ``invalid_argument`` naming both sizes.
    """
    if first != second:
        (w1, h1), (w2, h2) = first, second
        raise invalid(
            f"images of different sizes cannot be compared: {labels[0]} is {w1}×{h1}, {labels[1]} is {w2}×{h2}; "
            "capture at the spec's viewport (or update the reference)",
            referenceSize=[w1, h1],
            evidenceSize=[w2, h2],
        )


def compare(reference: Pixels, evidence: Pixels, *, labels: tuple[str, str] = ("reference", "evidence")) -> PixelDiff:
    """The differing pixels of two images of the same size.

    Raises:
        BeeError: ``invalid_argument`` when the sizes differ (nothing is compared: a crop or a padding would hide
            exactly the layout changes a comparison is for).
    """
    (h1, w1), (h2, w2) = reference.shape[:2], evidence.shape[:2]
    check_same_size((w1, h1), (w2, h2), labels)
    height, width = reference.shape[:2]
    first, second = words_of(reference), words_of(evidence)
    positions = _differing(first, second)
    delta = distance(first[positions], second[positions])
    return PixelDiff(width, height, first, second, positions, delta)


def _differing(first: Words, second: Words) -> Indices:
    """Flat positions where two word arrays differ, scanning two pixels per 64-bit comparison."""
    even = len(first) - len(first) % 2
    pairs = np.flatnonzero(first[:even].view(np.uint64) != second[:even].view(np.uint64))
    candidates = np.stack((2 * pairs, 2 * pairs + 1), axis=1).reshape(-1)
    if even < len(first):
        candidates = np.append(candidates, even)
    found: Indices = candidates[first[candidates] != second[candidates]]
    return found


def count_differing(reference: Pixels, evidence: Pixels, threshold: float = 0.1, *, count_aa: bool = False) -> int:
    """How many pixels differ beyond ``threshold`` (anti-aliased ones excluded unless ``count_aa``)."""
    diff = compare(reference, evidence)
    over = diff.over(threshold)
    if count_aa or not over.size:
        return int(over.size)
    return int(over.size - np.count_nonzero(diff.antialiased(over)))
