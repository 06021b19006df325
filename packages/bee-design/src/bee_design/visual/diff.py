"""Per-pixel comparison of two RGBA images of the same size: the compiled kernel judges each pixel, numpy finds
which pixels to give it.

The colour difference is the perceptual YIQ distance pixelmatch uses (Kotsarenko and Ramos, "Measuring perceived
color difference using YIQ NTSC transmission color space"), on colours blended over white: a pixel differs when
its squared distance exceeds ``35215 × threshold²`` (35215 is the largest possible), so ``threshold`` runs from 0
(any change) to 1. A differing pixel is anti-aliased, as in pixelmatch, when among its eight neighbours it has
both a darker and a brighter one, at most two of equal brightness, and the darkest or the brightest of them sits
in a flat area (more than two identical neighbours) in both images — the soft edge of a shape drawn slightly
differently, not a change of content. Both tests are pybind11-pixelmatch's own (:mod:`.kernel`), so counts are
pixelmatch's.

The work is proportional to what differs. Images that are equal byte for byte are told so by one ``memcmp``.
Otherwise the pixels whose RGBA values differ are found by comparing the images as 64-bit words, the kernel
measures the colour distance of those pixel pairs alone, and the anti-aliasing checks run on bands of whole rows
around them, with :data:`MARGIN` rows to spare on each side: a check reads a pixel's neighbours and theirs, so a
band gives the answers the whole image would. Pillow's ImageChops is not used: its ``difference().getbbox()``
ignores RGB-only changes by default and silently compares only the overlap of images of different sizes.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from bee_contracts import invalid
from bee_design.visual import kernel
from bee_design.visual.images import Pixels

#: Rows an anti-aliasing check reads on each side of a pixel (its neighbours' neighbours).
MARGIN: Final = 2

Indices = npt.NDArray[np.intp]
Flags = npt.NDArray[np.bool_]
Words = npt.NDArray[np.uint32]


def words_of(image: Pixels) -> Words:
    """Each RGBA pixel as one 32-bit word, flat in row-major order (equal words are equal pixels)."""
    contiguous = np.ascontiguousarray(image)
    return contiguous.view(np.uint32).reshape(-1)


@functools.cache
def _memcmp() -> Callable[[int, int, int], int]:
    # libc's memcmp stops at the first difference and runs at memory speed; numpy has no comparison that does both.
    function = ctypes.CDLL(None).memcmp
    function.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
    function.restype = ctypes.c_int
    return function


def same_pixels(first: Pixels, second: Pixels) -> bool:
    """Whether two C-contiguous images of one shape hold the same bytes."""
    return _memcmp()(first.ctypes.data, second.ctypes.data, first.nbytes) == 0


def bands(rows: Indices, height: int) -> list[tuple[int, int]]:
    """Disjoint ranges of rows ``[start, stop)`` that hold every row in ``rows`` (sorted, each once) with
    :data:`MARGIN` rows beyond it on both sides, except where the image ends."""
    if not rows.size:
        return []
    # Rows more than 2 × MARGIN apart get bands of their own; closer ones share one, so no two bands overlap.
    breaks = np.flatnonzero(np.diff(rows) > 2 * MARGIN)
    firsts, lasts = rows[np.r_[0, breaks + 1]], rows[np.r_[breaks, rows.size - 1]]
    return [
        (max(0, first - MARGIN), min(height, last + MARGIN + 1))
        for first, last in zip(firsts.tolist(), lasts.tolist(), strict=True)
    ]


@dataclass
class PixelDiff:
    """The pixels of two same-size images whose colour distance exceeds ``floor``, the lowest threshold it answers
    for.

    ``positions`` are flat row-major indices of those pixels (``ys``/``xs`` their coordinates). Which of them exceed
    a higher threshold, and which are anti-aliased, is asked of the kernel on demand and remembered.
    """

    width: int
    height: int
    reference: Pixels
    evidence: Pixels
    floor: float
    positions: Indices
    _exceeds: dict[float, Flags] = field(default_factory=dict, init=False, repr=False)
    _aa: Flags | None = field(default=None, init=False, repr=False)

    @property
    def ys(self) -> Indices:
        return self.positions // self.width

    @property
    def xs(self) -> Indices:
        return self.positions % self.width

    @property
    def reference_words(self) -> Words:
        return words_of(self.reference)

    @property
    def evidence_words(self) -> Words:
        return words_of(self.evidence)

    def exceeds(self, threshold: float) -> Flags:
        """Whether each pixel's colour distance exceeds ``threshold`` (one flag per entry of ``positions``).

        Raises:
            ValueError: ``threshold`` is below the floor this diff was made for (pixels under it are not kept).
        """
        if threshold < self.floor:
            raise ValueError(f"this diff holds the pixels over threshold {self.floor}, not {threshold}")
        if threshold == self.floor:
            return np.ones(self.positions.size, dtype=bool)
        flags = self._exceeds.get(threshold)
        if flags is None:
            flags = kernel.exceeding(
                self.reference_words[self.positions], self.evidence_words[self.positions], threshold
            )
            self._exceeds[threshold] = flags
        return flags

    def over(self, threshold: float) -> Indices:
        """Indices (into ``positions``) of the pixels whose colour distance exceeds ``threshold``."""
        return np.flatnonzero(self.exceeds(threshold))

    def antialiased(self, index: Indices) -> Flags:
        """Whether each pixel ``positions[index[k]]`` is anti-aliased in either image."""
        if self._aa is None:
            self._aa = self._antialiasing()
        flags: Flags = self._aa[index]
        return flags

    def _antialiasing(self) -> Flags:
        flags = np.zeros(self.positions.size, dtype=bool)
        for start, stop in bands(_distinct_rows(self.positions, self.width), self.height):
            # The kernel marks the pixels it counts: over the floor and not anti-aliased. Every pixel here is over
            # the floor, so an unmarked one is anti-aliased.
            marks = np.zeros((stop - start, self.width, 4), dtype=np.uint8)
            kernel.run(self.reference[start:stop], self.evidence[start:stop], self.floor, include_aa=False, marks=marks)
            lo, hi = np.searchsorted(self.positions, (start * self.width, stop * self.width)).tolist()
            flags[lo:hi] = words_of(marks)[self.positions[lo:hi] - start * self.width] == 0
        return flags


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


def compare(
    reference: Pixels,
    evidence: Pixels,
    *,
    threshold: float = 0.0,
    labels: tuple[str, str] = ("reference", "evidence"),
) -> PixelDiff:
    """The pixels of two images of the same size whose colour distance exceeds ``threshold`` (the lowest any
    question to the diff will use; 0 keeps every visible change).

    Raises:
        BeeError: ``invalid_argument`` when the sizes differ (nothing is compared: a crop or a padding would hide
            exactly the layout changes a comparison is for).
    """
    (h1, w1), (h2, w2) = reference.shape[:2], evidence.shape[:2]
    check_same_size((w1, h1), (w2, h2), labels)
    first, second = np.ascontiguousarray(reference), np.ascontiguousarray(evidence)
    if same_pixels(first, second):
        positions: Indices = np.zeros(0, dtype=np.intp)
    else:
        a, b = words_of(first), words_of(second)
        differing = _differing(a, b)
        positions = differing[kernel.exceeding(a[differing], b[differing], threshold)]
    return PixelDiff(w1, h1, first, second, threshold, positions)


def _differing(first: Words, second: Words) -> Indices:
    """Flat positions where two word arrays differ."""
    found: Indices = np.flatnonzero(first != second)
    return found


def _distinct_rows(positions: Indices, width: int) -> Indices:
    """The rows of flat ``positions`` (sorted), each once."""
    rows = positions // width
    distinct: Indices = rows[np.r_[True, rows[1:] != rows[:-1]]] if rows.size else rows
    return distinct


def count_differing(reference: Pixels, evidence: Pixels, threshold: float = 0.1, *, count_aa: bool = False) -> int:
    """How many pixels differ beyond ``threshold`` (anti-aliased ones excluded unless ``count_aa``): pixelmatch's
    count, from the kernel run on the rows where pixels differ.

    Raises:
        BeeError: ``invalid_argument`` when the sizes differ.
    """
    (h1, w1), (h2, w2) = reference.shape[:2], evidence.shape[:2]
    check_same_size((w1, h1), (w2, h2), ("reference", "evidence"))
    first, second = np.ascontiguousarray(reference), np.ascontiguousarray(evidence)
    if same_pixels(first, second):
        return 0
    differ = (words_of(first) != words_of(second)).reshape(h1, w1).any(axis=1)
    return sum(
        kernel.run(first[start:stop], second[start:stop], threshold, include_aa=count_aa)
        for start, stop in bands(np.flatnonzero(differ), h1)
    )
