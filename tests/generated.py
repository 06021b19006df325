"""A generated section of a Markdown page: the text between two markers, rewritten by ``./dev docs`` and checked by a
test for drift (the module map and the tool map of docs/development.md)."""

from __future__ import annotations

from pathlib import Path


def rewritten(text: str, begin: str, end: str, section: str, page: Path) -> str:
    """``text`` with the part from ``begin`` to ``end`` (markers included) replaced by ``section``.

    Raises:
        ValueError: ``text`` (the page ``page``) lacks the markers.
    """
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        raise ValueError(f"{page} has no markers {begin!r} … {end!r}")
    return text[:start] + section + text[stop + len(end) :]


def write(page: Path, begin: str, end: str, section: str) -> None:
    """Rewrite the section of ``page`` when it changed (and say which file was written)."""
    text = page.read_text(encoding="utf-8")
    new = rewritten(text, begin, end, section, page)
    if new != text:
        page.write_text(new, encoding="utf-8")
        print(page)
