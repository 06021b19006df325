"""Graph pictures are drawn apart from everything else: their own queue (full means 503 with Retry-After at once),
one drawing per picture, no second try for a picture that could not be drawn, and dense graphs in words.

``dot`` is replaced here, through $BEE_DOT as an operator would point at another Graphviz, by a script that counts
its runs and then hangs, or waits until the test lets it finish: what these tests control is when drawing ends.
"""

import shlex
import stat
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from bee_tracker import calls
from bee_tracker.board import dot, drawing
from bee_tracker.board.drawing import Drawer, Undrawable, most_links
from bee_tracker.board.graph import Link, Neighbourhood, Node
from bee_tracker.store import SqlStore
from tests.board.helpers import client, created, sign_in

SVG = '<svg xmlns="http://www.w3.org/2000/svg"><g id="graph0" class="graph"><title>g</title></g></svg>'


class FakeDot:
    """A ``dot`` that records each run in ``runs/`` and then hangs (``hang``) or waits for :meth:`release`."""

    def __init__(self, home: Path, *, hang: bool = False) -> None:
        self.runs = home / "runs"
        self.runs.mkdir()
        self.released = home / "released"
        self.path = home / "dot"
        # A shell script: it starts in milliseconds, so even a short timeout finds its run recorded.
        wait = "exec sleep 60" if hang else f"while [ ! -e {shlex.quote(str(self.released))} ]; do sleep 0.02; done"
        self.path.write_text(
            f"#!/bin/sh\ncat > {shlex.quote(str(self.runs))}/$$\n{wait}\nprintf '%s' {shlex.quote(SVG)}\n"
        )
        self.path.chmod(self.path.stat().st_mode | stat.S_IXUSR)

    def count(self) -> int:
        return len(list(self.runs.iterdir()))

    def wait_for_runs(self, count: int) -> None:
        deadline = time.monotonic() + 60  # a give-up guard, not a timing assertion
        while self.count() < count:
            assert time.monotonic() < deadline, f"dot was started {self.count()} times, not {count}"
            time.sleep(0.02)

    def release(self) -> None:
        self.released.touch()


@pytest.fixture
def fake_dot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakeDot]:
    def make(**options: bool) -> FakeDot:
        home = tmp_path / f"dot-{len(list(tmp_path.glob('dot-*')))}"
        home.mkdir()
        fake = FakeDot(home, **options)
        monkeypatch.setenv(dot.ENV_DOT, str(fake.path))
        return fake

    return make


def test_a_picture_not_drawn_in_time_is_remembered_and_the_issue_page_lists_it_in_words(
    lite: SqlStore, web: TestClient, fake_dot: Callable[..., FakeDot], monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = fake_dot(hang=True)
    monkeypatch.setattr(dot, "TIMEOUT_SECONDS", 0.5)
    first = created(lite, "first")
    second = created(lite, "second", prerequisites=[first])
    sign_in(web)
    answer = web.get(f"/board/graph/{second}")
    assert answer.status_code == 422
    assert (
        answer.text
        == "This graph is not drawn: Graphviz could not draw it within 0.5 s. The issue page lists its links in words."
    )
    assert slow.count() == 1
    for _ in range(3):  # not tried again: answered at once, dot never started
        assert web.get(f"/board/graph/{second}").status_code == 422
    assert slow.count() == 1
    page = web.get(f"/board/issues/{second}").text
    assert (
        "The graph is not drawn: Graphviz could not draw it within 0.5 s. Its links are listed below in words." in page
    )
    assert f'<img src="/board/graph/{second}"' not in page and '<details class="words" id="graph-words" open>' in page
    said = "second depends on (blocks, still blocking, on the critical path)"
    assert (
        f'<a href="/board/issues/{second}">{second}</a> {said} <a href="/board/issues/{first}">{first}</a> first'
        in page
    )
    # A change makes another picture, which is tried.
    calls.call(lite, "update", "alice@example.com", {"id": first, "title": "first, renamed"})
    assert web.get(f"/board/graph/{second}").status_code == 422 and slow.count() == 2


def test_a_dense_neighbourhood_is_listed_in_words_and_never_given_to_graphviz(
    lite: SqlStore, web: TestClient, fake_dot: Callable[..., FakeDot]
) -> None:
    counting = fake_dot(hang=True)
    epic = created(lite, "epic", issue_type="epic")
    children = [created(lite, f"child {n}", parent=epic) for n in range(30)]
    for n, child in enumerate(children):  # 30 parent links and 45 others: more than 60 for 31 issues
        for other in children[n + 1 : n + 3]:
            calls.call(lite, "link", "alice@example.com", {"id": child, "target": other, "type": "related"})
    sign_in(web)
    answer = web.get(f"/board/graph/{epic}")
    assert (
        answer.status_code == 422 and "it has 87 links among 31 issues, more than the 60 the board draws" in answer.text
    )
    page = web.get(f"/board/issues/{epic}").text
    assert "The graph is not drawn: it has 87 links among 31 issues" in page
    assert "The graph in words: 87 links among 31 issues" in page
    assert page.count(" is a child of ") == 30 and page.count(" depends on (related) ") == 57
    assert counting.count() == 0


def test_a_drawable_graph_is_pictured_with_its_words_folded_away(lite: SqlStore, web: TestClient) -> None:
    first = created(lite, "first")
    second = created(lite, "second", prerequisites=[first])
    sign_in(web)
    page = web.get(f"/board/issues/{second}").text
    assert f'<img src="/board/graph/{second}"' in page and '<details class="words" id="graph-words">' in page
    assert "The graph in words: 1 link among 2 issues" in page and "is not drawn" not in page


@pytest.fixture
def drawers(monkeypatch: pytest.MonkeyPatch) -> list[Drawer]:
    """Every Drawer the board builds from now on, as built (recorded, not changed): a test waits on its state."""
    from bee_tracker.board import app

    made: list[Drawer] = []

    class Recorded(Drawer):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    monkeypatch.setattr(app, "Drawer", Recorded)
    return made


def test_a_full_drawing_queue_is_503_with_retry_after_at_once_and_the_rest_of_the_board_is_free(
    lite: SqlStore, fake_dot: Callable[..., FakeDot], drawers: list[Drawer], tmp_path: Path
) -> None:
    gate = fake_dot()
    capacity = drawing.CONCURRENT + drawing.QUEUED
    issues = [created(lite, f"issue {n}") for n in range(capacity + 1)]
    with client(lite, tmp_path) as web, ThreadPoolExecutor(max_workers=capacity) as pool:
        sign_in(web)
        waiting = [pool.submit(web.get, f"/board/graph/{issue}") for issue in issues[:capacity]]
        gate.wait_for_runs(drawing.CONCURRENT)
        # The queued requests reach the drawer after their store reads, in their own threads: wait until every
        # place is taken (a give-up guard, not a timing assertion), or the next request would be queued instead.
        [drawer] = drawers
        deadline = time.monotonic() + 60
        while not drawer.full:
            assert time.monotonic() < deadline, "the queued requests never reached the drawer"
            time.sleep(0.02)
        refused = web.get(f"/board/graph/{issues[capacity]}")
        assert refused.status_code == 503 and refused.headers["retry-after"] == str(drawing.RETRY_AFTER_SECONDS)
        assert refused.headers["connection"] == "close"  # the client comes back on a new connection
        assert "drawing other graphs" in refused.text
        # The rest of the board is not held up meanwhile: its pages and the store are free.
        assert web.get(f"/board/issues/{issues[capacity]}").status_code == 200
        assert web.get("/board/").status_code == 200
        assert not any(future.done() for future in waiting)  # all still waiting for dot: the 503 came at once
        gate.release()
        answers = [future.result(timeout=120) for future in waiting]
        assert [a.status_code for a in answers] == [200] * capacity
        assert gate.count() == capacity
        assert web.get(f"/board/graph/{issues[1]}").status_code == 200 and gate.count() == capacity  # kept


def test_one_picture_asked_for_twice_at_once_is_drawn_once(
    lite: SqlStore, web: TestClient, fake_dot: Callable[..., FakeDot]
) -> None:
    gate = fake_dot()
    issue = created(lite, "one issue")
    sign_in(web)
    with ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(web.get, f"/board/graph/{issue}")
        gate.wait_for_runs(1)
        second = pool.submit(web.get, f"/board/graph/{issue}")  # waits for the drawing under way
        gate.release()
        answers = [first.result(timeout=120), second.result(timeout=120)]
    assert [a.status_code for a in answers] == [200, 200] and answers[0].content == answers[1].content
    assert gate.count() == 1


def hood_of(title: str) -> Neighbourhood:
    nodes = {"t-1": Node("t-1", title, "open", 2, None), "t-2": Node("t-2", "other", "open", 2, None)}
    return Neighbourhood("t-1", nodes, [Link("t-1", "blocks", "t-2")])


@pytest.mark.anyio
async def test_a_remembered_failure_is_tried_again_once_it_expires(
    fake_dot: Callable[..., FakeDot], monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = fake_dot(hang=True)
    monkeypatch.setattr(dot, "TIMEOUT_SECONDS", 0.5)
    now = [1000.0]
    drawer = Drawer(clock=lambda: now[0])
    hood = hood_of("slow")
    with pytest.raises(Undrawable, match=r"within 0\.5 s"):
        await drawer.svg(hood)
    assert drawer.refusal(hood) == "Graphviz could not draw it within 0.5 s"
    now[0] += drawing.FAILED_SECONDS - 1
    with pytest.raises(Undrawable):
        await drawer.svg(hood)
    assert slow.count() == 1
    now[0] += 2
    assert drawer.refusal(hood) is None
    with pytest.raises(Undrawable):
        await drawer.svg(hood)
    assert slow.count() == 2


@pytest.mark.anyio
async def test_graphviz_missing_is_not_remembered_against_the_picture(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(dot.ENV_DOT, str(tmp_path / "no-such-dot"))
    drawer = Drawer()
    hood = hood_of("any")
    with pytest.raises(Exception, match="could not be started") as missing:
        await drawer.svg(hood)
    assert getattr(missing.value, "code", None) == "unavailable"
    assert drawer.refusal(hood) is None


def test_most_links_grows_with_the_issues_shown() -> None:
    assert most_links(1) == most_links(40) == 60 and most_links(150) == 225
