"""The team's own identity provider: a real OpenID Provider (the npm `oidc-provider`, certified, started by these
tests) and `bee tracker serve --sign-in idp`. The official Python and TypeScript SDK clients discover it through the
tracker's metadata, register with it, sign a person in through its pages in the system Chromium, and call the tools
with its JWT access tokens; the tracker verifies them by its JWKS (issuer, audience, actor claim). People sign in to
the board there too. What it must refuse: a token whose actor claim holds a lone surrogate or is oversized, a
token of the provider for another audience, an answer naming another issuer, and a provider whose discovery
document names another issuer than the one configured.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import NEEDS_CHROMIUM
from tests.harness.node import missing_reason
from tests.harness.signin import (
    ACCEPT,
    LIST,
    BrowserFlow,
    OpenIdProvider,
    chromium,
    code_of,
    idp_login,
    pkce,
    python_client,
    structured,
    typescript_client,
)
from tests.harness.tracker import TrackerProcess

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason())),
    NEEDS_CHROMIUM,
]


class Team:
    """A tracker pointed at the team's OpenID Provider, and the provider."""

    def __init__(self, folder: Path) -> None:
        self.tracker = TrackerProcess(folder / "home", None)
        self.idp = OpenIdProvider(self.tracker)
        secret = folder / "board-secret"
        secret.write_text(self.idp.board_secret)
        self.tracker.extra = [
            *("--sign-in", "idp", "--oidc-issuer", self.idp.issuer),
            *("--oidc-client-id", "bee-board", "--oidc-client-secret-file", str(secret)),
        ]
        self.tracker.start()


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    made = Team(tmp_path_factory.mktemp("idp"))
    yield made
    made.tracker.stop()
    made.idp.stop()
    assert "Traceback" not in made.tracker.log.read_text()


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Any]:
    async with chromium() as launched:
        yield launched


async def test_the_python_sdk_client_signs_in_at_the_teams_provider(team: Team, browser: Any) -> None:
    flow = BrowserFlow(browser, idp_login("ann"))
    async with python_client(team.tracker.url, flow) as (client, provider):
        assert str(provider.context.oauth_metadata.issuer) == team.idp.issuer  # discovered through the tracker
        issue = structured(await client.call_tool("create", {"title": "Signed in at the IdP", "priority": 1}))
        assert issue["id"] in [i["id"] for i in structured(await client.call_tool("ready", {}))["issues"]]
        assert structured(await client.call_tool("claim", {"id": issue["id"]}))["assignee"] == "ann@example.com"
        assert structured(await client.call_tool("complete", {"id": issue["id"]}))["status"] == "closed"
    assert all(urlsplit(url).netloc == urlsplit(team.idp.issuer).netloc for url in flow.seen[:-1])


async def test_the_typescript_sdk_client_signs_in_at_the_teams_provider(team: Team, browser: Any) -> None:
    flow = BrowserFlow(browser, idp_login("bob"))
    created = await typescript_client(team.tracker.url, flow, [("create", {"title": "TS at the IdP", "priority": 2})])
    issue = structured(created["calls"][0]["result"])
    answered = await typescript_client(
        team.tracker.url, flow, [("ready", {}), ("claim", {"id": issue["id"]}), ("complete", {"id": issue["id"]})]
    )
    ready, claimed, completed = (structured(call["result"]) for call in answered["calls"])
    assert issue["id"] in [i["id"] for i in ready["issues"]]
    assert claimed["assignee"] == "bob@example.com" and completed["status"] == "closed"


async def test_people_sign_in_to_the_board_at_the_provider(team: Team, browser: Any) -> None:
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(f"http://127.0.0.1:{team.tracker.port}/board/", wait_until="load")
    sign_in = idp_login("carol")
    for _ in range(4):
        if urlsplit(page.url).path == "/board/" and "Signed in as" in await page.content():
            break
        await sign_in(page)
    assert "Signed in as carol@example.com" in " ".join((await page.locator("header").inner_text()).split())
    await context.close()


async def _provider_token(team: Team, browser: Any, login: str, **extra: str) -> dict[str, Any]:
    """Tokens from the provider for ``login``, through its pages, as a client registered there by hand."""
    redirect = "http://127.0.0.1:9400/callback"
    async with httpx.AsyncClient(base_url=team.idp.issuer, timeout=30) as http:
        registered = await http.post(
            "/reg",
            json={"redirect_uris": [redirect], "token_endpoint_auth_method": "none", "application_type": "native"},
        )
        client_id = registered.json()["client_id"]
        verifier, challenge = pkce()
        query = {
            "client_id": client_id,
            "response_type": "code",
            "redirect_uri": redirect,
            "scope": "openid email tracker:read tracker:write",
            "resource": team.tracker.url,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "s",
            "nonce": "n",
            **extra,
        }
        flow = BrowserFlow(browser, idp_login(login))
        back = code_of(await flow(f"{team.idp.issuer}/auth?{httpx.QueryParams(query)}", redirect))
        answer = await http.post(
            "/token",
            data={
                "grant_type": "authorization_code",
                "code": back["code"],
                "code_verifier": verifier,
                "redirect_uri": redirect,
                "client_id": client_id,
                "resource": team.tracker.url,
            },
        )
        assert answer.status_code == 200, answer.text
        tokens: dict[str, Any] = answer.json()
        return tokens


def _refusal(team: Team, token: str) -> str:
    answer = httpx.post(team.tracker.url, json=LIST, headers={**ACCEPT, "Authorization": f"Bearer {token}"}, timeout=30)
    assert answer.status_code == 401, answer.text
    assert (
        f'resource_metadata="http://127.0.0.1:{team.tracker.port}/.well-known/oauth-protected-resource/mcp"'
        in (answer.headers["www-authenticate"])
    )
    description: str = answer.json()["error_description"]
    return description


async def test_the_providers_tokens_with_a_hostile_actor_claim_or_audience_are_refused(
    team: Team, browser: Any
) -> None:
    good = await _provider_token(team, browser, "dave")
    listed = httpx.post(
        team.tracker.url, json=LIST, headers={**ACCEPT, "Authorization": f"Bearer {good['access_token']}"}, timeout=30
    )
    assert listed.status_code == 200, listed.text
    surrogate = await _provider_token(team, browser, "surrogate")
    assert "email claim (its actor) holds a character that is not printable" in _refusal(
        team, surrogate["access_token"]
    )
    oversized = await _provider_token(team, browser, "oversized")
    assert "email claim (its actor) is longer than 320 characters" in _refusal(team, oversized["access_token"])
    # The ID token is the provider's too, signed by the same keys, but for another audience (the client).
    assert "wrong audience" in _refusal(team, good["id_token"])
    assert "Traceback" not in team.tracker.log.read_text()


def test_an_answer_naming_another_issuer_signs_nobody_in_to_the_board(team: Team) -> None:
    with httpx.Client(base_url=f"http://127.0.0.1:{team.tracker.port}", timeout=30) as http:
        started = http.get("/board/signin/idp")
        assert started.status_code == 303
        state = code_of(started.headers["location"])["state"]
        wrong = http.get("/board/signin/idp/back", params={"state": state, "code": "c", "iss": "https://evil.example"})
        assert wrong.status_code == 401 and "another identity provider" in wrong.text
        assert "bee-board" not in http.cookies  # no session cookie
    with httpx.Client(base_url=f"http://127.0.0.1:{team.tracker.port}", timeout=30) as stranger:
        started = stranger.get("/board/signin/idp")
        state = code_of(started.headers["location"])["state"]
    # The state alone, in another browser (a login CSRF): refused.
    refused = httpx.get(
        f"http://127.0.0.1:{team.tracker.port}/board/signin/idp/back", params={"state": state, "code": "c"}, timeout=30
    )
    assert refused.status_code == 400 and "did not begin in this browser" in refused.text


def test_a_provider_whose_discovery_names_another_issuer_is_refused(team: Team, tmp_path: Path) -> None:
    # RFC 8414 §3.3 and OpenID Discovery §4.3 (SEP-2468): the issuer the document names must be the configured one.
    tracker = TrackerProcess(tmp_path / "home", None, "--sign-in", "idp", "--oidc-issuer", team.idp.issuer + "/")
    tracker.start()
    try:
        forged_iss = httpx.post(
            tracker.url,
            json=LIST,
            headers={**ACCEPT, "Authorization": f"Bearer {_with_issuer(team.idp.issuer + '/')}"},
            timeout=30,
        )
        assert forged_iss.status_code == 401
        assert "names the issuer" in forged_iss.json()["error_description"], forged_iss.text
    finally:
        tracker.stop()


def _with_issuer(issuer: str) -> str:
    import jwt

    return jwt.encode({"iss": issuer, "sub": "x", "exp": 9_999_999_999}, "k" * 32, algorithm="HS256")
