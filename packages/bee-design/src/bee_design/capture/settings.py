"""The settings that make a capture repeatable: the same page gives the same pixels, run after run.

Chromium runs headless from a fresh, empty profile with background networking, component updates, sync, QUIC
and the GPU off (on a closed network those only fail, slowly, and the GPU path is not deterministic), with font
hinting off, sRGB colour, hidden scrollbars, and without the sandbox when running as root (Chromium refuses to
start as root with it). Pages get a fixed locale, time zone, colour scheme and clock, reduced motion, device
scale 1; screenshots are taken with animations stopped and the caret hidden, after the load event, after
``document.fonts.ready`` and two animation frames.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

#: Where Debian's chromium package puts the browser; override with --browser or $BEE_CHROMIUM.
DEFAULT_BROWSER: Final = "/usr/bin/chromium"
ENV_BROWSER: Final = "BEE_CHROMIUM"

FLAGS: Final = (
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--font-render-hinting=none",
    "--force-color-profile=srgb",
    "--disable-lcd-text",
)

#: Applied while the screenshot is taken: no scrollbars, whatever the page's own CSS says.
SCREENSHOT_STYLE: Final = (
    "::-webkit-scrollbar { display: none !important; } "
    "html, body { scrollbar-width: none !important; } "
    "* { caret-color: transparent !important; }"
)

#: Date.now() and new Date() in every page (timers still run).
FIXED_TIME: Final = "2026-01-01T00:00:00Z"


def browser_executable(given: str | None = None) -> str:
    return given or os.environ.get(ENV_BROWSER) or DEFAULT_BROWSER


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@dataclass(frozen=True)
class Viewport:
    name: str
    width: int
    height: int


@dataclass(frozen=True)
class Settings:
    """Everything a capture run fixes, recorded in evidence.json."""

    executable: str
    viewports: tuple[Viewport, ...]
    #: The most one page may take at one viewport, from navigation to its fonts read.
    timeout_seconds: float = 30.0
    wait_for: str | None = None
    full_page: bool = False
    locale: str = "en-US"
    timezone: str = "UTC"
    color_scheme: str = "light"
    #: Whether the main frame may go to another origin (scheme, host, port) than the URL given.
    allow_cross_origin: bool = False
    flags: tuple[str, ...] = field(default=FLAGS)

    def launch_flags(self) -> list[str]:
        """The flags Bee passes (Playwright adds --headless, a fresh --user-data-dir and its own automation flags)."""
        flags = list(self.flags)
        if running_as_root():
            flags.append("--no-sandbox")
        return flags

    def context_options(self) -> dict[str, Any]:
        first = self.viewports[0]
        return {
            "viewport": {"width": first.width, "height": first.height},
            "device_scale_factor": 1,
            "locale": self.locale,
            "timezone_id": self.timezone,
            "color_scheme": self.color_scheme,
            "reduced_motion": "reduce",
            "forced_colors": "none",
            "service_workers": "block",
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "viewports": {v.name: [v.width, v.height] for v in self.viewports},
            "deviceScaleFactor": 1,
            "locale": self.locale,
            "timezone": self.timezone,
            "colorScheme": self.color_scheme,
            "reducedMotion": "reduce",
            "clock": FIXED_TIME,
            "animations": "disabled",
            "caret": "hide",
            "scrollbars": "hidden",
            "waitUntil": "load",
            "fontsReady": True,
            "waitFor": self.wait_for,
            "fullPage": self.full_page,
            "timeoutSeconds": self.timeout_seconds,
            "crossOrigin": "allowed" if self.allow_cross_origin else "refused",
            "profile": "fresh",
        }


def executable_exists(executable: str) -> bool:
    path = Path(executable)
    return path.is_file() and os.access(path, os.X_OK)
