"""Core tool handlers: one module per tool, named after it (bee_context_packet -> context_packet.py).

Each is a plain function ``(ctx, call) -> result`` that raises :class:`bee_contracts.BeeError`; the host binds them
in :mod:`bee_core.tools` and imports each on its first call.
"""

from typing import TYPE_CHECKING

from bee_contracts.lazy import lazy_exports

if TYPE_CHECKING:
    from bee_core.handlers.artifact_query import bee_artifact_query
    from bee_core.handlers.artifact_read import bee_artifact_read
    from bee_core.handlers.artifact_search import bee_artifact_search
    from bee_core.handlers.compression_recover import bee_compression_recover
    from bee_core.handlers.context_compress import bee_context_compress
    from bee_core.handlers.context_packet import bee_context_packet
    from bee_core.handlers.plan_next import bee_plan_next
    from bee_core.handlers.plan_show import bee_plan_show
    from bee_core.handlers.representation_decode import bee_representation_decode
    from bee_core.handlers.representation_encode import bee_representation_encode
    from bee_core.handlers.skill_get import bee_skill_get
    from bee_core.handlers.skill_resolve import bee_skill_resolve
    from bee_core.handlers.skill_search import bee_skill_search

__all__ = [
    "bee_artifact_query",
    "bee_artifact_read",
    "bee_artifact_search",
    "bee_compression_recover",
    "bee_context_compress",
    "bee_context_packet",
    "bee_plan_next",
    "bee_plan_show",
    "bee_representation_decode",
    "bee_representation_encode",
    "bee_skill_get",
    "bee_skill_resolve",
    "bee_skill_search",
]

__getattr__, __dir__ = lazy_exports(__name__, {name: f"{__name__}.{name.removeprefix('bee_')}" for name in __all__})
