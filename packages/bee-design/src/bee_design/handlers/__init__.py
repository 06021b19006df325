"""Design tool handlers: one module per tool, named after it, holding one function of the tool's name.

``bee_design_slice`` is :func:`bee_design.handlers.design_slice.bee_design_slice`. Each is a plain function
``(ctx: DesignContext, call: Call[<Tool>Args]) -> <Tool>Result`` that raises :class:`bee_contracts.BeeError`;
:mod:`bee_design.host` binds them by that rule (:mod:`bee_hostkit.handlers`) and imports each on its tool's first
call (so start-up pays for neither numpy nor Pillow); this package re-exports nothing: the catalog is the only list
of tools.
"""

__all__: list[str] = []
