"""Drawing a :class:`~.graph.Neighbourhood` with Graphviz: DOT written by the ``graphviz`` package, laid out by ``dot``.

Issue text never becomes DOT syntax: nodes are named ``n0``, ``n1``, …; every label is escaped (backslashes doubled,
so ``\\N`` stays two characters) and marked as not HTML-like (a title such as ``<b>x</b>`` is text, not a Graphviz
HTML label), and the ``graphviz`` package quotes it. ``dot`` writes the labels into the SVG as escaped XML text.
Node links are relative paths with the id percent-encoded, so no id can become a ``javascript:`` or other URL.

``dot`` runs as an argument list (no shell) with the DOT source on its standard input, bounded in size and time,
at most :data:`CONCURRENT_RENDERS` at once per process; identical graphs are drawn once (a small cache).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import textwrap
import threading
from collections import OrderedDict
from typing import Final, cast
from urllib.parse import quote

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
#: ``dot`` processes one tracker process runs at once; more requests wait for one to finish.
CONCURRENT_RENDERS: Final = 2
#: Drawn graphs kept, by the digest of their DOT source.
CACHED: Final = 64

#: Characters of a title shown in a node (the issue page has all of it).
_TITLE_CHARS = 60
_WRAP = 24

_RED = "#b00020"
_BLUE = "#1d4ed8"
_GREY = "#6b7280"
_FILL = {"closed": "#e5e7eb", "pinned": "#e5e7eb", "in_progress": "#fef3c7"}
_BLOCKED_FILL = "#fde2e4"

_slots = threading.BoundedSemaphore(CONCURRENT_RENDERS)
_cache: OrderedDict[str, bytes] = OrderedDict()
_cache_lock = threading.Lock()


def dot_executable() -> str | None:
    """The ``dot`` this process runs, or None when Graphviz is not installed."""
    return os.environ.get(ENV_DOT) or shutil.which("dot")


def _text(value: str) -> str:
    """``value`` as literal label text: DOT escapes (``\\n``, ``\\N``, ``\\G`` …) in it are not interpreted."""
    return str(graphviz.escape(value))


def _label(*lines: str) -> str:
    """Escaped lines joined with DOT's centred line break, marked as not HTML-like."""
    # Still the package's NoHtml (a str subclass): that marker is what keeps ``<…>`` text from being HTML-like.
    return cast(str, graphviz.nohtml("\\n".join(_text(line) for line in lines)))


def _node_label(node: Node) -> str:
    if not node.exists:
        return _label(node.id, "deleted" if node.status == "tombstone" else "missing")
    title = node.title if len(node.title) <= _TITLE_CHARS else node.title[: _TITLE_CHARS - 1] + "…"
    wrapped = textwrap.wrap(title, _WRAP, break_long_words=True, break_on_hyphens=False) or [""]
    state = node.status + (" · blocked" if node.blocked and node.unfinished else "")
    priority = f"P{node.priority}" if node.priority is not None else "P?"
    holder = [f"@ {node.assignee}"[:40]] if node.assignee and node.unfinished else []
    return _label(node.id, *wrapped, f"{state} · {priority}", *holder)


def dot_source(hood: Neighbourhood, *, link_prefix: str = "/board/issues/") -> str:
    """The DOT source of ``hood``: prerequisites point at what they hold back, children at their parent."""
    names = {issue_id: f"n{number}" for number, issue_id in enumerate(sorted(hood.nodes))}
    chart = graphviz.Digraph(name="neighbourhood")
    chart.attr(rankdir="LR", bgcolor="white", fontname="DejaVu Sans", nodesep="0.3", ranksep="0.5")
    chart.attr("node", shape="box", style="rounded,filled", fontname="DejaVu Sans", fontsize="10", fillcolor="white")
    chart.attr("edge", fontname="DejaVu Sans", fontsize="9")
    on_path = set(hood.critical_path)
    in_cycle = {issue_id for cycle in hood.cycles for issue_id in cycle}
    for issue_id in sorted(hood.nodes):
        node = hood.nodes[issue_id]
        attrs = {
            "label": _node_label(node),
            "tooltip": _text(f"{node.id}: {node.title}" if node.exists else node.id),
            "fillcolor": _BLOCKED_FILL if node.blocked and node.unfinished else _FILL.get(node.status, "white"),
        }
        if node.exists:
            attrs["URL"] = link_prefix + quote(node.id, safe="")
            attrs["target"] = "_top"
        else:
            attrs["style"] = "rounded,dashed"
        if issue_id == hood.focus:
            attrs.update(penwidth="3", peripheries="2")
        elif issue_id in on_path:
            attrs.update(penwidth="3", color=_BLUE)
        if issue_id in in_cycle:
            attrs.update(color=_RED, penwidth="3")
        chart.node(names[issue_id], **attrs)
    for link in hood.links:
        _edge(chart, hood, link, names)
    if hood.left_out:
        chart.node("more", label=_label(f"+ {hood.left_out} more not shown"), shape="note", style="dashed")
    return str(chart.source)


def _edge(chart: graphviz.Digraph, hood: Neighbourhood, link: Link, names: dict[str, str]) -> None:
    source, target = names[link.source], names[link.target]
    attrs: dict[str, str] = {}
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
    key = hashlib.sha256(data).hexdigest()
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    executable = dot_executable()
    if executable is None:
        raise BeeError(
            ErrorCode.UNAVAILABLE,
            "Graphviz is not installed where the tracker runs (install Debian's graphviz package, or set $BEE_DOT)",
        )
    with _slots:
        try:
            completed = subprocess.run(  # noqa: S603 -- an argument list, no shell; the input is escaped DOT
                [executable, "-Tsvg"], input=data, capture_output=True, timeout=TIMEOUT_SECONDS, check=False
            )
        except subprocess.TimeoutExpired:
            raise BeeError(
                ErrorCode.DEADLINE_EXCEEDED, f"Graphviz did not draw the graph within {TIMEOUT_SECONDS:g} s"
            ) from None
        except OSError as exc:
            raise BeeError(ErrorCode.UNAVAILABLE, f"Graphviz could not be started: {exc.strerror}") from None
    if completed.returncode != 0 or not completed.stdout:
        raise BeeError(ErrorCode.INTERNAL, f"Graphviz failed to draw the graph (exit status {completed.returncode})")
    with _cache_lock:
        _cache[key] = completed.stdout
        while len(_cache) > CACHED:
            _cache.popitem(last=False)
    return completed.stdout
