"""The start tags of an HTML or SVG document and the text of its ``<style>`` elements, in linear time.

This is the part of the HTML Standard's tokenizer that decides what a browser loads: ``<`` followed by a letter
opens a tag whose attributes are separated by whitespace or ``/`` and whose values are double-quoted,
single-quoted or unquoted (a ``>`` inside quotes does not end the tag); comments, ``<!…>``, ``<?…>`` and CDATA
sections hold no tags; a tag the document ends inside is dropped, as a browser drops it; the text of ``script``,
``style``, ``textarea``, ``title`` and the other raw-text elements runs to their end tag, so markup inside a
script's strings is not taken for tags. Names are lowercased, the first of two same-named attributes wins, and
character references in values are decoded. Unlike the HTML Standard, a self-closing ``<style/>`` has no text (it
has none in SVG, which is XML), and no tree is built: nesting never matters to what is loaded.

Why not :mod:`html.parser`: on Python 3.11 it rescans an unfinished tag or comment from its start at every later
``<``, so 8 KiB of ``<a `` take seconds and a megabyte takes hours. Here every step matches at the cursor with
possessive quantifiers (``*+``, which never give back what they took) and literal searches, so no character is
examined more than a small, fixed number of times, whatever the input holds.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Final, NamedTuple

_SPACE: Final = r"\t\n\f\r\x20"  # the HTML Standard's ASCII whitespace (\s would take Unicode spaces too)


def _attribute(group: str) -> str:
    """One attribute: a name (its first character may even be '='), then optionally '=' and a value; with
    ``group`` set to ``"?P<{}>"`` its parts are captured as ``name``, ``dq``, ``sq`` and ``uq``."""
    name, dq, sq, uq = (group.format(part) if group else "?:" for part in ("name", "dq", "sq", "uq"))
    return (
        rf"({name}[^{_SPACE}/>][^{_SPACE}/>=]*+)"
        rf"(?:[{_SPACE}]*+=[{_SPACE}]*+"
        rf"(?:\"({dq}[^\"]*+)\"?|'({sq}[^']*+)'?|({uq}[^{_SPACE}>]*+)))?"
    )


_ATTRIBUTES: Final = re.compile(rf"[{_SPACE}/]*+{_attribute('?P<{}>')}")

_MARKUP: Final = re.compile(
    r"<(?:"
    r"!--(?:-?>|.*?(?:--!?>|\Z))"  # a comment (also the abrupt <!--> and <!--->); one left open ends the text
    r"|!\[CDATA\[.*?(?:\]\]>|\Z)"  # a CDATA section (SVG)
    r"|[!?][^>]*+>?"  # a doctype, a processing instruction, a bogus comment
    r"|/(?![a-zA-Z])[^>]*+>?"  # '</' without a name after it: a bogus comment
    rf"|(?P<end>/)?(?P<tag>[a-zA-Z][^{_SPACE}/>]*+)"
    rf"(?P<attributes>(?:[{_SPACE}/]*+{_attribute('')})*+)"
    rf"(?P<tail>[{_SPACE}/]*+)(?P<close>>|\Z)"
    r")",
    re.S,
)

#: Elements whose text runs to their end tag without holding tags (the HTML Standard's raw text and RCDATA).
_RAW_TEXT: Final = frozenset(
    {"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript"}
)
_END_OF: Final = {name: re.compile(rf"</{name}[{_SPACE}/>]", re.I) for name in _RAW_TEXT}


class StartTag(NamedTuple):
    """A start tag: its lowercased name and attributes, and for a ``<style>`` element the text it holds."""

    name: str
    attributes: dict[str, str]
    style_text: str | None = None


def _attributes(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    if not text:
        return found
    # findall gives "" for a value group that did not take part: an absent value and an empty one are both "".
    for written, double, single, unquoted in _ATTRIBUTES.findall(text):
        name = written.lower()
        if name not in found:  # the first of two same-named attributes wins, as in a browser
            value = double or single or unquoted
            found[name] = html.unescape(value) if "&" in value else value
    return found


def start_tags(text: str) -> Iterator[StartTag]:
    """The start tags of ``text`` in document order (see the module's notes on what counts as one)."""
    position = 0
    while (match := _MARKUP.search(text, position)) is not None:  # a '<' that opens nothing is text: passed over
        position = match.end()
        if match["tag"] is None or match["end"] is not None or match["close"] != ">":
            continue  # a comment, an end tag, or a tag the text ends inside (dropped, as a browser drops it)
        name = match["tag"].lower()
        attributes = _attributes(match["attributes"])
        if name not in _RAW_TEXT or match["tail"].endswith("/"):
            yield StartTag(name, attributes)
            continue
        end = _END_OF[name].search(text, position)
        stop = len(text) if end is None else end.start()
        yield StartTag(name, attributes, text[position:stop] if name == "style" else None)
        position = stop
