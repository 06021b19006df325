"""The compiled per-pixel kernel: pybind11-pixelmatch's colour distance and anti-aliasing checks, in C++.

pybind11-pixelmatch (MIT) is the C++ port of pixelmatch with a Python binding, installed as a prebuilt wheel. Every
decision about one pixel is the kernel's — whether its colour distance exceeds a threshold, whether it is
anti-aliased — so Bee's counts are pixelmatch's. What to hand the kernel (which rows, which pixel pairs) and what
to make of its answers (regions, masks, boxes, shifts) is Bee's, in :mod:`.diff`, :mod:`.boxes` and :mod:`.shift`.

The binding reads its buffers as packed RGBA rows and ignores strides, so every array handed to it here is checked
to be a C-contiguous ``(height, width, 4)`` uint8 array first; a list of pixels is passed as an image one row high.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from pybind11_pixelmatch import Options, pixelmatch

Pixels = npt.NDArray[np.uint8]
Words = npt.NDArray[np.uint32]
Flags = npt.NDArray[np.bool_]


def _options(threshold: float, *, include_aa: bool, mask: bool) -> Options:
    options = Options()
    options.threshold = threshold
    options.includeAA = include_aa
    # With a mask, the output gets the counted pixels only (opaque red) and nothing else is written.
    options.diffMask = mask
    return options


def _check(image: Pixels) -> None:
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 4 or not image.flags.c_contiguous:
        raise ValueError(f"the pixel kernel takes C-contiguous (height, width, 4) uint8 arrays, not {image.shape}")


def run(first: Pixels, second: Pixels, threshold: float, *, include_aa: bool, marks: Pixels | None = None) -> int:
    """How many pixels of two same-size RGBA images differ beyond ``threshold`` (anti-aliased ones left out unless
    ``include_aa``), pixelmatch's count; with ``marks`` (zeros, the same shape), each counted pixel is set there.

    Raises:
        ValueError: an array the kernel cannot read as packed RGBA pixels, or shapes that differ.
    """
    for image in (first, second) if marks is None else (first, second, marks):
        _check(image)
        if image.shape != first.shape:
            raise ValueError(f"the pixel kernel compares arrays of one shape, not {first.shape} and {image.shape}")
    if marks is None:
        counted = pixelmatch(first, second, options=_options(threshold, include_aa=include_aa, mask=False))
    else:
        counted = pixelmatch(first, second, output=marks, options=_options(threshold, include_aa=include_aa, mask=True))
    if counted < 0:  # the binding's answer to buffers it cannot use; the checks above rule that out
        raise ValueError("the pixel kernel refused its buffers")
    return int(counted)


def _row(words: Words) -> Pixels:
    """Pixels as an image one row high (a view of the same memory)."""
    return np.ascontiguousarray(words, dtype=np.uint32).view(np.uint8).reshape(1, -1, 4)


def exceeding(first: Words, second: Words, threshold: float) -> Flags:
    """Whether the colour distance of each pair of pixels ``first[k]``, ``second[k]`` (RGBA words) exceeds
    ``threshold``: the kernel's per-pixel test alone, with no neighbourhood (nothing is judged anti-aliased)."""
    if not first.size:
        return np.zeros(0, dtype=bool)
    marks = np.zeros(first.size, dtype=np.uint32)
    run(_row(first), _row(second), threshold, include_aa=True, marks=_row(marks))
    flags: Flags = marks != 0
    return flags


def count_exceeding(first: Words, second: Words, threshold: float) -> int:
    """How many pairs of pixels (RGBA words) differ beyond ``threshold`` (the count of :func:`exceeding`)."""
    if not first.size:
        return 0
    return run(_row(first), _row(second), threshold, include_aa=True)
