"""Counted nouns for what people read: "1 bundle", "2 bundles", never "1 bundles"."""

from __future__ import annotations

#: Plurals that do not just add "s".
_IRREGULAR = {"entry": "entries", "match": "matches", "box": "boxes", "index": "indexes", "query": "queries"}


def plural(noun: str) -> str:
    """The plural of ``noun``, for the nouns Bee's messages count."""
    return _IRREGULAR.get(noun, noun + "s")


def counted(count: int, noun: str, plural_form: str | None = None) -> str:
    """``count`` and ``noun`` in the singular for exactly one, in the plural otherwise: ``counted(1, "file")`` is
    ``"1 file"``, ``counted(0, "file")`` is ``"0 files"``."""
    return f"{count} {noun if count == 1 else plural_form or plural(noun)}"
