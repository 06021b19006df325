"""The dependency graph: neighbourhoods, cycles in imported data, the critical path, and an SVG drawn by Graphviz
in which every piece of issue text is text."""

import json
import os
import re
import shutil
import stat
import sys
from xml.etree import ElementTree

import pytest

from bee_contracts import BeeError
from bee_tracker.board import dot, graph
from tests.board.helpers import ALICE, created, sign_in
from tests.board.test_pages import XSS

needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None and not os.environ.get("CI"), reason="Graphviz is not installed (.ci/run installs it)"
)
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}href"


def line(issue_id, title="t", status="open", **extra):
    return json.dumps({"id": issue_id, "title": title, "status": status, "priority": 2, **extra})


def blocks(issue_id, target, kind="blocks"):
    return {"issue_id": issue_id, "depends_on_id": target, "type": kind}


def hood(store, issue_id):
    return store.read(graph.neighbourhood, {"id": issue_id})


def parsed(svg: bytes) -> ElementTree.Element:
    text = re.sub(r"<!DOCTYPE[^>]*>", "", svg.decode("utf-8"))
    return ElementTree.fromstring(text)


def test_a_cycle_in_imported_data_is_found_and_marked(lite):
    lite.import_lines(
        [
            line("t-a", dependencies=[blocks("t-a", "t-b")]),
            line("t-b", dependencies=[blocks("t-b", "t-c")]),
            line("t-c", dependencies=[blocks("t-c", "t-a", "waits-for")]),
            line("t-d", dependencies=[blocks("t-d", "t-a"), blocks("t-d", "t-d", "related")]),
        ]
    )
    found = hood(lite, "t-a")
    assert found.cycles == [["t-a", "t-b", "t-c"]]
    source = dot.dot_source(found)
    assert source.count("CYCLE: ") == 3  # the three links of the cycle, and not t-d's
    assert hood(lite, "t-d").critical_path == ["t-d", "t-a"]  # and no further: nothing in a cycle can finish


def test_the_critical_path_is_the_longest_chain_of_unfinished_work_before_the_epic(lite):
    epic = created(lite, "epic", issue_type="epic")
    quick = created(lite, "quick", parent=epic)
    slow = created(lite, "slow", parent=epic)
    done = created(lite, "already done", parent=epic)
    lite.call("complete", ALICE, {"id": done})
    first = created(lite, "first prerequisite")
    second = created(lite, "second prerequisite", prerequisites=[first])
    lite.call("link", ALICE, {"id": slow, "target": second, "type": "blocks"})
    finished = created(lite, "finished prerequisite")
    lite.call("complete", ALICE, {"id": finished})
    lite.call("link", ALICE, {"id": quick, "target": finished, "type": "blocks"})
    found = hood(lite, epic)
    assert found.critical_path == [epic, slow, second, first]
    assert set(found.nodes) == {epic, quick, slow, done, first, second, finished}  # the tree and its blockers
    source = dot.dot_source(found)
    assert source.count("critical: ") == 3
    assert found.cycles == []


def test_an_issue_without_children_shows_what_is_around_it_and_what_was_left_out(lite):
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
    assert "+ 6 more not shown" in dot.dot_source(big)


def test_missing_and_deleted_dependencies_are_drawn_as_such(lite):
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
def test_the_svg_holds_issue_text_only_as_text(lite, web):
    ids = ["t-plain", "javascript:alert(1)", 't-"quoted"<b>', "t-slash/../x"]
    lines = [line(ids[0], XSS[0], dependencies=[blocks(ids[0], other) for other in ids[1:]])]
    lines += [line(other, title, assignee=XSS[3]) for other, title in zip(ids[1:], XSS[1:], strict=False)]
    lines.append(line("t-backslash", "a \\N \\G \\l title", dependencies=[blocks("t-backslash", ids[0])]))
    lite.import_lines(lines)
    svg = dot.render_svg(dot.dot_source(hood(lite, ids[0])))
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


def test_render_refuses_oversized_sources_and_says_when_graphviz_is_missing(monkeypatch):
    with pytest.raises(BeeError) as large:
        dot.render_svg("digraph { " + "a -> b; " * (dot.MAX_SOURCE_BYTES // 8) + "}")
    assert large.value.code == "invalid_argument" and "too large to draw" in large.value.message
    monkeypatch.setenv(dot.ENV_DOT, "/nonexistent/dot")
    with pytest.raises(BeeError) as missing:
        dot.render_svg("digraph { unseen_before_1 }")
    assert missing.value.code == "unavailable" and "could not be started" in missing.value.message


def test_a_dot_that_hangs_is_stopped_at_the_timeout(monkeypatch, tmp_path):
    hanging = tmp_path / "dot"
    hanging.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(60)\n")
    hanging.chmod(hanging.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv(dot.ENV_DOT, str(hanging))
    monkeypatch.setattr(dot, "TIMEOUT_SECONDS", 0.5)
    with pytest.raises(BeeError) as late:
        dot.render_svg("digraph { unseen_before_2 }")
    assert late.value.code == "deadline_exceeded"


@needs_dot
def test_the_issue_page_shows_the_graph_the_cycles_and_the_critical_path_in_words(lite, web):
    lite.import_lines(
        [
            line("t-a", "epic a", issue_type="epic"),
            line("t-a.1", "child", dependencies=[blocks("t-a.1", "t-a", "parent-child"), blocks("t-a.1", "t-x")]),
            line("t-x", "loop x", dependencies=[blocks("t-x", "t-y")]),
            line("t-y", "loop y", dependencies=[blocks("t-y", "t-x")]),
        ]
    )
    sign_in(web)
    page = " ".join(web.get("/board/issues/t-a").text.split())
    assert "Dependency cycles (from imported data; the tracker refuses new ones): t-x → t-y." in page
    assert '<img src="/board/graph/t-a"' in page
    assert "Critical path (2 unfinished issues in turn before this one can be completed)" in page
