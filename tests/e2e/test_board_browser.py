"""The tracker's web board in a real Chromium (Debian's, driven by Playwright as the design host's capture does), on
a real `bee tracker serve` holding an imported real Beads export, checked against the MCP tools.

One browser for the module; each test opens its own context (its own cookies). With $BEE_BOARD_SCREENSHOTS set to
a folder (docs/hosts/images), the tests also save a screenshot of each page there.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest

from bee_design.capture.settings import FLAGS, browser_executable, running_as_root
from bee_tracker.board.base import dom_id
from tests.conftest import FIXTURES, NEEDS_CHROMIUM, error_of
from tests.harness.node import NODE_MODULES
from tests.harness.tracker import TrackerFactory, TrackerProcess, tracker_client

pytestmark = [
    pytest.mark.e2e,
    NEEDS_CHROMIUM,
]

EXPORT = FIXTURES / "beads" / "gastownhall__beads__tombstones.jsonl"
EPIC = "bd-hlsw"  # an open epic of that export, with a critical path
DEMO = "bd-demo"  # an epic of the tests' own, whose graph shows every kind of link (see _demo_lines)
ANN, BOB = "ann@example.com", "bob@example.com"
AXE = NODE_MODULES / "axe-core" / "axe.min.js"
SHOTS = os.environ.get("BEE_BOARD_SCREENSHOTS")

#: Each would set window.__xss or call alert if the board let it run, and add an element if it let it parse.
XSS = {
    "title": '<img src=x onerror="window.__xss=1">',
    "description": '<script>window.__xss=2</script><svg onload="window.__xss=3"></svg>',
    "label": '"><iframe srcdoc="<script>parent.__xss=4</script>"></iframe>',
    "comment": '<a href="javascript:alert(5)">click</a><img src=x onerror=alert(6)>',
}


def _xss_lines() -> list[str]:
    stamp = "2026-01-01T00:00:00Z"
    first = {
        "id": "bd-xss1",
        "title": XSS["title"],
        "description": XSS["description"],
        "status": "open",
        "priority": 4,  # at the end of their columns, out of the way of the screenshots
        "issue_type": "task",
        "labels": [XSS["label"], "xss"],
        "created_at": stamp,
        "updated_at": stamp,
        "comments": [{"id": 900001, "issue_id": "bd-xss1", "author": XSS["comment"], "text": XSS["comment"]}],
    }
    second = {
        "id": "bd-xss2",
        "title": XSS["description"],
        "status": "open",
        "priority": 4,
        "issue_type": "task",
        "labels": ["xss"],
        "created_at": stamp,
        "updated_at": stamp,
        "dependencies": [{"issue_id": "bd-xss2", "depends_on_id": "bd-xss1", "type": "blocks"}],
    }
    return [json.dumps(first), json.dumps(second)]


def _demo_lines() -> list[str]:
    """A small epic whose graph shows everything at once: claims, blocked links, a cycle and the critical path
    (the real exports' open epics are small), for the graph's screenshot."""
    stamp = "2026-01-02T00:00:00Z"

    def issue(issue_id: str, title: str, *links: tuple[str, str], **fields: Any) -> str:
        record = {"id": issue_id, "title": title, "status": "open", "priority": 3, "issue_type": "task"}
        record.update(created_at=stamp, updated_at=stamp, **fields)
        record["dependencies"] = [{"issue_id": issue_id, "depends_on_id": t, "type": k} for k, t in links]
        return json.dumps(record)

    child = ("parent-child", DEMO)
    return [
        issue(DEMO, "Ship the web board", issue_type="epic"),
        issue(f"{DEMO}.1", "Sessions in the store", child, status="closed", closed_at=stamp),
        issue(f"{DEMO}.2", "Sign-in page", child, status="in_progress", assignee=ANN),
        issue(f"{DEMO}.3", "Dependency graph", child, ("blocks", f"{DEMO}.2")),
        issue(f"{DEMO}.4", "Screenshots in the docs", child, ("blocks", f"{DEMO}.3")),
        issue(f"{DEMO}.5", "Accessibility audit", child, ("blocks", "bd-demoaxe"), ("blocks", "bd-demoloop1")),
        issue("bd-demoaxe", "Pin axe-core", status="closed", closed_at=stamp),
        issue("bd-demoloop1", "Imported loop, part one", ("blocks", "bd-demoloop2")),
        issue("bd-demoloop2", "Imported loop, part two", ("waits-for", "bd-demoloop1")),
    ]


def _bee(*args: str) -> str:
    completed = subprocess.run(
        [str(Path(sys.executable).parent / "bee"), "tracker", *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return completed.stdout


@pytest.fixture(scope="module")
def tracker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TrackerProcess]:
    home = tmp_path_factory.mktemp("board") / "home"
    _bee("init", "--home", str(home))
    _bee("import", "--home", str(home), str(EXPORT))
    extra = home.parent / "xss.jsonl"
    extra.write_text("\n".join([*_xss_lines(), *_demo_lines()]) + "\n")
    _bee("import", "--home", str(home), "--allow-cycles", str(extra))  # the demo's imported loop
    server = TrackerProcess(home)
    server.start()
    yield server
    server.stop()


class Tokens:
    def __init__(self, server: TrackerProcess) -> None:
        self.server = server
        self.minted: dict[str, str] = {}

    def __call__(self, actor: str) -> str:
        if actor not in self.minted:
            self.minted[actor] = self.server.token(actor)
        return self.minted[actor]


@pytest.fixture(scope="module")
def tokens(tracker: TrackerProcess) -> Tokens:
    return Tokens(tracker)


def mcp(tracker: TrackerProcess, token: str, tool: str, **arguments: Any) -> dict[str, Any]:
    """One MCP tool call with the official client, run on an event loop of its own thread (Playwright's sync API
    owns this one)."""

    async def call() -> dict[str, Any]:
        async with tracker_client(tracker.url, token) as client:
            result = await client.call_tool(tool, arguments)
            if result.is_error:
                return {"error": error_of(result)}
            data: dict[str, Any] = result.structured_content["data"]
            return data

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, call).result(timeout=120)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    flags = [*FLAGS, *(["--no-sandbox"] if running_as_root() else [])]
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=browser_executable(), args=flags, headless=True)
        yield launched
        launched.close()


class Watched:
    """A page whose dialogs (alert, confirm) and console errors are recorded."""

    def __init__(self, browser: Any, base: str) -> None:
        self.context = browser.new_context(
            viewport={"width": 1280, "height": 900},
            device_scale_factor=1,
            locale="en-US",
            timezone_id="UTC",
            color_scheme="light",
            reduced_motion="reduce",
            service_workers="block",
        )
        self.context.set_default_timeout(30_000)
        self.page = self.context.new_page()
        self.base = base
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.page.on("dialog", self._dialog)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _console(self, message: Any) -> None:
        # A page answered with 401 or 404 on purpose is logged as a failed load; anything else is an error here
        # (a script, style or eval the policy refused, a script that threw).
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.errors.append(message.text)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def go(self, path: str) -> Any:
        return self.page.goto(self.base + path, wait_until="load")

    def sign_in(self, token: str) -> None:
        self.go("/board/")
        self.page.fill("#token", token)
        with self.page.expect_navigation():
            self.page.click("button[type=submit]:has-text('Sign in')")
        assert self.page.url == self.base + "/board/", self.page.locator("main").inner_text()

    def ids(self, column: str) -> list[str]:
        return [text.strip() for text in self.page.locator(f"section.column-{column} .card h3 .id").all_inner_texts()]

    def shot(self, name: str, *, full_page: bool = False, element: str | None = None) -> None:
        if SHOTS:
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            self.page.evaluate("document.fonts.ready")
            path = str(Path(SHOTS) / f"board-{name}.png")
            if element:
                self.page.locator(element).screenshot(path=path, animations="disabled", caret="hide")
            else:
                self.page.screenshot(path=path, full_page=full_page, animations="disabled", caret="hide")

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def watched(browser: Any, tracker: TrackerProcess) -> Iterator[Watched]:
    page = Watched(browser, f"http://127.0.0.1:{tracker.port}")
    yield page
    page.close()


def test_sign_in_with_a_token_and_the_ready_column_is_the_ready_tools_answer(
    watched: Watched, tracker: TrackerProcess, tokens: Tokens
) -> None:
    watched.go("/board/")
    assert watched.page.locator("h1").inner_text() == "Sign in to the board"
    watched.shot("signin")
    watched.sign_in(tokens(ANN))
    ready = mcp(tracker, tokens(ANN), "ready", limit=100)
    assert not ready["has_more"]
    assert watched.ids("ready") == [issue["id"] for issue in ready["issues"]]
    count = watched.page.locator("#col-ready .count").inner_text()
    assert int(count) == len(ready["issues"])
    assert f"Signed in as {ANN}" in watched.page.locator(".who").inner_text()
    watched.shot("board")
    assert watched.dialogs == [] and watched.errors == []


def test_a_one_time_link_signs_in_once_and_leaves_no_token_in_the_address(
    watched: Watched, tracker: TrackerProcess
) -> None:
    link = _bee("open", "--home", str(tracker.home), "--actor", BOB, "--url", watched.base).strip()
    watched.page.goto(link, wait_until="load")
    assert watched.page.url == watched.base + "/board/"
    assert f"Signed in as {BOB}" in watched.page.locator(".who").inner_text()
    other = watched.context.browser.new_context()
    try:
        again = other.new_page()
        again.goto(link, wait_until="load")
        assert "already used" in again.locator(".notice").inner_text()
    finally:
        other.close()
    with watched.page.expect_navigation():
        watched.page.click("button:has-text('Sign out')")
    assert watched.page.url.startswith(watched.base + "/board/signin")
    watched.go("/board/")
    assert watched.page.locator("h1").inner_text() == "Sign in to the board"


def _tab_to(watched: Watched, element_id: str, limit: int = 800) -> int:
    for presses in range(1, limit + 1):
        watched.page.keyboard.press("Tab")
        if watched.page.evaluate("document.activeElement && document.activeElement.id") == element_id:
            return presses
    raise AssertionError(f"#{element_id} was not reached with the Tab key in {limit} presses")


def test_claim_from_the_board_with_the_keyboard_alone_moves_the_card_and_the_tool_sees_it(
    watched: Watched, tracker: TrackerProcess, tokens: Tokens
) -> None:
    watched.sign_in(tokens(ANN))
    watched.page.keyboard.press("Tab")
    assert watched.page.evaluate("document.activeElement.textContent") == "Skip to content"
    first, second = watched.ids("ready")[:2]
    _tab_to(watched, f"claim-{dom_id(first)}")
    with watched.page.expect_navigation():
        watched.page.keyboard.press("Enter")
    assert first in watched.ids("in_progress") and first not in watched.ids("ready")
    got = mcp(tracker, tokens(BOB), "get", id=first)
    assert got["issue"]["assignee"] == ANN and got["issue"]["status"] == "in_progress"
    assert got["history"][-1]["actor"] == ANN and got["history"][-1]["tool"] == "claim"
    _tab_to(watched, f"claim-{dom_id(second)}")
    with watched.page.expect_navigation():
        watched.page.keyboard.press("Space")
    assert second in watched.ids("in_progress")
    assert mcp(tracker, tokens(BOB), "get", id=second)["issue"]["assignee"] == ANN
    for issue in (first, second):
        mcp(tracker, tokens(ANN), "release", id=issue)
    assert watched.dialogs == [] and watched.errors == []


def test_another_actors_claim_cannot_be_released_from_the_board(
    watched: Watched, tracker: TrackerProcess, tokens: Tokens
) -> None:
    issue = mcp(tracker, tokens(BOB), "ready", limit=1)["issues"][0]["id"]
    mcp(tracker, tokens(BOB), "claim", id=issue)
    try:
        watched.sign_in(tokens(ANN))
        watched.go(f"/board/issues/{issue}")
        assert watched.page.locator("#release").count() == 0 and watched.page.locator("#claim").count() == 0
        assert f"Only {BOB} can release" in watched.page.locator(".state").inner_text()
        revision = mcp(tracker, tokens(ANN), "get", id=issue)["state_revision"]
        status = watched.page.evaluate(  # the form the page does not offer, forged with the page's own token
            """async ([id, revision]) => {
                const csrf = document.querySelector('input[name=csrf]').value;
                const body = new URLSearchParams({csrf, id, expected_revision: String(revision)});
                return (await fetch('/board/write/release', {method: 'POST', body})).status;
            }""",
            [issue, revision],
        )
        assert status == 403
        assert mcp(tracker, tokens(ANN), "get", id=issue)["issue"]["assignee"] == BOB
    finally:
        mcp(tracker, tokens(BOB), "release", id=issue)


def test_xss_payloads_render_as_text_and_nothing_runs(
    watched: Watched, tracker: TrackerProcess, tokens: Tokens
) -> None:
    watched.sign_in(tokens(ANN))
    for path in ("/board/?label=xss", "/board/issues/bd-xss1", "/board/issues/bd-xss2", "/board/search?q=script"):
        watched.go(path)
        watched.page.wait_for_timeout(200)  # let any handler that had got in fire
        assert watched.page.evaluate("window.__xss") is None, path
        injected = watched.page.evaluate(
            "document.querySelectorAll('img[src=x], iframe, svg, script:not([src]), a[href^=javascript]').length"
        )
        assert injected == 0, path
    text = watched.page.goto(watched.base + "/board/issues/bd-xss1").ok and watched.page.locator("main").inner_text()
    for payload in XSS.values():
        assert payload in text
    watched.go("/board/graph/bd-xss2")
    assert watched.page.evaluate("window.__xss") is None
    assert watched.dialogs == []


def test_the_board_updates_live_without_a_reload(watched: Watched, tracker: TrackerProcess, tokens: Tokens) -> None:
    watched.sign_in(tokens(ANN))
    watched.page.evaluate("window.__stayed = true")
    issue = watched.ids("ready")[0]
    mcp(tracker, tokens(BOB), "claim", id=issue)
    try:
        watched.page.wait_for_function(
            "(id) => [...document.querySelectorAll('section.column-in_progress .card h3 .id')]"
            ".some((e) => e.textContent.trim() === id)",
            arg=issue,
            timeout=20_000,
        )
        assert watched.page.evaluate("window.__stayed") is True  # swapped in place, not reloaded
        assert issue not in watched.ids("ready")
        assert watched.errors == []  # htmx works under the policy: no refused script, style or eval
    finally:
        mcp(tracker, tokens(BOB), "release", id=issue)


def test_the_pages_pass_axe_and_have_screenshots(watched: Watched, tracker: TrackerProcess, tokens: Tokens) -> None:
    axe = AXE.read_text(encoding="utf-8")

    def audit(name: str) -> None:
        watched.page.evaluate(axe)  # through DevTools, so the board's own policy does not have to allow it
        found = watched.page.evaluate(
            """async () => (await axe.run(document, {resultTypes: ['violations']})).violations.map((v) => (
                {id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target)}))"""
        )
        serious = [v for v in found if v["impact"] in ("serious", "critical")]
        assert serious == [], (name, serious)

    watched.go("/board/")
    audit("signin")
    watched.sign_in(tokens(ANN))
    audit("board")
    for name, path, full in (
        ("issue", f"/board/issues/{EPIC}", True),
        ("epics", "/board/epics", False),
        ("search", "/board/search?q=sync", False),
        ("new", "/board/new", False),
        ("not-found", "/board/issues/bd-nope", False),
    ):
        watched.go(path)
        audit(name)
        if name != "not-found":
            watched.shot(name, full_page=full)
    watched.go(f"/board/graph/{DEMO}")
    assert watched.page.locator("svg").count() == 1
    watched.shot("graph", element="svg")
    assert watched.dialogs == [] and watched.errors == []


def test_a_huge_query_string_is_refused_at_the_edge_and_a_long_one_by_the_board(
    tracker: TrackerProcess, tokens: Tokens
) -> None:
    import httpx

    base = f"http://127.0.0.1:{tracker.port}"
    assert httpx.get(f"{base}/board/?label={'x' * 9000}", timeout=30).status_code == 414
    with httpx.Client(base_url=base, timeout=30) as http:
        page = http.get("/board/signin").text
        form = page.split('name="form_token" value="', 1)[1].split('"', 1)[0]
        signed = http.post("/board/signin", data={"form_token": form, "token": tokens(ANN)}, headers={"origin": base})
        assert signed.status_code == 303
        long = http.get(f"/board/search?q={'q' * 2000}")
        assert long.status_code == 400 and "q parameter is longer than 1000 characters" in long.text


@pytest.mark.parametrize(("width", "rows"), [(1280, [4]), (1000, [2, 2])])
def test_an_empty_board_shows_its_first_steps_above_the_columns_which_keep_their_rows(
    browser: Any, tracker_factory: TrackerFactory, width: int, rows: list[int]
) -> None:
    empty = tracker_factory()  # a tracker of its own, which holds no issues
    watched = Watched(browser, f"http://127.0.0.1:{empty.port}")
    try:
        watched.page.set_viewport_size({"width": width, "height": 900})
        watched.sign_in(empty.token(ANN))
        steps = watched.page.locator(".first-steps").bounding_box()
        columns = [
            watched.page.locator(f"section.column-{key}").bounding_box()
            for key in ("blocked", "ready", "in_progress", "closed")
        ]
    finally:
        watched.close()
    # The columns fill their rows in order (four abreast, or two by two on a narrower screen), every column of a row
    # at the same height: the first steps take no column's place.
    at = 0
    for count in rows:
        row, at = columns[at : at + count], at + count
        assert {round(box["y"]) for box in row} == {round(row[0]["y"])}, (width, columns)
        assert all(a["x"] + a["width"] <= b["x"] for a, b in itertools.pairwise(row)), (width, columns)
    # The first steps sit above the columns, as wide as they are together.
    assert steps["y"] + steps["height"] <= columns[0]["y"], (steps, columns)
    assert round(steps["x"]) == round(columns[0]["x"])
    assert round(steps["x"] + steps["width"]) == round(max(box["x"] + box["width"] for box in columns))
