"""Drawing a :class:`~.graph.Neighbourhood` with Graphviz: DOT written by the ``graphviz`` package, laid out by ``dot``.

Issue text never becomes DOT syntax, and Graphviz never reads it as anything but text:

- nodes are named ``n0``, ``n1``, … and edges ``e0``, ``e1``, … (also their SVG ids); ids and titles appear only in
  labels;
- a label's text has line breaks, tabs and the characters XML cannot hold replaced, ``&`` written ``&amp;``
  (Graphviz reads HTML entities in labels) and backslashes doubled, so none of DOT's escapes (``\\N``, ``\\G``,
  ``\\E``, ``\\T``, ``\\H``, ``\\L``, ``\\l``, ``\\r``, ``\\n``) is interpreted; it is marked as not HTML-like (a
  title such as ``<b>x</b>`` is text, not a Graphviz HTML label), and the ``graphviz`` package quotes it;
- Graphviz is given no tooltip: the version Debian ships reads a tooltip's escapes twice, and a label copied into
  one too. The SVG's titles (each node's, edge's and the graph's ``<title>``, and each node link's
  ``xlink:title``) are set afterwards, from the issues' own text, by an XML serializer (:func:`titled`).

Node links are relative paths with the id percent-encoded, so no id can become a ``javascript:`` or other URL.

``dot`` runs as an argument list (no shell) with the DOT source on its standard input, bounded in size
(:data:`MAX_SOURCE_BYTES`) and time (:data:`TIMEOUT_SECONDS`), at the lowest CPU priority (so the board's pages and
the MCP tools come first on a busy machine). How many run at once, what is kept and what is not tried again is
:mod:`.drawing`'s business.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, cast
from urllib.parse import quote
from xml.etree import ElementTree

import graphviz

from bee_contracts import BeeError, ErrorCode
from bee_tracker.board.graph import Link, Neighbourhood, Node
from bee_tracker.model import BLOCKING_TYPES, PARENT_CHILD

#: Where to find ``dot``: $BEE_DOT, else the first ``dot`` on PATH (Debian's graphviz package).
ENV_DOT: Final = "BEE_DOT"
#: Largest DOT source drawn, in bytes (a full neighbourhood of 150 issues is ~60 KiB).
MAX_SOURCE_BYTES: Final = 512 * 1024
#: Seconds ``dot`` may take.
TIMEOUT_SECONDS: Final = 10.0
#: The niceness ``dot`` runs at (the lowest priority).
NICENESS: Final = 19

#: Characters of a title shown in a node (the issue page has all of it).
_TITLE_CHARS = 60
_WRAP = 24

_RED = "#b00020"
_BLUE = "#1d4ed8"
_GREY = "#6b7280"
_FILL = {"closed": "#e5e7eb", "pinned": "#e5e7eb", "in_progress": "#fef3c7"}
_BLOCKED_FILL = "#fde2e4"

_SVG_NS = "http://www.w3.org/2000/svg"
_XLINK_NS = "http://www.w3.org/1999/xlink"
_SVG = "{" + _SVG_NS + "}"
_XLINK_TITLE = "{" + _XLINK_NS + "}title"
# The prefixes SVG is written with (ElementTree would otherwise invent ``ns0`` and ``ns1``).
ElementTree.register_namespace("", _SVG_NS)
ElementTree.register_namespace("xlink", _XLINK_NS)

#: Characters XML 1.0 cannot hold (and C1 controls, which it only tolerates), and the whitespace that is not a space.
_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_BREAKS = re.compile("[\t\n\r\u2028\u2029]")


@dataclass(frozen=True)
class Drawing:
    """What Graphviz is given for a neighbourhood (``source``), and the SVG titles to set on what it draws: by
    element id (a node's or an edge's), and the whole graph's."""

    source: str
    titles: Mapping[str, str]
    graph_title: str


def dot_executable() -> str | None:
    """The ``dot`` this process runs, or None when Graphviz is not installed."""
    return os.environ.get(ENV_DOT) or shutil.which("dot")


def plain(value: str) -> str:
    """``value`` as one line of text any XML can hold: breaks and tabs become spaces, characters XML cannot hold
    (controls, lone surrogates, U+FFFE/U+FFFF) the replacement character."""
    return _NOT_TEXT.sub("\ufffd", _BREAKS.sub(" ", value))


def _text(value: str) -> str:
    """``value`` as literal label text (see the module docstring): no DOT escape and no HTML entity in it is
    interpreted."""
    return plain(value).replace("&", "&amp;").replace("\\", "\\\\")


def _label(*lines: str) -> str:
    """Escaped lines joined with DOT's centred line break, marked as not HTML-like."""
    # Still the package's NoHtml (a str subclass): that marker is what keeps ``<…>`` text from being HTML-like.
    return cast(str, graphviz.nohtml("\\n".join(_text(line) for line in lines)))


def _node_label(node: Node) -> str:
    if not node.exists:
        return _label(node.id, "deleted" if node.status == "tombstone" else "missing")
    title = plain(node.title)
    title = title if len(title) <= _TITLE_CHARS else title[: _TITLE_CHARS - 1] + "…"
    wrapped = textwrap.wrap(title, _WRAP, break_long_words=True, break_on_hyphens=False) or [""]
    state = node.status + (" · blocked" if node.blocked and node.unfinished else "")
    priority = f"P{node.priority}" if node.priority is not None else "P?"
    holder = [f"@ {node.assignee}"[:40]] if node.assignee and node.unfinished else []
    return _label(node.id, *wrapped, f"{state} · {priority}", *holder)


def drawing(hood: Neighbourhood, *, link_prefix: str = "/board/issues/") -> Drawing:
    """What to draw for ``hood``: prerequisites point at what they hold back, children at their parent."""
    names = {issue_id: f"n{number}" for number, issue_id in enumerate(sorted(hood.nodes))}
    titles: dict[str, str] = {}
    chart = graphviz.Digraph(name="neighbourhood")
    chart.attr(rankdir="LR", bgcolor="white", fontname="DejaVu Sans", nodesep="0.3", ranksep="0.5")
    chart.attr("node", shape="box", style="rounded,filled", fontname="DejaVu Sans", fontsize="10", fillcolor="white")
    chart.attr("edge", fontname="DejaVu Sans", fontsize="9")
    on_path = set(hood.critical_path)
    in_cycle = {issue_id for cycle in hood.cycles for issue_id in cycle}
    for issue_id in sorted(hood.nodes):
        node, name = hood.nodes[issue_id], names[issue_id]
        attrs = {
            "id": name,
            "label": _node_label(node),
            "fillcolor": _BLOCKED_FILL if node.blocked and node.unfinished else _FILL.get(node.status, "white"),
        }
        if node.exists:
            attrs["URL"] = link_prefix + quote(node.id, safe="")
            attrs["target"] = "_top"
            titles[name] = f"{node.id}: {node.title}"
        else:
            attrs["style"] = "rounded,dashed"
            titles[name] = f"{node.id} ({'deleted' if node.status == 'tombstone' else 'missing'})"
        if issue_id == hood.focus:
            attrs.update(penwidth="3", peripheries="2")
        elif issue_id in on_path:
            attrs.update(penwidth="3", color=_BLUE)
        if issue_id in in_cycle:
            attrs.update(color=_RED, penwidth="3")
        chart.node(name, **attrs)
    for number, link in enumerate(hood.links):
        name = f"e{number}"
        _edge(chart, hood, link, names, name)
        titles[name] = f"{link.source} {hood.words(link)} {link.target}"
    if hood.left_out:
        words = f"+ {hood.left_out} more not shown"
        chart.node("more", id="more", label=_label(words), shape="note", style="dashed")
        titles["more"] = words
    return Drawing(str(chart.source), titles, f"Dependency graph of {hood.focus}")


def _edge(chart: graphviz.Digraph, hood: Neighbourhood, link: Link, names: dict[str, str], name: str) -> None:
    source, target = names[link.source], names[link.target]
    attrs: dict[str, str] = {"id": name}
    if link.kind == PARENT_CHILD:
        tail, head, words = source, target, "child of"
        attrs.update(style="dashed", color=_GREY)
    elif link.kind in BLOCKING_TYPES:
        # Drawn the way work flows: the prerequisite points at what it holds back.
        tail, head, words = target, source, link.kind
        if hood.blocking(link):
            attrs.update(color=_RED, penwidth="2")
        else:
            attrs.update(color=_GREY)
            words += " (done)"
    else:
        tail, head, words = source, target, link.kind
        attrs.update(style="dotted", color=_GREY, constraint="false")
    if hood.in_cycle(link):
        words = f"CYCLE: {words}"
        attrs.update(color=_RED, penwidth="3", style="bold,dashed")
    elif hood.critical(link):
        words = f"critical: {words}"
        attrs.update(color=_BLUE, penwidth="4")
    attrs["label"] = _label(words)
    chart.edge(tail, head, **attrs)


def svg(picture: Drawing) -> bytes:
    """The SVG of ``picture``: drawn by ``dot``, then titled.

    Raises:
        BeeError: as :func:`render_svg`.
    """
    return titled(render_svg(picture.source), picture.titles, picture.graph_title)


def render_svg(source: str) -> bytes:
    """The SVG ``dot`` draws for ``source``.

    Raises:
        BeeError: ``unavailable`` when Graphviz is not installed; ``invalid_argument`` when the source is over
            :data:`MAX_SOURCE_BYTES`; ``deadline_exceeded`` when ``dot`` takes longer than :data:`TIMEOUT_SECONDS`;
            ``internal`` when it fails.
    """
    data = source.encode("utf-8")
    if len(data) > MAX_SOURCE_BYTES:
        raise BeeError(
            ErrorCode.INVALID_ARGUMENT,
            f"this graph is too large to draw ({len(data)} bytes of DOT, at most {MAX_SOURCE_BYTES})",
        )
    executable = dot_executable()
    if executable is None:
        raise BeeError(
            ErrorCode.UNAVAILABLE,
            "Graphviz is not installed where the tracker runs (install Debian's graphviz package, or set $BEE_DOT)",
        )
    try:
        process = subprocess.Popen(  # noqa: S603 -- an argument list, no shell; the input is escaped DOT
            [executable, "-Tsvg"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
    except OSError as exc:
        raise BeeError(ErrorCode.UNAVAILABLE, f"Graphviz could not be started: {exc.strerror}") from None
    with process:
        # Right after the start: for its first instant dot runs at the tracker's priority (setting it in the child
        # before exec would need preexec_fn, which is unsafe in a process with threads).
        with contextlib.suppress(OSError):  # it may have exited already
            os.setpriority(os.PRIO_PROCESS, process.pid, NICENESS)
        try:
            out, _ = process.communicate(data, timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise BeeError(
                ErrorCode.DEADLINE_EXCEEDED, f"Graphviz did not draw the graph within {TIMEOUT_SECONDS:g} s"
            ) from None
    if process.returncode != 0 or not out:
        raise BeeError(ErrorCode.INTERNAL, f"Graphviz failed to draw the graph (exit status {process.returncode})")
    return out


def titled(drawn: bytes, titles: Mapping[str, str], graph_title: str) -> bytes:
    """``drawn`` (dot's SVG) with each node's and edge's ``<title>``, and each node link's ``xlink:title``, set to
    ``titles[its id]``, and the graph's ``<title>`` to ``graph_title``: text an XML serializer escapes, so none of
    it is read as markup or as a Graphviz escape.

    Raises:
        BeeError: ``internal`` when ``drawn`` is not XML.
    """
    try:
        # dot's own output for escaped DOT: its one DOCTYPE names the SVG DTD and declares no entity; ElementTree
        # never fetches an external one, and expat (2.4.1 and later) refuses entity amplification anyway.
        root = ElementTree.fromstring(drawn)  # noqa: S314 -- see above: not a document from outside
    except ElementTree.ParseError:
        raise BeeError(ErrorCode.INTERNAL, "Graphviz wrote an SVG that is not XML") from None
    for group in root.iter(f"{_SVG}g"):
        kind, element_id = group.get("class"), group.get("id", "")
        if kind == "graph":
            _set_title(group, graph_title)
        elif kind in ("node", "edge") and element_id in titles:
            _set_title(group, titles[element_id])
            for anchor in group.iter(f"{_SVG}a"):  # a node's link (Graphviz wraps it in a group of its own)
                anchor.set(_XLINK_TITLE, plain(titles[element_id]))
    out: bytes = ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)
    return out


def _set_title(group: ElementTree.Element, text: str) -> None:
    title = group.find(f"{_SVG}title")  # a direct child: the group's own
    if title is not None:
        title.text = plain(text)
