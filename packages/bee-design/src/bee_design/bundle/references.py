"""The references a design file makes to other files: what the browser would load to render it.

HTML: ``src`` (img, script, iframe, source, audio, video, track, embed, input), ``srcset``, ``href`` of ``link``
and of SVG ``use``/``image``, ``poster``, ``data`` of ``object``, and CSS in ``<style>`` and ``style=""``.
Navigation links (``<a href>``) are not dependencies. CSS: ``@import`` and ``url()``, outside comments and
strings. ``data:`` URLs are inline content, not references.

Both scanners take time in proportion to the text, whatever it holds (:mod:`.markup` says how for HTML; the CSS
pattern below uses only possessive quantifiers and a lazy comment that a single pass ends), so a hostile bundle
cannot stall an import.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final, Literal, NamedTuple
from urllib.parse import unquote, urlsplit

from bee_design.bundle.markup import start_tags

Via = Literal["src", "srcset", "href", "poster", "data", "url()", "@import"]
Status = Literal["resolved", "missing", "external"]


class Reference(NamedTuple):
    """One reference as written in a file, and how it was made (a tuple: a page can make a hundred thousand)."""

    ref: str
    via: Via


_SRC_TAGS = frozenset({"img", "script", "iframe", "source", "audio", "video", "track", "embed", "input", "frame"})
_HREF_TAGS = frozenset({"link", "use", "image", "feimage"})
_SRCSET_TAGS = frozenset({"img", "source"})

_W: Final = r"\t\n\f\r\x20"  # CSS whitespace (\s would take Unicode spaces too)
# One left-to-right pass: each match is a comment, a string, an @import or a url(), so an @import's url() is
# never counted twice and a url( inside a comment or a string is not a reference.
_CSS: Final = re.compile(
    r"/\*.*?(?:\*/|\Z)"  # a comment; one left open runs to the end, as in a browser
    r"|\"(?:[^\"\\\n]|\\.)*+[\"\n]?|'(?:[^'\\\n]|\\.)*+['\n]?"  # a string (one left open ends at the line)
    rf"|@import[{_W}]*+(?:"
    rf"url\([{_W}]*+(?:\"(?P<i1>[^\"]*+)\"|'(?P<i2>[^']*+)'|(?P<i3>[^{_W}'\"()]++))"
    r"|\"(?P<i4>[^\"]*+)\"|'(?P<i5>[^']*+)'"
    rf"|(?!url\()(?P<i6>[^{_W};'\"()]++))"
    rf"|url\([{_W}]*+(?:\"(?P<u1>[^\"]*+)\"|'(?P<u2>[^']*+)'|(?P<u3>[^{_W}'\"()]*+))[{_W}]*+\)",
    re.I | re.S,
)


def css_references(text: str) -> list[Reference]:
    """The ``@import`` and ``url()`` references of a stylesheet (or a style attribute), in order."""
    found: list[Reference] = []
    for match in _CSS.finditer(text):
        group = match.lastgroup  # None for a comment or a string; else the one value group that matched
        if group is not None and (value := match[group]):
            found.append(Reference(value, "@import" if group[0] == "i" else "url()"))
    return found


def _srcset(value: str) -> list[str]:
    """The URLs of a ``srcset`` (each candidate is a URL and an optional descriptor)."""
    urls = []
    for candidate in value.split(","):
        parts = candidate.split()
        if parts:
            urls.append(parts[0])
    return urls


def html_references(text: str) -> list[Reference]:
    """The resource references of an HTML (or SVG) document, in document order."""
    found: list[Reference] = []
    for name, values, style_text in start_tags(text):
        if values:
            if name in _SRC_TAGS and values.get("src"):
                found.append(Reference(values["src"], "src"))
            if name in _SRCSET_TAGS and values.get("srcset"):
                found.extend(Reference(url, "srcset") for url in _srcset(values["srcset"]))
            if name in _HREF_TAGS:
                href = values.get("href") or values.get("xlink:href")
                if href:
                    found.append(Reference(href, "href"))
            if name == "video" and values.get("poster"):
                found.append(Reference(values["poster"], "poster"))
            if name == "object" and values.get("data"):
                found.append(Reference(values["data"], "data"))
            if values.get("style"):
                found.extend(css_references(values["style"]))
        if style_text:
            found.extend(css_references(style_text))
    return found


def resolve(source: str, ref: str, files: frozenset[str] | set[str]) -> tuple[Status, str | None]:
    """Resolve ``ref`` made by the bundle file ``source`` against the bundle's ``files``.

    Returns ``("resolved", path)``, ``("missing", path-or-None)`` for a file the bundle does not hold (or a path
    that leaves the bundle), or ``("external", None)`` for a URL with a scheme or host.
    """
    ref = ref.strip()
    parts = urlsplit(ref)
    if parts.scheme or parts.netloc or ref.startswith("//"):
        return "external", None
    if not parts.path:
        return "external", None  # "#fragment" or "?query" alone: the document itself
    path = unquote(parts.path)
    joined = path.lstrip("/") if path.startswith("/") else posixpath.join(posixpath.dirname(source), path)
    normal = posixpath.normpath(joined)
    if normal == ".." or normal.startswith("../") or normal.startswith("/"):
        return "missing", None
    return ("resolved", normal) if normal in files else ("missing", normal)
