"""The dependency graph: neighbourhoods, cycles in imported data, the critical path, and an SVG drawn by Graphviz
in which every piece of issue text is text."""

import json
import os
import re
import shutil
import stat
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from starlette.testclient import TestClient

from bee_contracts import BeeError
from bee_tracker import calls
from bee_tracker.board import dot, graph
from bee_tracker.store import SqlStore, sources
from tests.board.helpers import ALICE, created, sign_in
from tests.board.test_pages import XSS

needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None and not os.environ.get("CI"), reason="Graphviz is not installed (.ci/run installs it)"
)
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}href"
XLINK_TITLE = "{http://www.w3.org/1999/xlink}title"


def line(issue_id: str, title: str = "t", status: str = "open", **extra: Any) -> str:
    return json.dumps({"id": issue_id, "title": title, "status": status, "priority": 2, **extra})


def blocks(issue_id: str, target: str, kind: str = "blocks") -> dict[str, str]:
    return {"issue_id": issue_id, "depends_on_id": target, "type": kind}


def hood(store: SqlStore, issue_id: str) -> graph.Neighbourhood:
    # SqlStore.read bounds its result to a Mapping, and a neighbourhood is a dataclass: the board reads it the same
    # way (board/pages.py, through board.run), so the bound is looser in practice than the signature says.
    return store.read(graph.neighbourhood, {"id": issue_id})  # type: ignore[type-var]


def parsed(svg: bytes) -> ElementTree.Element:
    text = re.sub(r"<!DOCTYPE[^>]*>", "", svg.decode("utf-8"))
    return ElementTree.fromstring(text)


def test_a_cycle_in_imported_data_is_found_and_marked(lite: SqlStore) -> None:
    imported = [
        line("t-a", dependencies=[blocks("t-a", "t-b")]),
        line("t-b", dependencies=[blocks("t-b", "t-c")]),
        line("t-c", dependencies=[blocks("t-c", "t-a", "waits-for")]),
        line("t-d", dependencies=[blocks("t-d", "t-a"), blocks("t-d", "t-d", "related")]),
    ]
    lite.import_from(sources.from_lines(imported), allow_cycles=True)  # as Beads' own import takes it
    found = hood(lite, "t-a")
    assert found.cycles == [["t-a", "t-b", "t-c"]]
    source = dot.drawing(found).source
    assert source.count("CYCLE: ") == 3  # the three links of the cycle, and not t-d's
    assert hood(lite, "t-d").critical_path == ["t-d", "t-a"]  # and no further: nothing in a cycle can finish


def test_the_critical_path_is_the_longest_chain_of_unfinished_work_before_the_epic(lite: SqlStore) -> None:
    epic = created(lite, "epic", issue_type="epic")
    quick = created(lite, "quick", parent=epic)
    slow = created(lite, "slow", parent=epic)
    done = created(lite, "already done", parent=epic)
    calls.call(lite, "complete", ALICE, {"id": done})
    first = created(lite, "first prerequisite")
    second = created(lite, "second prerequisite", prerequisites=[first])
    calls.call(lite, "link", ALICE, {"id": slow, "target": second, "type": "blocks"})
    finished = created(lite, "finished prerequisite")
    calls.call(lite, "complete", ALICE, {"id": finished})
    calls.call(lite, "link", ALICE, {"id": quick, "target": finished, "type": "blocks"})
    found = hood(lite, epic)
    assert found.critical_path == [epic, slow, second, first]
    assert set(found.nodes) == {epic, quick, slow, done, first, second, finished}  # the tree and its blockers
    source = dot.drawing(found).source
    assert source.count("critical: ") == 3
    assert found.cycles == []


def test_an_issue_without_children_shows_what_is_around_it_and_what_was_left_out(lite: SqlStore) -> None:
    center = created(lite, "center")
    near = [created(lite, f"near {n}", prerequisites=[center]) for n in range(3)]
    far = created(lite, "far", prerequisites=[near[0]])
    farther = created(lite, "farther", prerequisites=[far])
    found = hood(lite, center)
    assert set(found.nodes) == {center, *near, far}
    assert farther not in found.nodes
    epic = created(lite, "big", issue_type="epic")
    for n in range(graph.TREE_NODES + 5):
        created(lite, f"child {n}", parent=epic)
    big = hood(lite, epic)
    assert len(big.nodes) == graph.TREE_NODES and big.left_out == 6
    assert "+ 6 more not shown" in dot.drawing(big).source


def test_missing_and_deleted_dependencies_are_drawn_as_such(lite: SqlStore) -> None:
    lite.import_lines(
        [
            line("t-a", dependencies=[blocks("t-a", "t-gone"), blocks("t-a", "t-deleted")]),
            json.dumps({"id": "t-deleted", "title": "x", "status": "tombstone", "deleted_at": "2026-01-01T00:00:00Z"}),
        ]
    )
    found = hood(lite, "t-a")
    assert found.nodes["t-gone"].status == "missing" and not found.nodes["t-gone"].exists
    assert found.nodes["t-deleted"].status == "tombstone"
    assert found.critical_path == []  # neither blocks: a missing or deleted target counts as done


@needs_dot
def test_the_svg_holds_issue_text_only_as_text(lite: SqlStore, web: TestClient) -> None:
    ids = ["t-plain", "javascript:alert(1)", 't-"quoted"<b>', "t-slash/../x"]
    lines = [line(ids[0], XSS[0], dependencies=[blocks(ids[0], other) for other in ids[1:]])]
    lines += [line(other, title, assignee=XSS[3]) for other, title in zip(ids[1:], XSS[1:], strict=False)]
    lines.append(line("t-backslash", "a \\N \\G \\l title", dependencies=[blocks("t-backslash", ids[0])]))
    lite.import_lines(lines)
    svg = dot.svg(dot.drawing(hood(lite, ids[0])))
    root = parsed(svg)
    names = {element.tag.removeprefix(SVG) for element in root.iter()}
    assert not names & {"script", "foreignObject", "iframe", "image", "style"}
    for element in root.iter():
        assert not [name for name in element.attrib if name.lower().startswith("on")]
        if XLINK in element.attrib:
            assert element.attrib[XLINK].startswith("/board/issues/") and ":" not in element.attrib[XLINK]
    text = "\n".join(element.text or "" for element in root.iter(f"{SVG}text"))
    assert "javascript:alert(1)" in text and 't-"quoted"<b>' in text
    assert "a \\N \\G \\l title" in text  # DOT's escapes in a title stay as typed
    sign_in(web)
    answer = web.get("/board/graph/javascript%3Aalert%281%29")
    assert answer.status_code == 200 and answer.headers["content-type"] == "image/svg+xml"


#: Titles (each short enough to stay on one line of its box) that DOT, Graphviz's label and tooltip processing or
#: its HTML entities would read as something else, if any of it reached Graphviz as anything but text.
TRICKY_TITLES = [
    r"node \N here",
    r"graph \G here",
    r"edge \E tail \T",
    r"head \H label \L",
    r"left \l right \r",
    r"break \n end",
    r"two \\ slashes",
    "ends in a slash \\",
    r"quote \" inside",
    'bare " quote',
    "<b>bold</b>",
    "<<b>html</b>>",
    "&amp; &lt; &#92; &nbsp;",
    "tab\tand\x1besc",
]
#: An id and a link type of the same kind (both come from imported data).
TRICKY_ID, TRICKY_KIND = r"t-\N\\x", r"\G<k>&amp;"


def texts(group: ElementTree.Element) -> list[str]:
    return [element.text or "" for element in group.iter(f"{SVG}text")]


@needs_dot
def test_dot_escapes_entities_and_html_in_titles_ids_and_kinds_stay_as_typed_in_labels_and_titles(
    lite: SqlStore, web: TestClient
) -> None:
    ids = [f"t-{n}" for n in range(len(TRICKY_TITLES))]
    deps = [blocks("t-focus", issue_id) for issue_id in [*ids, TRICKY_ID]]
    lines = [line("t-focus", "focus", dependencies=[*deps, blocks("t-focus", ids[0], TRICKY_KIND)])]
    lines += [line(issue_id, title) for issue_id, title in zip(ids, TRICKY_TITLES, strict=True)]
    lines.append(line(TRICKY_ID, "x"))
    lite.import_lines(lines)
    sign_in(web)
    answer = web.get("/board/graph/t-focus")
    assert answer.status_code == 200, answer.text
    root = parsed(answer.content)
    shown = dict(zip(ids, [t.replace("\t", " ").replace("\x1b", "\ufffd") for t in TRICKY_TITLES], strict=True))
    nodes = edges = 0
    for group in root.iter(f"{SVG}g"):
        heading = group.find(f"{SVG}title")
        title = heading.text if heading is not None else None
        links = [a.get(XLINK_TITLE) for a in group.iter(f"{SVG}a")]
        if group.get("class") == "graph":
            assert title == "Dependency graph of t-focus"
        elif group.get("class") == "node":
            nodes += 1
            assert title is not None
            issue_id, typed = title.split(": ", 1)
            expected = shown.get(issue_id, "focus" if issue_id == "t-focus" else "x")
            assert typed == expected and links == [title], (title, links)  # the tooltip: the issue as typed
            assert texts(group)[:2] == [issue_id, expected], texts(group)  # the box: its id, then its title
        elif group.get("class") == "edge":
            edges += 1
            assert title is not None
            source, rest = title.split(" ", 1)
            assert source == "t-focus" and rest.startswith("depends on ("), title
            if TRICKY_KIND in title:
                assert title == f"t-focus depends on ({TRICKY_KIND}) t-0" and texts(group) == [TRICKY_KIND]
    assert (nodes, edges) == (len(ids) + 2, len(ids) + 2)  # every issue (the tricky id too) and every link


def test_render_refuses_oversized_sources_and_says_when_graphviz_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(BeeError) as large:
        dot.render_svg("digraph { " + "a -> b; " * (dot.MAX_SOURCE_BYTES // 8) + "}")
    assert large.value.code == "invalid_argument" and "too large to draw" in large.value.message
    monkeypatch.setenv(dot.ENV_DOT, "/nonexistent/dot")
    with pytest.raises(BeeError) as missing:
        dot.render_svg("digraph { unseen_before_1 }")
    assert missing.value.code == "unavailable" and "could not be started" in missing.value.message


def test_a_dot_that_hangs_is_stopped_at_the_timeout(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    hanging = tmp_path / "dot"
    hanging.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(60)\n")
    hanging.chmod(hanging.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv(dot.ENV_DOT, str(hanging))
    monkeypatch.setattr(dot, "TIMEOUT_SECONDS", 0.5)
    with pytest.raises(BeeError) as late:
        dot.render_svg("digraph { unseen_before_2 }")
    assert late.value.code == "deadline_exceeded"


@needs_dot
def test_the_issue_page_shows_the_graph_the_cycles_and_the_critical_path_in_words(
    lite: SqlStore, web: TestClient
) -> None:
    imported = [
        line("t-a", "epic a", issue_type="epic"),
        line("t-a.1", "child", dependencies=[blocks("t-a.1", "t-a", "parent-child"), blocks("t-a.1", "t-x")]),
        line("t-x", "loop x", dependencies=[blocks("t-x", "t-y")]),
        line("t-y", "loop y", dependencies=[blocks("t-y", "t-x")]),
    ]
    lite.import_from(sources.from_lines(imported), allow_cycles=True)
    sign_in(web)
    page = " ".join(web.get("/board/issues/t-a").text.split())
    assert "Dependency cycles (from imported data; the tracker refuses new ones): t-x → t-y." in page
    assert '<img src="/board/graph/t-a"' in page
    assert "Critical path (2 unfinished issues in turn before this one can be completed)" in page
