"""Core tool handlers: one module per tool, named after it, holding one function of the tool's name.

``bee_context_packet`` is :func:`bee_core.handlers.context_packet.bee_context_packet`. Each is a plain function
``(ctx: CoreContext, call: Call[<Tool>Args]) -> <Tool>Result`` that raises :class:`bee_contracts.BeeError`;
:mod:`bee_core.host` binds them by that rule (:mod:`bee_hostkit.handlers`) and imports each on its tool's first call,
so this package re-exports nothing: the catalog is the only list of tools.
"""

__all__: list[str] = []
