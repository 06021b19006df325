"""A lead's writes from the board: each form is a tracker tool for the signed-in actor, under the same rules."""

from typing import Any

import pytest
from starlette.testclient import TestClient

from bee_tracker import calls
from bee_tracker.store import SqlStore
from tests.board.helpers import ALICE, BOB, Elements, created, post, sign_in


def get(store: SqlStore, issue_id: str) -> dict[str, Any]:
    data: dict[str, Any] = calls.call(store, "get", ALICE, {"id": issue_id})["data"]
    return data


def history(store: SqlStore, issue_id: str) -> list[tuple[str, str]]:
    return [(event["actor"], event["tool"]) for event in get(store, issue_id)["history"]]


def test_claim_is_the_claim_tool_for_the_signed_in_actor(web: TestClient, lite: SqlStore) -> None:
    issue = created(lite, "claim me")
    csrf = sign_in(web, BOB)
    answer = post(web, "/board/write/claim", {"csrf": csrf, "id": issue, "next": "/board/?type=task", "actor": ALICE})
    assert answer.status_code == 303 and answer.headers["location"] == "/board/?type=task"
    got = get(lite, issue)
    assert got["issue"]["assignee"] == BOB and got["issue"]["status"] == "in_progress"
    assert history(lite, issue)[-1] == (BOB, "claim")  # the session decides, never a form field


def test_another_actors_claim_cannot_be_released_from_the_board(web: TestClient, lite: SqlStore) -> None:
    issue = created(lite, "held by alice")
    calls.call(lite, "claim", ALICE, {"id": issue})
    before = get(lite, issue)
    csrf = sign_in(web, BOB)
    page = web.get(f"/board/issues/{issue}")
    assert "Only alice@example.com can release" in page.text and "/write/release" not in page.text
    answer = post(
        web,
        "/board/write/release",
        {"csrf": csrf, "id": issue, "expected_revision": before["state_revision"]},
    )
    assert answer.status_code == 403 and f"claimed by {ALICE}" in answer.text and "Nothing was changed" in answer.text
    after = get(lite, issue)
    assert after["issue"]["assignee"] == ALICE and after["state_revision"] == before["state_revision"]
    assert post(web, "/board/write/complete", {"csrf": csrf, "id": issue, "expected_revision": 99}).status_code in (
        403,
        409,
    )
    assert get(lite, issue)["issue"]["status"] == "in_progress"


def test_a_write_on_a_stale_revision_says_someone_else_changed_it_and_shows_the_current_state(
    web: TestClient, lite: SqlStore
) -> None:
    issue = created(lite, "contested", priority=2)
    csrf = sign_in(web, ALICE)
    page = web.get(f"/board/issues/{issue}")
    revision = get(lite, issue)["state_revision"]
    assert f'name="expected_revision" value="{revision}"' in page.text
    calls.call(lite, "update", BOB, {"id": issue, "priority": 0})  # Bob changes it while Alice looks at the page
    answer = post(
        web, "/board/write/priority", {"csrf": csrf, "id": issue, "priority": "4", "expected_revision": revision}
    )
    assert answer.status_code == 409
    assert "Someone else changed this issue after you opened the page, so nothing was changed" in answer.text
    assert '<option value="0" selected>P0</option>' in answer.text  # the page shows the issue as it is now
    assert get(lite, issue)["issue"]["priority"] == 0
    assert history(lite, issue) == [(ALICE, "create"), (BOB, "update")]


@pytest.mark.parametrize(
    ("data", "headers"),
    [
        ({}, {}),
        ({"csrf": "forged"}, {}),
        ({"csrf": None}, {"origin": "https://evil.example"}),
    ],
    ids=["missing", "forged", "cross-origin"],
)
def test_a_write_without_the_sessions_csrf_token_changes_nothing(
    web: TestClient, lite: SqlStore, data: dict[str, str | None], headers: dict[str, str]
) -> None:
    issue = created(lite, "protected")
    csrf = sign_in(web, BOB)
    form = {"id": issue, "text": "sneaky", **{k: v if v is not None else csrf for k, v in data.items()}}
    answer = post(web, "/board/write/comment", form, **headers)
    assert answer.status_code == 403 and "nothing was changed" in answer.text.lower()
    assert get(lite, issue)["comment_count"] == 0 and history(lite, issue) == [(ALICE, "create")]


def test_a_write_with_an_ended_session_changes_nothing_and_says_so(web: TestClient, lite: SqlStore) -> None:
    issue = created(lite, "after sign-out")
    csrf = sign_in(web, BOB)
    post(web, "/board/signout", {"csrf": csrf})
    answer = post(web, "/board/write/claim", {"csrf": csrf, "id": issue})
    assert answer.status_code == 401 and "nothing was changed" in answer.text.lower()
    assert get(lite, issue)["issue"].get("assignee") is None


def test_unknown_ids_and_actions_get_a_404_page(web: TestClient, lite: SqlStore) -> None:
    csrf = sign_in(web)
    missing = post(web, "/board/write/claim", {"csrf": csrf, "id": "t-nope"})
    assert missing.status_code == 404 and "no issue &#39;t-nope&#39;" in missing.text
    assert post(web, "/board/write/delete", {"csrf": csrf, "id": "t-nope"}).status_code == 404
    assert web.get("/board/issues/t-nope").status_code == 404
    assert web.get("/board/graph/t-nope").status_code == 404


def test_create_comment_labels_and_complete_go_through_the_tools(web: TestClient, lite: SqlStore) -> None:
    epic = created(lite, "the epic", issue_type="epic")
    csrf = sign_in(web, BOB)
    answer = post(
        web,
        "/board/write/create",
        {
            "csrf": csrf,
            "idempotency_key": "create-key-1",
            "title": "made on the board",
            "issue_type": "bug",
            "priority": "1",
            "labels": "ui, board , ui",
            "parent": epic,
            "description": "line one\nline two",
        },
    )
    assert answer.status_code == 303
    issue = answer.headers["location"].rsplit("/", 1)[1]
    assert issue == f"{epic}.1"
    got = get(lite, issue)["issue"]
    assert (got["title"], got["issue_type"], got["priority"], got["labels"]) == (
        "made on the board",
        "bug",
        1,
        ["ui", "board"],
    )
    assert got["created_by"] == BOB
    for _ in range(2):  # the same form submitted twice acts once
        post(web, "/board/write/comment", {"csrf": csrf, "id": issue, "text": "noted", "idempotency_key": "same-key-1"})
    assert get(lite, issue)["comment_count"] == 1
    revision = get(lite, issue)["state_revision"]
    post(web, "/board/write/labels", {"csrf": csrf, "id": issue, "labels": "board", "expected_revision": revision})
    assert get(lite, issue)["issue"]["labels"] == ["board"]
    revision = get(lite, issue)["state_revision"]
    done = post(
        web,
        "/board/write/complete",
        {"csrf": csrf, "id": issue, "summary": "shipped", "evidence": "it works", "expected_revision": revision},
    )
    assert done.status_code == 303
    assert get(lite, issue)["issue"]["status"] == "closed"
    assert [tool for _, tool in history(lite, issue)] == ["create", "add_note", "update", "complete"]


def test_completing_an_epic_with_open_children_is_refused_with_the_tools_reason(
    web: TestClient, lite: SqlStore
) -> None:
    epic = created(lite, "parent", issue_type="epic")
    created(lite, "child", parent=epic)
    csrf = sign_in(web)
    revision = get(lite, epic)["state_revision"]
    answer = post(web, "/board/write/complete", {"csrf": csrf, "id": epic, "expected_revision": revision})
    assert answer.status_code == 409 and "open children" in answer.text
    assert get(lite, epic)["issue"]["status"] == "open"


def test_a_create_the_tool_refuses_shows_the_form_again_with_what_was_typed(web: TestClient, lite: SqlStore) -> None:
    csrf = sign_in(web)
    answer = post(web, "/board/write/create", {"csrf": csrf, "title": "", "priority": "2", "description": "kept <b>"})
    assert answer.status_code == 400 and "Nothing was created" in answer.text
    assert "kept &lt;b&gt;" in answer.text
    assert post(web, "/board/write/create", {"csrf": csrf, "title": "x", "priority": "nine"}).status_code == 400


def test_forms_other_than_the_boards_own_are_refused(web: TestClient, lite: SqlStore) -> None:
    issue = created(lite)
    csrf = sign_in(web)
    as_json = web.post(
        "/board/write/comment",
        json={"csrf": csrf, "id": issue, "text": "x"},
        headers={"origin": str(web.base_url).rstrip("/")},
    )
    assert as_json.status_code == 415
    huge = post(web, "/board/write/comment", {"csrf": csrf, "id": issue, "text": "x" * (1024 * 1024 + 1)})
    assert huge.status_code == 413
    assert get(lite, issue)["comment_count"] == 0


def test_every_write_form_on_every_page_carries_the_csrf_token(web: TestClient, lite: SqlStore) -> None:
    epic = created(lite, "epic", issue_type="epic")
    created(lite, "child", parent=epic)
    csrf = sign_in(web)
    for path in ("/board/", f"/board/issues/{epic}", "/board/new", "/board/epics", "/board/search?q=child"):
        forms = [attrs for tag, attrs in Elements(web.get(path).text).tags if tag == "form"]
        posting = [attrs for attrs in forms if attrs.get("method") == "post"]
        assert posting, path
        page = web.get(path).text
        assert page.count('name="csrf"') + page.count('name="form_token"') >= len(posting), path
        assert f'value="{csrf}"' in page


def test_a_session_without_the_board_admin_scope_reads_but_cannot_write(web: TestClient, lite: SqlStore) -> None:
    import time

    import jwt

    from tests.board.helpers import SECRET

    issue = created(lite, "read only")
    now = int(time.time())
    reader = jwt.encode({"sub": BOB, "exp": now + 600, "scope": "tracker:read"}, SECRET, algorithm="HS256")
    csrf = sign_in(web, BOB, token=reader)
    assert web.get("/board/").status_code == 200
    answer = post(web, "/board/write/claim", {"csrf": csrf, "id": issue})
    assert answer.status_code == 403 and "writes need the board:admin scope" in answer.text
    assert get(lite, issue)["issue"]["status"] == "open" and history(lite, issue)[-1][1] == "create"
    # A token with the scope (or, as before, with no scope at all) writes.
    admin = jwt.encode({"sub": BOB, "exp": now + 600, "scope": "tracker:read board:admin"}, SECRET, algorithm="HS256")
    web.cookies.clear()  # another browser
    csrf = sign_in(web, BOB, token=admin)
    assert post(web, "/board/write/claim", {"csrf": csrf, "id": issue}).status_code == 303
