"""Artifacts: bytes retained by `bee artifact add`, searched, queried and read back exactly by the core tools.

Modules, one concept each: :mod:`.records` (metadata, ids), :mod:`.content` (hashing, kinds), :mod:`.store`
(layout, atomic ingestion), :mod:`.verify` (tamper detection), :mod:`.ripgrep` and :mod:`.search` (literal line
search), :mod:`.query` and :mod:`.rows` (the query language over JSON rows), :mod:`.pages` (exact byte pages),
:mod:`.cli` (`bee artifact …`). This package imports nothing heavy, so the CLI starts fast.
"""
