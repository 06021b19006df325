"""Design tool handlers: one module per tool, named after it (bee_design_slice -> design_slice.py).

Each is a plain function ``(ctx, call) -> result`` that raises :class:`bee_contracts.BeeError`; the host binds them
in :mod:`bee_design.tools` and imports each on its first call.
"""

from typing import TYPE_CHECKING

from bee_contracts.lazy import lazy_exports

if TYPE_CHECKING:
    from bee_design.handlers.design_list import bee_design_list
    from bee_design.handlers.design_slice import bee_design_slice
    from bee_design.handlers.design_verify import bee_design_verify
    from bee_design.handlers.visual_report import bee_visual_report

__all__ = ["bee_design_list", "bee_design_slice", "bee_design_verify", "bee_visual_report"]

__getattr__, __dir__ = lazy_exports(__name__, {name: f"{__name__}.{name.removeprefix('bee_')}" for name in __all__})
