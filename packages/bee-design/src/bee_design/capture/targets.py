"""What a capture is asked for: the pages (``NAME=URL``) and the viewports (``NAME=WIDTHxHEIGHT``), read from the
command line."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bee_contracts import invalid
from bee_design.capture.evidence import NAME, VIEWPORT_NAME
from bee_design.capture.settings import Viewport


@dataclass(frozen=True)
class Target:
    """A page to capture and the name its screenshots go by."""

    name: str
    url: str


def parse_target(text: str) -> Target:
    """``NAME=URL`` or ``URL`` (the name is then the URL's path: ``/`` is ``index``, ``/a/b.html`` ``a/b.html``).

    Raises:
        BeeError: ``invalid_argument`` for a URL that is not http(s) or file, or a bad name.
    """
    name, sep, url = text.partition("=")
    if not sep or "://" in name:
        name, url = "", text
    if not re.match(r"^(https?|file)://", url):
        raise invalid(f"{url!r} is not an http(s):// or file:// URL; give URL or NAME=URL")
    if not name:
        path = re.sub(r"^[a-z]+://[^/]*", "", url).split("?", 1)[0].split("#", 1)[0].strip("/")
        name = re.sub(r"[^A-Za-z0-9._:/-]+", "-", path) or "index"
        if not re.match(r"[A-Za-z0-9_]", name):
            name = "_" + name
    if not NAME.match(name):
        raise invalid(
            f"capture name {name!r} is not valid; use letters, digits and . _ : / - (up to 255), e.g. home=URL"
        )
    return Target(name, url)


def parse_viewport(text: str) -> Viewport:
    """``NAME=WIDTHxHEIGHT``, e.g. ``desktop=1440x900``.

    Raises:
        BeeError: ``invalid_argument`` saying the expected form.
    """
    match = re.fullmatch(r"([^=]+)=(\d{1,5})x(\d{1,5})", text.strip())
    if not match or not VIEWPORT_NAME.match(match.group(1)):
        raise invalid(f"viewport {text!r} is not NAME=WIDTHxHEIGHT (e.g. desktop=1440x900, mobile=390x844)")
    width, height = int(match.group(2)), int(match.group(3))
    if not (1 <= width <= 16384 and 1 <= height <= 16384):
        raise invalid(f"viewport {text!r}: width and height must be 1–16384 pixels")
    return Viewport(match.group(1), width, height)
