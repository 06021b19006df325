"""PNG images, and nothing else, decoded within bounds: the one way the design package reads an image.

Evidence screenshots, reference images and `bee visual diff` inputs are PNG. Before Pillow sees a byte, the file's
size is checked against :data:`~bee_contracts.limits.IMAGE_MAX_BYTES`, and the PNG signature and header chunk
(IHDR, which the PNG specification puts first) are read here: the dimensions are known, and checked against
:data:`~bee_contracts.limits.IMAGE_MAX_PIXELS` and against what the caller expects, without decoding a pixel.
Pillow is then asked for PNG alone (``formats=["PNG"]``), so no other decoder runs — in particular not its EPS
plugin, which starts Ghostscript. Pillow's own ``Image.MAX_IMAGE_PIXELS`` is not relied on: it is process-global,
and below twice its value it only warns.
"""

from __future__ import annotations

import io
import os
import stat
import struct
import zlib
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from bee_contracts import invalid
from bee_contracts.limits import IMAGE_MAX_BYTES, IMAGE_MAX_PIXELS

#: The eight bytes every PNG file starts with.
PNG_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
# The signature, then the IHDR chunk: length (13), type, width, height, five one-byte fields, CRC.
_HEADER: Final = struct.Struct(">8sI4sII5BI")

Pixels = npt.NDArray[np.uint8]


def check_file_size(size: int, label: str) -> None:
    """Refuse an image file of ``size`` bytes before it is read when it is over the byte limit.

    Raises:
        BeeError: ``invalid_argument`` over :data:`~bee_contracts.limits.IMAGE_MAX_BYTES`.
    """
    if size > IMAGE_MAX_BYTES:
        raise invalid(f"{label} is {size} bytes, over the {IMAGE_MAX_BYTES}-byte limit for an image")


def read_png(path: Path, label: str) -> bytes:
    """The bytes of the image file at ``path`` (one the user named on the command line), size checked first.

    Opened non-blocking, so a FIFO or device in its place is refused instead of waited on.

    Raises:
        BeeError: ``invalid_argument`` for something that is not a regular file, or a file over the byte limit.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise invalid(f"cannot open {label}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise invalid(f"{label} is not a regular file; give a PNG file")
        check_file_size(info.st_size, label)
        return file.read(info.st_size)


def png_size(data: bytes, label: str) -> tuple[int, int]:
    """``(width, height)`` from the PNG header, decoding nothing; checked against the pixel limit.

    Raises:
        BeeError: ``invalid_argument`` when ``data`` is not a PNG (any other format, however Pillow could read it),
            its header is damaged, or it has more than :data:`~bee_contracts.limits.IMAGE_MAX_PIXELS` pixels.
    """
    if len(data) < _HEADER.size or not data.startswith(PNG_SIGNATURE):
        raise invalid(f"{label} is not a PNG image; Bee compares PNG files only (capture it again)")
    _, length, kind, width, height, *_, crc = _HEADER.unpack_from(data)
    if length != 13 or kind != b"IHDR" or zlib.crc32(data[12:29]) != crc:
        raise invalid(f"{label} is not a readable PNG image (its header chunk is damaged); capture it again")
    if not width or not height:
        raise invalid(f"{label} is a PNG of {width}×{height} pixels; an image has at least one pixel")
    if width * height > IMAGE_MAX_PIXELS:
        raise invalid(
            f"{label} is {width}×{height}, over the {IMAGE_MAX_PIXELS}-pixel limit for an image; nothing was decoded",
            width=width,
            height=height,
        )
    return width, height


def decode_rgba(data: bytes, label: str) -> Pixels:
    """The PNG image in ``data`` as a ``(height, width, 4)`` uint8 array, its header checked before decoding.

    Raises:
        BeeError: ``invalid_argument`` as :func:`png_size`, and when the image data cannot be decoded.
    """
    from PIL import Image

    width, height = png_size(data, label)
    try:
        # PNG alone: no other plugin (and no external program one might start) ever sees the bytes.
        with Image.open(io.BytesIO(data), formats=["PNG"]) as image:
            if image.size != (width, height):  # Pillow read another header than the one checked above
                raise invalid(f"{label} is not a readable PNG image (its header is ambiguous); capture it again")
            rgba = image.convert("RGBA")
    # Pillow reports a damaged PNG as OSError (UnidentifiedImageError is one), SyntaxError (a broken chunk),
    # ValueError, or its DecompressionBombError (an Exception), whichever its parser met first.
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise invalid(f"{label} is not a readable PNG image ({exc.__class__.__name__}); capture it again") from None
    with rgba:
        return np.asarray(rgba, dtype=np.uint8)
