"""Visual specs and reports: the pixel diff (:mod:`.diff`, with :mod:`.kernel`, :mod:`.boxes` and :mod:`.shift`),
specs (:mod:`.spec`) and the untrusted assessment (:mod:`.report`). numpy, Pillow and the kernel load on first use."""

from typing import TYPE_CHECKING

from bee_contracts.lazy import lazy_exports

if TYPE_CHECKING:
    from bee_design.visual.diff import PixelDiff, compare, count_differing
    from bee_design.visual.report import build_report
    from bee_design.visual.spec import Spec, Tolerance, load_spec

__all__ = ["PixelDiff", "Spec", "Tolerance", "build_report", "compare", "count_differing", "load_spec"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "PixelDiff": "bee_design.visual.diff",
        "Spec": "bee_design.visual.spec",
        "Tolerance": "bee_design.visual.spec",
        "build_report": "bee_design.visual.report",
        "compare": "bee_design.visual.diff",
        "count_differing": "bee_design.visual.diff",
        "load_spec": "bee_design.visual.spec",
    },
)
