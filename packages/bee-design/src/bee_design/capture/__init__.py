"""Browser capture: the system Chromium driven by Playwright (:mod:`.runner`) over the pages and viewports asked for
(:mod:`.targets`) with repeatable settings (:mod:`.settings`), and the evidence folder it writes (:mod:`.evidence`).
Playwright loads only when a capture runs."""

from typing import TYPE_CHECKING

from bee_contracts.lazy import lazy_exports

if TYPE_CHECKING:
    from bee_design.capture.evidence import Evidence, parse_evidence
    from bee_design.capture.runner import capture
    from bee_design.capture.settings import Settings, Viewport
    from bee_design.capture.targets import Target

__all__ = ["Evidence", "Settings", "Target", "Viewport", "capture", "parse_evidence"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Evidence": "bee_design.capture.evidence",
        "Settings": "bee_design.capture.settings",
        "Target": "bee_design.capture.targets",
        "Viewport": "bee_design.capture.settings",
        "capture": "bee_design.capture.runner",
        "parse_evidence": "bee_design.capture.evidence",
    },
)
