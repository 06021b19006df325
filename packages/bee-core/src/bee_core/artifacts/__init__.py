"""Artifacts: bytes retained by `bee artifact add`, searched, queried and read back exactly by the core tools.

Modules, one concept each: :mod:`.records` (metadata, ids), :mod:`.content` (hashing, kinds), :mod:`.store`
(layout, atomic ingestion), :mod:`.verify` (tamper detection), :mod:`.ripgrep` and :mod:`.search` (literal line
search), :mod:`.query` and :mod:`.rows` (the query language over JSON rows), :mod:`.pages` (exact byte pages),
:mod:`bee_core.cli.artifact` (`bee artifact …`). This package imports nothing heavy, so the CLI starts fast.
"""

from typing import TYPE_CHECKING

from bee_contracts.lazy import lazy_exports

if TYPE_CHECKING:
    from bee_core.artifacts.pages import read_page
    from bee_core.artifacts.query import Query, parse_query
    from bee_core.artifacts.records import ArtifactRecord, DamagedRecord
    from bee_core.artifacts.rows import RowsCache, load_rows
    from bee_core.artifacts.search import SearchCache
    from bee_core.artifacts.state import ArtifactState
    from bee_core.artifacts.store import ArtifactStore
    from bee_core.artifacts.verify import Verifier

__all__ = [
    "ArtifactRecord",
    "ArtifactState",
    "ArtifactStore",
    "DamagedRecord",
    "Query",
    "RowsCache",
    "SearchCache",
    "Verifier",
    "load_rows",
    "parse_query",
    "read_page",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ArtifactRecord": "bee_core.artifacts.records",
        "ArtifactState": "bee_core.artifacts.state",
        "ArtifactStore": "bee_core.artifacts.store",
        "DamagedRecord": "bee_core.artifacts.records",
        "Query": "bee_core.artifacts.query",
        "RowsCache": "bee_core.artifacts.rows",
        "SearchCache": "bee_core.artifacts.search",
        "Verifier": "bee_core.artifacts.verify",
        "load_rows": "bee_core.artifacts.rows",
        "parse_query": "bee_core.artifacts.query",
        "read_page": "bee_core.artifacts.pages",
    },
)
