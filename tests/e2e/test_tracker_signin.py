"""Signing in the way MCP clients expect, against a real `bee tracker serve --sign-in builtin` on SQLite: the
official Python SDK client's OAuth provider and the TypeScript SDK client each discover the tracker's metadata,
register, and sign a person in through the board's pages in the system Chromium (a one-time link, then the consent
page), then call ready, claim and complete as that person. Refresh rotation, revocation with `bee tracker tokens`,
a denied consent and a read-only grant's step-up are provoked here too; hostile cases are in
test_tracker_signin_hostile.py, PostgreSQL with two replicas in test_tracker_signin_replicas.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import NEEDS_CHROMIUM
from tests.harness.node import missing_reason
from tests.harness.signin import (
    BrowserFlow,
    OAuthClient,
    board_link_sign_in,
    callback_listener,
    chromium,
    close_all,
    inspector_oauth,
    link_for,
    pkce,
    python_client,
    structured,
    typescript_client,
)
from tests.harness.tracker import TrackerProcess

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    NEEDS_CHROMIUM,
]

ANN, BOB = "ann@example.com", "bob@example.com"
BEE = str(Path(sys.executable).parent / "bee")


@pytest.fixture(scope="module")
def tracker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TrackerProcess]:
    server = TrackerProcess(tmp_path_factory.mktemp("signin") / "home", None, "--sign-in", "builtin")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Any]:
    async with chromium() as launched:
        yield launched


def tokens_command(tracker: TrackerProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BEE, "tracker", "tokens", *args, "--home", str(tracker.home)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_the_python_sdk_client_signs_in_through_the_board_and_works_as_that_person(
    tracker: TrackerProcess, browser: Any
) -> None:
    flow = BrowserFlow(browser, board_link_sign_in(tracker, ANN))
    async with python_client(tracker.url, flow) as (client, provider):
        created = structured(await client.call_tool("create", {"title": "Signed in with OAuth", "priority": 1}))
        ready = structured(await client.call_tool("ready", {}))
        assert created["id"] in [issue["id"] for issue in ready["issues"]]
        claimed = structured(await client.call_tool("claim", {"id": created["id"]}))
        assert claimed["assignee"] == ANN  # the person who consented, not the client
        done = structured(await client.call_tool("complete", {"id": created["id"], "summary": "done"}))
        assert done["status"] == "closed"

        # The pages the browser showed: the consent page's address signed out (the sign-in page, which remembers
        # it), the consent page once the link had signed Ann in, then the client's own listener.
        assert [httpx.URL(url).path for url in flow.seen] == ["/board/consent", "/board/consent", "/callback"]

        # The client refreshes when its access token runs out: a new pair comes back (rotation).
        first = provider.context.current_tokens
        provider.context.token_expiry_time = 1.0  # the client's own clock says the token expired
        structured(await client.call_tool("get", {"id": created["id"]}))
        second = provider.context.current_tokens
        assert second.access_token != first.access_token and second.refresh_token != first.refresh_token
        assert second.scope == "tracker:read tracker:write"

    listed = tokens_command(tracker, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    [grant] = [g for g in json.loads(listed.stdout) if g["actor"] == ANN]
    assert grant["client_name"] == "bee tests (Python SDK)" and grant["scopes"] == ["tracker:read", "tracker:write"]
    assert grant["refreshed_at"] is not None and grant["revoked_at"] is None


async def test_the_typescript_sdk_client_signs_in_through_the_board_and_works(
    tracker: TrackerProcess, browser: Any
) -> None:
    if reason := missing_reason():
        pytest.skip(reason)
    flow = BrowserFlow(browser, board_link_sign_in(tracker, BOB))
    created = await typescript_client(
        tracker.url, flow, [("create", {"title": "From the TypeScript SDK", "priority": 2})]
    )
    issue = structured(created["calls"][0]["result"])
    answered = await typescript_client(
        tracker.url,
        flow,
        [("ready", {}), ("claim", {"id": issue["id"]}), ("complete", {"id": issue["id"], "summary": "done"})],
    )
    ready, claimed, completed = (structured(call["result"]) for call in answered["calls"])
    assert issue["id"] in [found["id"] for found in ready["issues"]]
    assert claimed["assignee"] == BOB and completed["status"] == "closed"
    assert answered["tokens"]["scope"] == "tracker:read tracker:write" and answered["tokens"]["refresh_token"]


async def test_revoking_a_persons_grants_ends_their_refresh_tokens_at_once(
    tracker: TrackerProcess, browser: Any
) -> None:
    person = "revoked@example.com"
    flow = BrowserFlow(browser, board_link_sign_in(tracker, person))
    async with python_client(tracker.url, flow) as (client, provider):
        structured(await client.call_tool("ready", {}))
        tokens = provider.context.current_tokens
    revoked = tokens_command(tracker, "revoke", "--actor", person)
    assert revoked.returncode == 0 and "revoked 1 grant" in revoked.stdout, revoked
    refreshed = httpx.post(
        f"http://127.0.0.1:{tracker.port}/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": tokens.refresh_token,
            "client_id": provider.context.client_info.client_id,
        },
        timeout=30,
    )
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant", refreshed.text
    assert "revoked" in refreshed.json()["error_description"]
    listed = json.loads(tokens_command(tracker, "list", "--json", "--revoked").stdout)
    assert [g["revoked_reason"] for g in listed if g["actor"] == person] == ["revoked by the operator"]


async def test_a_denied_consent_reaches_the_client_as_access_denied(tracker: TrackerProcess, browser: Any) -> None:
    flow = BrowserFlow(browser, board_link_sign_in(tracker, ANN), decision="deny")
    with pytest.raises(BaseException) as refused:  # noqa: PT011 -- the SDK's flow fails with whatever it wraps the reason in
        async with python_client(tracker.url, flow) as (client, _):
            await client.call_tool("ready", {})
    assert "access_denied" in "".join(str(e) for e in _chain(refused.value))


def _chain(error: BaseException) -> Iterator[BaseException]:
    """An exception with everything inside it (causes and exception groups)."""
    yield error
    for inner in getattr(error, "exceptions", ()):
        yield from _chain(inner)
    if error.__cause__ is not None:
        yield from _chain(error.__cause__)


async def test_the_inspector_cli_signs_in_as_its_documentation_says_and_calls_a_tool(
    tracker: TrackerProcess, browser: Any, tmp_path: Path
) -> None:
    if reason := missing_reason():
        pytest.skip(reason)
    flow = BrowserFlow(browser, board_link_sign_in(tracker, ANN))
    run = await inspector_oauth(tracker.url, flow, "--method", "tools/call", "--tool-name", "ready", home=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "Please navigate to: http://127.0.0.1:" in run.stderr and "Authorization complete." in run.stderr
    assert json.loads(run.result["content"][0]["text"])["data"]["issues"] is not None
    # Without MCP_AUTO_OPEN_ENABLED and without a terminal it stops with exit 3, as documented.
    from tests.harness.node import inspector

    stopped = inspector([], "--transport", "http", "--server-url", tracker.url, "--method", "tools/list")
    assert stopped.returncode == 3 and "MCP_AUTO_OPEN_ENABLED=true" in stopped.stderr


def _evil_page(origin_host: str, form: str) -> tuple[Any, str]:
    """A page on another origin (its own listener), holding ``form``: its server and its URL."""
    import http.server
    import threading

    from tests.harness.postgres import free_port

    body = f"<!doctype html><title>evil</title>{form}".encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    port = free_port()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{origin_host}:{port}/"


@pytest.mark.parametrize("evil_host", ["localhost", "127.0.0.1"])  # another site, and the same site on another port
async def test_in_chromium_the_consent_page_cannot_be_framed_or_answered_by_another_page(
    tracker: TrackerProcess, browser: Any, evil_host: str
) -> None:
    attacker = OAuthClient(f"http://127.0.0.1:{tracker.port}")
    _, challenge = pkce()
    consent = attacker.authorize(challenge).headers["location"]
    request_id = consent.split("request=", 1)[1]
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(link_for(tracker, ANN), wait_until="load")  # the victim is signed in to the board
    frame = f'<iframe id="f" src="{consent}" width="600" height="400"></iframe>'
    post = (
        f'<form id="x" method="post" action="http://127.0.0.1:{tracker.port}/board/consent">'
        f'<input name="request" value="{request_id}"><input name="decision" value="allow"></form>'
    )
    server, evil = _evil_page(evil_host, frame + post)
    try:
        with callback_listener(attacker.redirect_uri) as came_back:
            await page.goto(evil, wait_until="load")
            framed = page.frame_locator("#f")
            assert await framed.locator("button[value=allow]").count() == 0  # refused by the browser, not drawn
            async with page.expect_navigation():
                await page.evaluate("document.getElementById('x').submit()")
            assert page.url.startswith(f"http://127.0.0.1:{tracker.port}/board/consent")
            status_text = await page.locator("main").inner_text()
            assert "Nothing was" in status_text or "Sign in" in status_text, status_text
            assert came_back == []  # no code went anywhere
        # The person can still answer it on the page itself.
        await page.goto(consent, wait_until="load")
        assert await page.locator("button[value=allow]").count() == 1
    finally:
        server.shutdown()
        server.server_close()
        await context.close()
        close_all()
