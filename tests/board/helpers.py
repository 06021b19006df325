"""The board in process: the tracker's real app (store, verifier, board) behind Starlette's test client."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from bee_tracker import calls
from bee_tracker.auth import Verifier, hmac_verifier, mint
from bee_tracker.config import TrackerConfig
from bee_tracker.host import build_app
from bee_tracker.store import SqlStore

SECRET = b"board-tests-" + b"k" * 32
ALICE, BOB = "alice@example.com", "bob@example.com"
ORIGIN = "http://127.0.0.1:8765"


def verifier(**options: Any) -> Verifier:
    return hmac_verifier(SECRET, **options)


def client(store: SqlStore, home: Path, *, base_url: str = ORIGIN, **options: Any) -> TestClient:
    """A test client on the tracker's whole app (so /mcp and /health are there too); use it as a context manager."""
    app = build_app(store, verifier(**options), TrackerConfig(home=home))
    return TestClient(app, base_url=base_url, follow_redirects=False)


def form_token(html: str) -> str:
    found = re.search(r'name="form_token" value="([^"]+)"', html)
    assert found, "the page has a sign-in form"
    return found.group(1)


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "the page has a write form"
    return found.group(1)


def sign_in(web: TestClient, actor: str = ALICE, *, token: str | None = None) -> str:
    """Sign ``actor`` in through the sign-in form; return the session's CSRF token."""
    page = web.get("/board/signin")
    answer = web.post(
        "/board/signin",
        data={"form_token": form_token(page.text), "token": token or mint(SECRET, actor), "next": "/board/"},
        headers={"origin": str(web.base_url).rstrip("/")},
    )
    assert answer.status_code == 303, answer.text
    return csrf_of(web.get("/board/").text)


def post(web: TestClient, path: str, data: dict[str, Any], **headers: str) -> Any:
    return web.post(path, data=data, headers={"origin": str(web.base_url).rstrip("/"), **headers})


def created(store: SqlStore, title: str = "a task", actor: str = ALICE, **args: Any) -> str:
    return str(calls.call(store, "create", actor, {"title": title, **args})["data"]["id"])


class Elements(HTMLParser):
    """Every start tag of a page with its attributes, and its text, as a browser's parser would read them."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def all_text(self) -> str:
        return "".join(self.text)
