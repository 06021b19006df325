"""The board's pages read through the tracker's own functions, escape every piece of issue text, and carry strict
headers; bad queries and unknown ids get clear pages."""

import html
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from bee_tracker import calls
from bee_tracker.board.headers import CONTENT_SECURITY_POLICY
from bee_tracker.store import SqlStore, open_store
from tests.board.helpers import ALICE, BOB, SECRET, Elements, client, created, post, sign_in
from tests.conftest import FIXTURES

EXPORTS = sorted((FIXTURES / "beads").glob("*.jsonl"))
TEMPLATES = Path(__file__).parents[2] / "packages/bee-tracker/src/bee_tracker/board/templates"
HTMX = "/board/static/vendor/htmx.org/htmx.min.js"
#: The board's live updates (board/static/live.js), on every signed-in page.
LIVE = {"src": "/board/static/live.js", "data-events": "/board/events", "defer": None}

#: Payloads that would run script, add markup, or be evaluated as a template, if any page trusted issue text.
XSS = [
    "<script>window.__xss=1</script>",
    '"><img src=x onerror="window.__xss=2">',
    "'><svg onload=alert(3)>",
    "</textarea><script>alert(4)</script>",
    '<a href="javascript:alert(5)">click</a>',
    "{{ 7 * 7 }}{% raw %}",
    "]]><!--<iframe src=//evil.example>",
]


def found(pattern: str, text: str) -> re.Match[str]:
    """The first match of ``pattern`` in ``text``, which must have one."""
    match = re.search(pattern, text)
    assert match is not None, pattern
    return match


def column_ids(page: str, key: str) -> list[str]:
    section = page.split(f'class="column column-{key}"', 1)[1].split("</section>", 1)[0]
    return [html.unescape(found) for found in re.findall(r'<span class="id">(.*?)</span>', section)]


def marked_blocked(page: str, key: str) -> list[str]:
    """The ids of the cards in column ``key`` that are marked as blocked."""
    section = page.split(f'class="column column-{key}"', 1)[1].split("</section>", 1)[0]
    cards = section.split('<li class="card')[1:]
    return [
        html.unescape(found(r'<span class="id">(.*?)</span>', card).group(1))
        for card in cards
        if card.startswith(" card-blocked")
    ]


def column_total(page: str, key: str) -> int:
    found = re.search(rf'id="col-{key}">[^<]*<span class="count">(\d+)</span>', page)
    assert found
    return int(found.group(1))


@pytest.mark.parametrize("export", EXPORTS, ids=[p.stem for p in EXPORTS])
def test_the_ready_column_is_the_ready_tools_answer_on_real_beads_exports(tmp_path: Path, export: Path) -> None:
    store = open_store(str(tmp_path / "tracker.db"))
    store.import_lines(export.read_bytes().splitlines())
    with client(store, tmp_path) as web:
        sign_in(web)
        page = web.get("/board/").text
        ready = calls.call(store, "ready", ALICE, {"limit": 100})["data"]
        assert column_ids(page, "ready") == [i["id"] for i in ready["issues"]][:50]
        if not ready["has_more"]:
            assert column_total(page, "ready") == len(ready["issues"])
        in_progress = calls.call(store, "search", ALICE, {"status": ["in_progress"], "limit": 100})["data"]
        assert column_total(page, "in_progress") == in_progress["total"]
        closed = calls.call(store, "search", ALICE, {"status": ["closed"], "limit": 1})["data"]
        assert column_total(page, "closed") == closed["total"]
        for issue in ready["issues"][:3]:  # a filter narrows the column exactly as the tool's filter does
            priority = issue["priority"]
            filtered = web.get(f"/board/?priority={priority}").text
            tool = calls.call(store, "ready", ALICE, {"limit": 50, "priority": priority})["data"]["issues"]
            assert column_ids(filtered, "ready") == [i["id"] for i in tool]
    store.close()


def test_the_columns_follow_the_trackers_blocked_and_claim_semantics(store: SqlStore, tmp_path: Path) -> None:
    blocker = created(store, "blocker")
    blocked = created(store, "waits", prerequisites=[blocker])
    epic = created(store, "epic", issue_type="epic")
    child = created(store, "child of a blocked epic", parent=epic)
    calls.call(store, "link", ALICE, {"id": epic, "target": blocker, "type": "blocks"})
    held = created(store, "held", labels=["ui"])
    calls.call(store, "claim", BOB, {"id": held})
    stuck = created(store, "held but waiting", priority=3, prerequisites=[blocker])
    calls.call(store, "claim", BOB, {"id": stuck})
    done = created(store, "done")
    calls.call(store, "complete", ALICE, {"id": done, "summary": "ok"})
    deferred = created(store, "deferred")
    calls.call(store, "update", ALICE, {"id": deferred, "status": "deferred"})
    gate = created(store, "a gate", issue_type="gate")
    with client(store, tmp_path) as web:
        sign_in(web)
        page = web.get("/board/").text
        narrowed = web.get("/board/?label=ui&assignee=" + BOB).text
    assert set(column_ids(page, "blocked")) == {blocked, epic, child, deferred}
    assert column_total(page, "blocked") == 4
    assert column_ids(page, "ready") == [blocker] and column_total(page, "ready") == 1
    assert column_ids(page, "in_progress") == [held, stuck] and f"held by {BOB}" in page
    # In progress, a card whose work is blocked says so; the one that is not does not.
    assert marked_blocked(page, "in_progress") == [stuck]
    assert column_ids(page, "closed") == [done]
    assert "1 more issue matches but is on no column" in " ".join(page.split())  # the gate
    assert gate not in page
    flat = " ".join(page.split())
    assert f'Blocked by <a href="/board/issues/{blocker}">' in flat
    assert "its parent is blocked:" in flat and "status deferred" in flat
    assert column_ids(narrowed, "in_progress") == [held] and column_ids(narrowed, "ready") == []


def test_the_board_shows_until_when_a_claim_holds_and_an_expired_one_on_ready(store: SqlStore, tmp_path: Path) -> None:
    from tests.tracker.test_claim_leases import expired_claim

    leased = created(store, "leased")
    held = calls.call(store, "claim", BOB, {"id": leased, "lease_seconds": 3600})["data"]
    stranded, expired_at = expired_claim(store)
    with client(store, tmp_path) as web:
        sign_in(web)
        page = web.get("/board/").text
        issue_page = web.get(f"/board/issues/{leased}").text
        stranded_page = web.get(f"/board/issues/{stranded}").text
    flat = " ".join(page.split())
    assert column_ids(page, "in_progress") == [leased] and column_total(page, "in_progress") == 1
    assert f"held by {BOB} until {held['lease_expires_at']}" in flat
    assert column_ids(page, "ready") == [stranded] and column_total(page, "ready") == 1  # once, on Ready only
    assert f"{ALICE}'s claim expired at {expired_at}" in flat
    assert f"claimed by {BOB} until {held['lease_expires_at']}" in " ".join(issue_page.split())
    assert f"{ALICE}'s claim expired at {expired_at}" in " ".join(stranded_page.split())
    assert 'id="claim"' in stranded_page  # anyone may take it


def test_claiming_from_the_board_moves_the_card_to_in_progress(web: TestClient, lite: SqlStore) -> None:
    issue = created(lite, "move me")
    csrf = sign_in(web, BOB)
    page = web.get("/board/").text
    assert column_ids(page, "ready") == [issue] and 'id="claim-i' in page
    post(web, "/board/write/claim", {"csrf": csrf, "id": issue, "next": "/board/"})
    after = web.get("/board/").text
    assert column_ids(after, "ready") == [] and column_ids(after, "in_progress") == [issue]
    assert "/board/write/release" in after  # the holder may release it from the card


def test_search_is_the_search_tools_answer(web: TestClient, lite: SqlStore) -> None:
    for n in range(60):
        created(lite, f"needle {n}" if n % 2 else f"hay {n}")
    sign_in(web)
    page = web.get("/board/search?q=needle").text
    tool = calls.call(lite, "search", ALICE, {"query": "needle", "limit": 50})["data"]
    assert re.findall(r'<span class="id">(.*?)</span>', page) == [i["id"] for i in tool["issues"]]
    assert "30 issues found; showing 1–30" in page
    by_id = web.get(f"/board/search?q={tool['issues'][0]['id']}").text
    assert "1 issue found" in by_id
    paged = web.get("/board/search?status=open&offset=50").text
    assert "60 issues found; showing 51–60" in paged and 'rel="prev"' in paged


def test_the_issue_page_shows_every_field_comments_dependencies_both_ways_revisions_and_history(
    web: TestClient, lite: SqlStore
) -> None:
    first = created(lite, "first")
    issue = created(
        lite,
        "the issue",
        description="what",
        acceptance_criteria="how we know",
        labels=["a", "b"],
        prerequisites=[first],
        external_ref="gh-12",
    )
    dependent = created(lite, "after", prerequisites=[issue])
    calls.call(lite, "add_note", BOB, {"id": issue, "text": "a note from bob"})
    sign_in(web)
    page = web.get(f"/board/issues/{issue}").text
    got = calls.call(lite, "get", ALICE, {"id": issue})["data"]
    for text in ("the issue", "what", "how we know", "gh-12", "a note from bob", BOB, first, dependent):
        assert text in page
    assert f"<dt>state_revision</dt><dd>{got['state_revision']}</dd>" in page
    assert f"<dt>activity_revision</dt><dd>{got['activity_revision']}</dd>" in page
    assert "Depends on (1)" in page and "Dependents (1)" in page and "History (2)" in page
    assert f'blocked by <a href="/board/issues/{first}">{first}</a>' in page


def test_the_epics_page_shows_each_epics_progress_over_its_children(web: TestClient, lite: SqlStore) -> None:
    epic = created(lite, "ship it", issue_type="epic")
    children = [created(lite, f"step {n}", parent=epic) for n in range(4)]
    calls.call(lite, "complete", ALICE, {"id": children[0]})
    calls.call(lite, "claim", BOB, {"id": children[1]})
    created(lite, "empty epic", issue_type="epic")
    sign_in(web)
    page = web.get("/board/epics").text
    assert '<progress max="4" value="1"' in page and "1 of 4 closed (25%)" in page
    assert "0 of 0 closed (0%)" in page


def test_every_piece_of_issue_text_renders_as_text(lite: SqlStore, tmp_path: Path) -> None:
    """Titles, descriptions, labels, comments and even the actor's name carry the corpus; no page runs or adds any
    of it: the only scripts are the vendored htmx and the board's live updates, no element gets an event handler or
    a javascript: link, and the text reads back exactly."""
    payload = " ".join(XSS)
    actor = "<script>alert('actor')</script>@example.com"
    epic = created(lite, payload[:500], issue_type="epic", description=payload, labels=XSS, actor=actor)
    child = created(lite, XSS[1], parent=epic, actor=actor)
    calls.call(lite, "add_note", actor, {"id": epic, "text": payload})
    calls.call(lite, "claim", actor, {"id": child})
    with client(lite, tmp_path) as web:
        from bee_tracker.auth import mint

        sign_in(web, actor, token=mint(SECRET, actor))
        pages = {
            path: web.get(path)
            for path in (
                "/board/",
                f"/board/issues/{epic}",
                f"/board/issues/{child}",
                "/board/epics",
                "/board/search?q=script",
                "/board/new",
            )
        }
    for path, answer in pages.items():
        assert answer.status_code == 200, path
        parsed = Elements(answer.text)
        scripts = [attrs for tag, attrs in parsed.tags if tag == "script"]
        assert scripts == [{"src": HTMX, "defer": None}, LIVE], path
        for tag, attrs in parsed.tags:
            assert tag not in ("iframe", "img", "svg", "style", "object", "embed") or (
                tag == "img" and (attrs["src"] or "").startswith("/board/graph/")
            ), (path, tag)
            assert not [name for name in attrs if name.startswith("on")], (path, tag, attrs)
            assert not (attrs.get("href") or "").lower().startswith("javascript"), (path, attrs)
    issue_text = Elements(pages[f"/board/issues/{epic}"].text).all_text()
    for piece in XSS:  # every payload reads back as typed ({{ 7 * 7 }} was not evaluated as a template)
        assert piece in issue_text
    assert actor in Elements(pages["/board/"].text).all_text()


def test_every_page_and_answer_carries_the_security_headers(web: TestClient, lite: SqlStore) -> None:
    issue = created(lite)
    sign_in(web)
    for path in (
        "/board/",
        f"/board/issues/{issue}",
        "/board/epics",
        "/board/search",
        "/board/new",
        "/board/nowhere",
        "/board/static/board.css",
        "/board/signin",
    ):
        answer = web.get(path)
        assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY, path
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["referrer-policy"] == "same-origin"
        assert answer.headers["x-content-type-options"] == "nosniff"
        expected_cache = None if path.startswith("/board/static/") else "no-store"
        assert answer.headers.get("cache-control") == expected_cache, path
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY and "unsafe-inline" not in CONTENT_SECURITY_POLICY
    graph = web.get(f"/board/graph/{issue}")
    assert graph.headers["content-type"] == "image/svg+xml"
    assert graph.headers["content-security-policy"].startswith("default-src 'none'")
    assert "sandbox" in graph.headers["content-security-policy"]


def test_the_templates_hold_no_inline_script_or_style_no_unescaped_output_and_no_third_party_address() -> None:
    for template in TEMPLATES.glob("*.html"):
        text = template.read_text()
        assert "|safe" not in text.replace(" ", "") and "autoescape" not in text, template.name
        assert "<style" not in text and " style=" not in text, template.name
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), template.name
        assert not re.search(r"(src|href|action)=\"(https?:)?//", text), template.name


def test_bad_queries_get_a_400_page_and_nothing_else_runs(web: TestClient, lite: SqlStore) -> None:
    sign_in(web)
    for path, words in (
        ("/board/?priority=9", "priority parameter must be a whole number from 0 to 4"),
        ("/board/?label=" + "x" * 101, "label parameter is longer than 100"),
        ("/board/search?q=" + "q" * 1001, "q parameter is longer than 1000"),
        ("/board/search?offset=-1", "offset parameter must be a whole number"),
    ):
        answer = web.get(path)
        assert answer.status_code == 400 and words in answer.text, path
    assert web.get("/board/columns?since=" + "f" * 65).status_code == 400


def test_the_board_poll_answers_204_until_something_changes(web: TestClient, lite: SqlStore) -> None:
    issue = created(lite, "watched")
    sign_in(web)
    page = web.get("/board/").text
    poll = found(r'hx-get="([^"]+)" hx-trigger="every 5s, bee:change from:body"', page).group(1)
    poll = html.unescape(poll)
    assert web.get(poll).status_code == 204
    assert web.get(poll).status_code == 204
    calls.call(lite, "add_note", BOB, {"id": issue, "text": "activity, not state"})
    changed = web.get(poll)
    assert changed.status_code == 200 and 'id="columns"' in changed.text
    fresh = html.unescape(found(r'hx-get="([^"]+)"', changed.text).group(1))
    assert fresh != poll and web.get(fresh).status_code == 204
    web.cookies.clear()
    ended = web.get(fresh)
    assert ended.status_code == 401 and "Your session has ended" in ended.text


def test_the_issue_poll_says_when_the_issue_changed(web: TestClient, lite: SqlStore) -> None:
    issue = created(lite, "watched")
    sign_in(web)
    page = web.get(f"/board/issues/{issue}").text
    poll = html.unescape(found(r'hx-get="(/board/changes/[^"]+)"', page).group(1))
    assert web.get(poll).status_code == 204
    calls.call(lite, "update", BOB, {"id": issue, "priority": 1})
    changed = web.get(poll)
    assert changed.status_code == 200 and "This issue changed after you opened this page" in changed.text


def test_an_empty_board_says_how_to_create_or_import_issues_and_the_first_issue_ends_it(
    web: TestClient, lite: SqlStore
) -> None:
    sign_in(web, ALICE)
    empty = web.get("/board/").text
    assert "This tracker holds no issues yet" in empty
    assert 'href="/board/new"' in empty and "bee tracker import .beads/issues.jsonl" in empty
    assert "This tracker holds no issues yet" not in web.get("/board/?label=nothing").text  # filtered, not empty
    created(lite, "the first")
    assert "This tracker holds no issues yet" not in web.get("/board/").text


def test_a_favicon_is_served_so_browsers_log_no_404(web: TestClient) -> None:
    redirected = web.get("/favicon.ico", follow_redirects=False)
    assert redirected.status_code == 308 and redirected.headers["location"] == "/board/static/favicon.svg"
    icon = web.get("/board/static/favicon.svg")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.text.startswith("<svg")
