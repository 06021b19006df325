"""Signing in and out: a pasted token or a one-time link becomes a session cookie; the JWT settings apply as at /mcp."""

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import jwt
import pytest
from starlette.testclient import TestClient

from bee_tracker.auth import LINK_TOKEN_TYPE, mint
from bee_tracker.board.links import LINK_MAX_SECONDS, mint_link_token
from bee_tracker.board.sessions import SESSION_MAX_SECONDS
from bee_tracker.store import SqlStore
from tests.board.helpers import ALICE, SECRET, client, form_token, post, sign_in


def cookie_header(answer: httpx2.Response, name: str) -> str:
    [found] = [value for value in answer.headers.get_list("set-cookie") if value.startswith(name + "=")]
    return found


def test_a_signed_out_person_gets_the_sign_in_page_with_401(web: TestClient) -> None:
    page = web.get("/board/")
    assert page.status_code == 401
    assert "Sign in to see the board" in page.text and 'name="token"' in page.text
    assert "HttpOnly" in cookie_header(page, "bee-board-signin")
    for path in ("/board/epics", "/board/search?q=x", "/board/issues/t-1", "/board/new"):
        assert web.get(path).status_code == 401


def test_a_pasted_token_becomes_a_strict_http_only_session_cookie_and_leaves_no_token_in_any_url(
    web: TestClient,
) -> None:
    page = web.get("/board/signin?next=/board/epics")
    token = mint(SECRET, ALICE, ttl_seconds=3600)
    answer = post(web, "/board/signin", {"form_token": form_token(page.text), "token": token, "next": "/board/epics"})
    assert answer.status_code == 303 and answer.headers["location"] == "/board/epics"
    cookie = cookie_header(answer, "bee-board")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie and "Secure" not in cookie
    max_age = int(cookie.split("Max-Age=")[1].split(";")[0])
    assert 3500 < max_age <= 3600  # never longer than the token it came from
    assert token not in answer.headers["location"] and token not in cookie
    board = web.get("/board/")
    assert board.status_code == 200 and f"Signed in as <strong>{ALICE}</strong>" in board.text
    assert token not in board.text


def test_a_session_lasts_at_most_eight_hours_even_with_a_week_long_token(web: TestClient) -> None:
    page = web.get("/board/signin")
    token = mint(SECRET, ALICE, ttl_seconds=7 * 86400)
    answer = post(web, "/board/signin", {"form_token": form_token(page.text), "token": token})
    max_age = int(cookie_header(answer, "bee-board").split("Max-Age=")[1].split(";")[0])
    assert SESSION_MAX_SECONDS - 5 < max_age <= SESSION_MAX_SECONDS


def test_over_https_the_cookie_is_secure_and_host_prefixed(lite: SqlStore, tmp_path: Path) -> None:
    with client(lite, tmp_path, base_url="https://127.0.0.1:8765") as web:
        page = web.get("/board/signin")
        assert "Secure" in cookie_header(page, "__Host-bee-board-signin")
        answer = post(web, "/board/signin", {"form_token": form_token(page.text), "token": mint(SECRET, ALICE)})
        cookie = cookie_header(answer, "__Host-bee-board")
        assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
        assert web.get("/board/").status_code == 200


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        (lambda: mint(b"another-key-" + b"x" * 32, ALICE), "invalid signature"),
        (lambda: jwt.encode({"sub": ALICE, "exp": int(time.time()) - 600}, SECRET, algorithm="HS256"), "expired"),
        (lambda: jwt.encode({"sub": ALICE}, SECRET, algorithm="HS256"), "lacks the exp claim"),
        (lambda: "not.a.token", "malformed token"),
    ],
)
def test_a_refused_token_signs_nobody_in_and_says_why(web: TestClient, token: Callable[[], str], reason: str) -> None:
    page = web.get("/board/signin")
    answer = post(web, "/board/signin", {"form_token": form_token(page.text), "token": token()})
    assert answer.status_code == 401 and reason in answer.text
    assert not [c for c in answer.headers.get_list("set-cookie") if c.startswith("bee-board=") and "Max-Age=0" not in c]
    assert web.get("/board/").status_code == 401


def test_the_issuer_and_audience_the_tracker_requires_apply_to_the_board(lite: SqlStore, tmp_path: Path) -> None:
    with client(lite, tmp_path, issuer="https://idp.example", audience="bee-tracker") as web:
        page = web.get("/board/signin")
        plain = post(web, "/board/signin", {"form_token": form_token(page.text), "token": mint(SECRET, ALICE)})
        assert plain.status_code == 401 and "token lacks the iss claim" in plain.text
        page = web.get("/board/signin")
        good = mint(SECRET, ALICE, issuer="https://idp.example", audience="bee-tracker")
        assert post(web, "/board/signin", {"form_token": form_token(page.text), "token": good}).status_code == 303


def test_the_sign_in_form_needs_its_own_token_and_this_origin(web: TestClient) -> None:
    page = web.get("/board/signin")
    token = mint(SECRET, ALICE)
    assert post(web, "/board/signin", {"token": token}).status_code == 403
    assert post(web, "/board/signin", {"form_token": "forged", "token": token}).status_code == 403
    foreign = web.post(
        "/board/signin",
        data={"form_token": form_token(page.text), "token": token},
        headers={"origin": "https://evil.example"},
    )
    assert foreign.status_code == 403 and "did not come from this board" in foreign.text
    assert web.get("/board/").status_code == 401


def test_a_one_time_link_signs_in_once_and_redirects_to_a_clean_address(web: TestClient) -> None:
    token = mint_link_token(SECRET, ALICE)
    answer = web.get(f"/board/link?token={token}")
    assert answer.status_code == 303 and answer.headers["location"] == "/board/"
    assert "HttpOnly" in cookie_header(answer, "bee-board")
    assert web.get("/board/").status_code == 200
    web.cookies.clear()
    again = web.get(f"/board/link?token={token}")
    assert again.status_code == 401 and "already used" in again.text
    assert web.get("/board/").status_code == 401


def link_typed(claims: dict[str, Any]) -> str:
    return jwt.encode(claims, SECRET, algorithm="HS256", headers={"typ": LINK_TOKEN_TYPE})


def test_links_that_live_too_long_lack_an_id_or_have_expired_are_refused(web: TestClient) -> None:
    issued = int(time.time())
    too_long = link_typed({"sub": ALICE, "iat": issued, "exp": issued + LINK_MAX_SECONDS + 1, "jti": "x"})
    no_id = link_typed({"sub": ALICE, "iat": issued, "exp": issued + 30})
    expired = link_typed({"sub": ALICE, "iat": issued - 300, "exp": issued - 240, "jti": "y"})
    for token, reason in ((too_long, "at most 60 seconds"), (no_id, "token id"), (expired, "expired")):
        answer = web.get(f"/board/link?token={token}")
        assert answer.status_code == 401 and reason in answer.text, answer.text
    assert web.get("/board/link").status_code == 400
    assert web.get("/board/").status_code == 401


def test_a_links_token_is_good_once_at_its_link_and_for_nothing_else(web: TestClient) -> None:
    token = mint_link_token(SECRET, ALICE)
    for _ in range(3):
        page = web.get("/board/signin")
        pasted = post(web, "/board/signin", {"form_token": form_token(page.text), "token": token})
        assert pasted.status_code == 401 and "works only by opening its link" in pasted.text, pasted.text
    as_bearer = web.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "authorization": f"Bearer {token}",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
        },
    )
    assert as_bearer.status_code == 401 and "works only by opening its link" in as_bearer.json()["error_description"]
    assert web.get("/board/").status_code == 401
    assert web.get(f"/board/link?token={token}").status_code == 303  # and at its link, once
    assert web.get("/board/").status_code == 200


def test_a_link_takes_no_other_token_however_short_lived(web: TestClient) -> None:
    issued = int(time.time())
    ordinary = jwt.encode({"sub": ALICE, "iat": issued, "exp": issued + 30, "jti": "z"}, SECRET, algorithm="HS256")
    answer = web.get(f"/board/link?token={ordinary}")
    assert answer.status_code == 401 and "not a sign-in link&#39;s token" in answer.text, answer.text
    assert web.get("/board/").status_code == 401


def test_signing_out_ends_the_session_for_every_copy_of_the_cookie(web: TestClient) -> None:
    csrf = sign_in(web)
    stolen = web.cookies.get("bee-board")
    refused = post(web, "/board/signout", {"csrf": "wrong"})
    assert refused.status_code == 403 and web.get("/board/").status_code == 200
    answer = post(web, "/board/signout", {"csrf": csrf})
    assert answer.status_code == 303 and answer.headers["location"] == "/board/signin?signed_out=1"
    assert "Max-Age=0" in cookie_header(answer, "bee-board")
    assert stolen is not None
    web.cookies.set("bee-board", stolen, domain="127.0.0.1", path="/")

    again = web.get("/board/")
    assert again.status_code == 401 and "ended or is not valid" in again.text


def test_a_forged_session_cookie_gets_the_sign_in_page(web: TestClient) -> None:
    web.cookies.set("bee-board", "forged-session-id", domain="127.0.0.1", path="/")
    answer = web.get("/board/")
    assert answer.status_code == 401 and "ended or is not valid" in answer.text
    assert "Max-Age=0" in cookie_header(answer, "bee-board")  # the dead cookie is dropped


def test_a_session_cookie_never_authenticates_the_mcp_endpoint(web: TestClient) -> None:
    sign_in(web)
    assert web.cookies.get("bee-board")
    answer = web.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"},
    )
    assert answer.status_code == 401 and answer.json()["error"] == "unauthorized"


def test_the_board_answers_only_for_its_own_host_names(web: TestClient) -> None:
    answer = web.get("/board/signin", headers={"host": "rebound.example:8765"})
    assert answer.status_code == 421
    assert answer.headers["x-frame-options"] == "DENY"
    assert web.get("/board/signin", headers={"host": "localhost:8765"}).status_code == 200


def test_the_root_leads_to_the_board(web: TestClient) -> None:
    answer = web.get("/")
    assert answer.status_code == 303 and answer.headers["location"] == "/board/"
    assert web.get("/board").status_code in (307, 308)  # and the board to its own root
