"""The references a design file makes to other files: what the browser would load to render it.

HTML: ``src`` (img, script, iframe, source, audio, video, track, embed, input), ``srcset``, ``href`` of ``link``
and of SVG ``use``/``image``, ``poster``, ``data`` of ``object``, and CSS in ``<style>`` and ``style=""``.
Navigation links (``<a href>``) are not dependencies. CSS: ``@import`` and ``url()``. ``data:`` URLs are inline
content, not references.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Literal
from urllib.parse import unquote, urlsplit

Via = Literal["src", "srcset", "href", "poster", "data", "url()", "@import"]
Status = Literal["resolved", "missing", "external"]


@dataclass(frozen=True)
class Reference:
    """One reference as written in a file, and how it was made."""

    ref: str
    via: Via


_SRC_TAGS = frozenset({"img", "script", "iframe", "source", "audio", "video", "track", "embed", "input", "frame"})
_HREF_TAGS = frozenset({"link", "use", "image", "feimage"})

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_IMPORT = re.compile(r"""@import\s+(?:url\(\s*)?(?:"([^"]*)"|'([^']*)'|([^\s;'")]+))""", re.I)
_URL = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^\s'")]*))\s*\)""", re.I)


def css_references(text: str) -> list[Reference]:
    """The ``@import`` and ``url()`` references of a stylesheet (or a style attribute), in order."""
    text = _COMMENT.sub(" ", text)
    found: list[Reference] = []
    imported_spans = []
    for match in _IMPORT.finditer(text):
        found.append(Reference(next(g for g in match.groups() if g is not None), "@import"))
        imported_spans.append(match.span())
    for match in _URL.finditer(text):
        if any(start <= match.start() < end for start, end in imported_spans):
            continue  # @import url(x) was counted as the import
        value = next(g for g in match.groups() if g is not None)
        if value:
            found.append(Reference(value, "url()"))
    return found


def _srcset(value: str) -> list[str]:
    """The URLs of a ``srcset`` (each candidate is a URL and an optional descriptor)."""
    urls = []
    for candidate in value.split(","):
        parts = candidate.split()
        if parts:
            urls.append(parts[0])
    return urls


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[Reference] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value for name, value in attrs if value is not None}
        if tag in _SRC_TAGS and values.get("src"):
            self.found.append(Reference(values["src"], "src"))
        if tag in {"img", "source"} and values.get("srcset"):
            self.found.extend(Reference(url, "srcset") for url in _srcset(values["srcset"]))
        if tag in _HREF_TAGS:
            href = values.get("href") or values.get("xlink:href")
            if href:
                self.found.append(Reference(href, "href"))
        if tag == "video" and values.get("poster"):
            self.found.append(Reference(values["poster"], "poster"))
        if tag == "object" and values.get("data"):
            self.found.append(Reference(values["data"], "data"))
        if values.get("style"):
            self.found.extend(css_references(values["style"]))
        self._in_style = tag == "style"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self._in_style = False

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.found.extend(css_references(data))


def html_references(text: str) -> list[Reference]:
    """The resource references of an HTML (or SVG) document, in document order."""
    collector = _Collector()
    collector.feed(text)
    collector.close()
    return collector.found


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
