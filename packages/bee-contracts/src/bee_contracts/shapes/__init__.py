"""Typed shapes of every tool's arguments and result, generated from the catalogs by :mod:`bee_contracts.codegen`.

``shapes.core.ContextPacketArgs`` is what ``bee_context_packet``'s handler finds in ``call.args`` (defaults filled
in), ``shapes.core.ContextPacketResult`` what it returns. Handlers import them for type checking only, so they cost
nothing at start-up. A test fails when these modules drift from the catalogs; regenerate them with ``./dev docs``.
"""

__all__: list[str] = []
