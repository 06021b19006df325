"""Decoding images as RGBA pixel arrays, bounded before any pixel is decoded."""

from __future__ import annotations

import io
from typing import Final

import numpy as np
import numpy.typing as npt

from bee_contracts import invalid

#: Largest image compared, in pixels (a 4K full-page capture is ~30 M); checked from the header before decoding,
#: and below Pillow's own decompression-bomb limit.
MAX_PIXELS: Final = 40_000_000

Pixels = npt.NDArray[np.uint8]


def decode_rgba(data: bytes, label: str) -> Pixels:
    """The image in ``data`` as a ``(height, width, 4)`` uint8 array.

    Raises:
        BeeError: ``invalid_argument`` when it is not an image Pillow reads, or has more than :data:`MAX_PIXELS`.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise invalid(f"{label} is {width}×{height}, over the {MAX_PIXELS}-pixel limit for a comparison")
            rgba = image.convert("RGBA")
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise invalid(f"{label} is not a readable image ({exc.__class__.__name__}); capture it again") from None
    return np.asarray(rgba, dtype=np.uint8)


def image_size(data: bytes, label: str) -> tuple[int, int]:
    """``(width, height)`` from the image header, without decoding pixels.

    Raises:
        BeeError: ``invalid_argument`` when ``data`` is not an image.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.size
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise invalid(f"{label} is not a readable image ({exc.__class__.__name__})") from None
