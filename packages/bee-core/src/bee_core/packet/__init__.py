"""Source packets: a manifest of selections read from the checkout and packed under a byte budget.

:mod:`.manifest` parses and orders the selections, :mod:`.source` reads a file through the confined root,
:mod:`.languages` and :mod:`.outline` make tree-sitter outlines, :mod:`.cache` keeps what is learnt per content hash,
:mod:`.items` builds one item per selection and :mod:`.pack` fits them into the result, never partially.
"""

from typing import TYPE_CHECKING

from bee_contracts.lazy import lazy_exports

if TYPE_CHECKING:
    from bee_core.packet.cache import ContentCache
    from bee_core.packet.items import build_item
    from bee_core.packet.manifest import Manifest, Selection, parse_manifest
    from bee_core.packet.outline import Outline, outline
    from bee_core.packet.pack import pack
    from bee_core.packet.source import SourceFile, read_source

__all__ = [
    "ContentCache",
    "Manifest",
    "Outline",
    "Selection",
    "SourceFile",
    "build_item",
    "outline",
    "pack",
    "parse_manifest",
    "read_source",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ContentCache": "bee_core.packet.cache",
        "Manifest": "bee_core.packet.manifest",
        "Outline": "bee_core.packet.outline",
        "Selection": "bee_core.packet.manifest",
        "SourceFile": "bee_core.packet.source",
        "build_item": "bee_core.packet.items",
        "outline": "bee_core.packet.outline",
        "pack": "bee_core.packet.pack",
        "parse_manifest": "bee_core.packet.manifest",
        "read_source": "bee_core.packet.source",
    },
)
