"""The evidence folder `bee design capture` writes: one PNG per page and viewport, and ``evidence.json``.

``evidence.json`` records the producer, the browser (version, executable, flags, its full command line), the
capture settings, and per screenshot its page, viewport, file, sha256, size, the fonts the browser matched and the
URL the page ended at (``finalUrl``: after redirects and navigations, which may leave the origin only when allowed);
and the MAC from this root's evidence key that says Bee wrote it here (:mod:`.seal`).
A screenshot file is named ``<name>--<viewport>.png`` (characters outside ``A-Z a-z 0-9 . _ -`` become ``_``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final

from bee_contracts import BeeError, invalid
from bee_design import digests
from bee_design.capture import seal
from bee_design.schemas import validator

EVIDENCE_FILE: Final = "evidence.json"
#: Largest ``evidence.json`` read (Bee writes a few KiB per screenshot).
RECORD_MAX_BYTES: Final = 4 * 1024 * 1024
#: What evidence.json says wrote it, when Bee did.
PRODUCER: Final = "bee design capture"

NAME: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._:/-]{0,254}$")
VIEWPORT_NAME: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$")


def file_name(name: str, viewport: str) -> str:
    """The screenshot file of page ``name`` at ``viewport``."""
    return f"{re.sub(r'[^A-Za-z0-9._-]', '_', name)}--{viewport}.png"


@dataclass(frozen=True)
class Font:
    family: str
    post_script_name: str
    custom: bool
    glyphs: int

    def to_json(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "postScriptName": self.post_script_name,
            "custom": self.custom,
            "glyphs": self.glyphs,
        }

    @property
    def key(self) -> str:
        return f"{self.family} ({self.post_script_name})" if self.post_script_name else self.family


@dataclass(frozen=True)
class Capture:
    """One screenshot: which page, at which viewport, in which file, with which fonts."""

    name: str
    url: str
    viewport: str
    width: int
    height: int
    file: str
    sha256: str
    bytes: int
    image_width: int
    image_height: int
    fonts: tuple[Font, ...]
    seconds: float = 0.0
    #: The main frame's URL when the screenshot was taken (after redirects and navigations); None in older records.
    final_url: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "url": self.url,
            "viewport": self.viewport,
            "width": self.width,
            "height": self.height,
            "file": self.file,
            "sha256": self.sha256,
            "bytes": self.bytes,
            "imageWidth": self.image_width,
            "imageHeight": self.image_height,
            "fonts": [font.to_json() for font in self.fonts],
            "seconds": self.seconds,
        } | ({"finalUrl": self.final_url} if self.final_url is not None else {})


@dataclass(frozen=True)
class Evidence:
    producer: str
    version: str
    captured_at: str
    browser: dict[str, Any]
    settings: dict[str, Any]
    captures: tuple[Capture, ...]

    def to_bytes(self, key: bytes | None = None) -> bytes:
        """``evidence.json``'s bytes; with this root's evidence ``key``, sealed with its MAC."""
        body: dict[str, Any] = {
            "schemaVersion": 1,
            "producer": self.producer,
            "version": self.version,
            "capturedAt": self.captured_at,
            "browser": self.browser,
            "settings": self.settings,
            "captures": [capture.to_json() for capture in self.captures],
        }
        if key is not None:
            body[seal.MAC_FIELD] = seal.sign(body, key)
        return (json.dumps(body, indent=2, ensure_ascii=False) + "\n").encode("utf-8")

    @property
    def browser_version(self) -> str | None:
        version = self.browser.get("version")
        return str(version) if version else None


def parse_evidence(data: bytes, where: str) -> Evidence:
    """Parse an ``evidence.json``.

    Raises:
        BeeError: ``invalid_argument`` when it is not valid JSON or breaks the schema.
    """
    try:
        raw: Any = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _bad(where, f"is not valid JSON ({exc})") from None
    validator("evidence", where).check(raw)
    return Evidence(
        producer=raw["producer"],
        version=raw["version"],
        captured_at=raw["capturedAt"],
        browser=raw["browser"],
        settings=raw["settings"],
        captures=tuple(
            Capture(
                c["name"],
                c["url"],
                c["viewport"],
                c["width"],
                c["height"],
                c["file"],
                c["sha256"],
                c["bytes"],
                c["imageWidth"],
                c["imageHeight"],
                tuple(Font(f["family"], f["postScriptName"], f["custom"], f["glyphs"]) for f in c["fonts"]),
                float(c.get("seconds", 0.0)),
                c.get("finalUrl"),
            )
            for c in raw["captures"]
        ),
    )


def _bad(where: str, why: str) -> BeeError:
    return invalid(f"{where} {why}; capture again with `bee design capture`")


def intact(data: bytes, capture: Capture) -> bool:
    """Whether a screenshot's bytes still have the size and sha256 recorded for ``capture``."""
    return len(data) == capture.bytes and digests.of_bytes(data) == capture.sha256
