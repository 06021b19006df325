"""Signing in the way a person does: the system Chromium (driven by Playwright) through the tracker's pages — or an
OpenID Provider's — while an official MCP client (the Python SDK's or the TypeScript SDK's) waits for the code.

The browser part is one function, :func:`BrowserFlow.__call__`: open the authorization URL the client made, sign in
when asked (a one-time link from the tracker's own key, as `bee tracker open` prints, or the provider's login
form), answer the consent page, and return the URL the browser was sent back to: the client's redirect URI, where
a listener of the test's own answers as a native client's does (Playwright cannot intercept a redirect's target).
"""

from __future__ import annotations

import http.server
import json
import os
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio

from tests.harness.node import JS_DIR, require_installed
from tests.harness.postgres import free_port
from tests.harness.tracker import TrackerProcess

#: What a sign-in flow does in the browser: given the authorization URL and the redirect URI, the URL it came back to.
Flow = Callable[[str, str], Awaitable[str]]


def link_for(tracker: TrackerProcess, actor: str, *, read_only: bool = False) -> str:
    """A one-time sign-in link for ``actor``, exactly as `bee tracker open` prints it (its own function, its key)."""
    from urllib.parse import urlencode

    from bee_tracker.board.links import LINK_MAX_SECONDS, mint_link_token
    from bee_tracker.home import read_key

    token = mint_link_token(
        read_key(tracker.home), actor, lifetime=LINK_MAX_SECONDS, scope="tracker:read" if read_only else None
    )
    return f"http://127.0.0.1:{tracker.port}/board/link?{urlencode({'token': token})}"


@asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """The system Chromium, headless, as the board's browser tests launch it."""
    from playwright.async_api import async_playwright

    from bee_design.capture.settings import FLAGS, browser_executable, running_as_root

    flags = [*FLAGS, *(["--no-sandbox"] if running_as_root() else [])]
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=browser_executable(), args=flags, headless=True)
        try:
            yield browser
        finally:
            await browser.close()


@dataclass
class BrowserFlow:
    """A person in a browser context of their own: signs in with ``sign_in`` when a page asks, then answers the
    consent page with ``decision``. ``seen`` keeps every page's URL, in order."""

    browser: Any
    sign_in: Callable[[Any], Awaitable[None]]
    decision: str = "allow"
    seen: list[str] = field(default_factory=list)
    context: Any = None
    #: Whether to listen at the redirect URI (False: the client listens there itself, as the Inspector does).
    listen: bool = True

    async def __call__(self, authorize_url: str, redirect_uri: str) -> str:
        if self.context is None:
            self.context = await self.browser.new_context(locale="en-US", timezone_id="UTC")
            self.context.set_default_timeout(30_000)
        page = await self.context.new_page()
        page.on("framenavigated", lambda frame: self.seen.append(frame.url) if frame == page.main_frame else None)
        with callback_listener(redirect_uri) if self.listen else _arrivals(page, redirect_uri) as came_back:
            await page.goto(authorize_url, wait_until="load")
            with anyio.fail_after(60):
                for _ in range(6):
                    if came_back:
                        break
                    if await page.locator("form[action$='/consent'] button[value=allow]").count():
                        async with page.expect_navigation():
                            await page.click(f"button[value={self.decision}]")
                    else:
                        await self.sign_in(page)
            if not came_back:
                raise AssertionError(
                    f"the sign-in never came back; last page {page.url}: {(await page.content())[:3000]}"
                )
        await page.close()
        return came_back[0]


@contextmanager
def _arrivals(page: Any, redirect_uri: str) -> Iterator[list[str]]:
    """The URLs at ``redirect_uri`` the page navigated to (the client's own listener answered them)."""
    start = redirect_uri.split("?", 1)[0]
    came_back: list[str] = []
    page.on("framenavigated", lambda frame: came_back.append(frame.url) if frame.url.startswith(start) else None)
    yield came_back


@contextmanager
def callback_listener(redirect_uri: str) -> Iterator[list[str]]:
    """A listener at ``redirect_uri``'s port, as a native client runs one: the URLs it was sent to, as they come."""
    parts = urlsplit(redirect_uri)
    came_back: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            came_back.append(f"{parts.scheme}://{parts.netloc}{self.path}")
            body = b"Signed in: you can close this page."
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer((parts.hostname or "127.0.0.1", parts.port or 80), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield came_back
    finally:
        server.shutdown()
        server.server_close()


def board_link_sign_in(
    tracker: TrackerProcess, actor: str, *, read_only: bool = False
) -> Callable[[Any], Awaitable[None]]:
    """Sign in on the tracker's sign-in page by opening a one-time link in the same browser (it returns there)."""

    async def sign_in(page: Any) -> None:
        await page.goto(link_for(tracker, actor, read_only=read_only), wait_until="load")

    return sign_in


def idp_login(login: str) -> Callable[[Any], Awaitable[None]]:
    """Sign in on oidc-provider's development pages: any login name and password, then its consent."""

    async def sign_in(page: Any) -> None:
        if await page.locator("input[name=login]").count():
            await page.fill("input[name=login]", login)
            await page.fill("input[name=password]", "any password")
            async with page.expect_navigation():
                await page.click("button[type=submit]")
            return
        if await page.locator("input[name=prompt][value=consent]").count():
            async with page.expect_navigation():
                await page.click("button[type=submit]")
            return
        if await page.locator("text=Sign in with").count():  # the board's sign-in page, offering the provider
            async with page.expect_navigation():
                await page.click("text=Sign in with")
            return
        raise AssertionError(f"no way to sign in on {page.url}: {(await page.content())[:2000]}")

    return sign_in


def code_of(back: str) -> dict[str, str]:
    """The parameters of the URL the browser came back to (code, state, iss, or error)."""
    return {key: values[0] for key, values in parse_qs(urlsplit(back).query).items()}


# -- the official Python SDK client ------------------------------------------------------------------------------


class MemoryStorage:
    """The SDK's ``TokenStorage`` in memory, as a client keeps it for one user."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


@asynccontextmanager
async def python_client(
    url: str,
    flow: Flow,
    *,
    storage: MemoryStorage | None = None,
    client_metadata_url: str | None = None,
    name: str = "bee tests (Python SDK)",
    era: str = "legacy",
    redirect_uri: str | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """The official Python SDK's MCP client with its ``OAuthClientProvider``, signing in through ``flow``; yields
    the connected client and the provider."""
    import httpx2
    from mcp import Client
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
    from pydantic import AnyUrl

    redirect_uri = redirect_uri or f"http://127.0.0.1:{free_port()}/callback"
    came_back: list[str] = []

    async def redirect_handler(authorize_url: str) -> None:
        came_back.append(await flow(authorize_url, redirect_uri))

    async def callback_handler() -> AuthorizationCodeResult:
        params = code_of(came_back.pop())
        if "error" in params:
            raise RuntimeError(f"the server refused the sign-in: {params['error']}: {params.get('error_description')}")
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    metadata = OAuthClientMetadata(
        client_name=name,
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    provider = OAuthClientProvider(
        url,
        metadata,
        storage or MemoryStorage(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=client_metadata_url,
    )
    async with (
        httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(30.0, read=300.0)) as http,
        Client(streamable_http_client(url, http_client=http), mode=era, cache=None) as client,
    ):
        yield client, provider


# -- the official TypeScript SDK client (tests/e2e/js/oauth.mjs) -------------------------------------------------


async def typescript_client(
    url: str, flow: Flow, calls: list[tuple[str, dict[str, Any]]], *, client_metadata_url: str | None = None
) -> dict[str, Any]:
    """Sign in with the TypeScript SDK client's OAuth support through ``flow``, make ``calls``; what it reported
    (``{"calls": [...], "tokens": ..., "registered": ...}``)."""
    tools = require_installed()
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    spec: dict[str, Any] = {
        "url": url,
        "redirectUrl": redirect_uri,
        "clientName": "bee tests (TypeScript SDK)",
        "calls": [{"name": name, "arguments": arguments} for name, arguments in calls],
    }
    if client_metadata_url:
        spec["clientMetadataUrl"] = client_metadata_url
    env = {
        **os.environ,
        **({"NODE_EXTRA_CA_CERTS": os.environ["SSL_CERT_FILE"]} if "SSL_CERT_FILE" in os.environ else {}),
    }
    async with await anyio.open_process(
        [str(tools.node), str(JS_DIR / "oauth.mjs"), json.dumps(spec)], cwd=JS_DIR, env=env
    ) as process:
        assert process.stdout is not None and process.stdin is not None
        buffered = b""
        with anyio.fail_after(180):
            async for chunk in process.stdout:
                buffered += chunk
                while b"\n" in buffered:
                    line, buffered = buffered.split(b"\n", 1)
                    said = json.loads(line)
                    if "authorize" in said:
                        back = await flow(said["authorize"], redirect_uri)
                        await process.stdin.send((json.dumps({"callback": back}) + "\n").encode())
                    elif "done" in said:
                        done: dict[str, Any] = said["done"]
                        return done
                    else:
                        raise AssertionError(f"the TypeScript client failed: {said}")
    raise AssertionError("the TypeScript client ended without an answer")


def structured(result: Any) -> dict[str, Any]:
    """The ``data`` of a successful call, from either client's result."""
    if isinstance(result, dict):
        assert not result.get("isError"), result
        data: dict[str, Any] = result["structuredContent"]["data"]
        return data
    assert not result.is_error, result
    found: dict[str, Any] = result.structured_content["data"]
    return found


# -- the flow by hand, over HTTP (for what no polite client does) ------------------------------------------------


def pkce() -> tuple[str, str]:
    """A PKCE verifier and its S256 challenge."""
    import base64
    import hashlib
    import secrets

    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


#: The HTTP clients of the people and clients below, closed by :func:`close_all` (a test module's fixture calls it).
_OPEN: list[Any] = []


def close_all() -> None:
    """Close every HTTP client a :class:`Person` or :class:`OAuthClient` opened."""
    while _OPEN:
        _OPEN.pop().close()


def path_of(url: str) -> str:
    """A URL's path and query, to ask for it on another connection."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


class Person:
    """Someone signed in to the board in a browser that is only an HTTP client with cookies (``host`` is the Host
    header it sends: the tracker's public address when it reaches a replica directly)."""

    def __init__(
        self, tracker: TrackerProcess, actor: str, *, read_only: bool = False, host: str | None = None
    ) -> None:
        import httpx

        self.host = host or f"127.0.0.1:{tracker.port}"
        self.http = httpx.Client(
            base_url=f"http://127.0.0.1:{tracker.port}", headers={"Host": self.host}, timeout=30, trust_env=False
        )
        _OPEN.append(self.http)
        signed_in = self.http.get(path_of(link_for(tracker, actor, read_only=read_only)))
        assert signed_in.status_code == 303, signed_in.text

    def consent(self, authorize: Any, decision: str = "allow") -> Any:
        """Answer the consent page ``authorize`` (the answer of /authorize) led to; the redirect to the client."""
        import re

        assert authorize.status_code == 302, authorize.text
        page = self.http.get(path_of(authorize.headers["location"]))
        assert page.status_code == 200, page.text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
        request = re.search(r'name="request" value="([^"]+)"', page.text)
        assert csrf and request, page.text
        return self.http.post(
            "/board/consent",
            data={"csrf": csrf.group(1), "request": request.group(1), "decision": decision},
            headers={"Origin": f"http://{self.host}"},
        )


class OAuthClient:
    """A client of the built-in server, speaking its endpoints by hand."""

    def __init__(
        self, base: str, *, host: str | None = None, redirect_uris: list[str] | None = None, **extra: Any
    ) -> None:
        import httpx

        self.base = base
        self.http = httpx.Client(base_url=base, timeout=30, trust_env=False, headers={"Host": host} if host else {})
        _OPEN.append(self.http)
        self.redirect_uri = (redirect_uris or [f"http://127.0.0.1:{free_port()}/callback"])[0]
        body = {"redirect_uris": redirect_uris or [self.redirect_uri], "token_endpoint_auth_method": "none", **extra}
        registered = self.http.post("/register", json=body)
        assert registered.status_code == 201, registered.text
        self.client_id: str = registered.json()["client_id"]

    def authorize(self, challenge: str, **params: str | None) -> Any:
        query = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "s-1",
            "scope": "tracker:read tracker:write",
            **params,
        }
        return self.http.get("/authorize", params={k: v for k, v in query.items() if v is not None})

    def code(self, person: Person, **params: str) -> tuple[str, str]:
        """A code and its verifier, consented by ``person``."""
        verifier, challenge = pkce()
        back = person.consent(self.authorize(challenge, **params))
        assert back.status_code == 303, back.text
        return code_of(back.headers["location"])["code"], verifier

    def token(self, **form: str) -> Any:
        return self.http.post("/token", data={"client_id": self.client_id, **form})

    def exchange(self, code: str, verifier: str, **form: str) -> Any:
        return self.token(
            grant_type="authorization_code", code=code, code_verifier=verifier, redirect_uri=self.redirect_uri, **form
        )

    def refresh(self, refresh_token: str) -> Any:
        return self.token(grant_type="refresh_token", refresh_token=refresh_token)

    def tokens(self, person: Person) -> dict[str, Any]:
        code, verifier = self.code(person)
        answer = self.exchange(code, verifier)
        assert answer.status_code == 200, answer.text
        tokens: dict[str, Any] = answer.json()
        return tokens


LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def call(tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """A 2025-11-25 tools/call request body."""
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments or {}}}


class RoundRobin:
    """One address in front of several replicas, as a load balancer is: each new connection goes to the next
    upstream port in turn, its bytes passed through unchanged (the Host header names this address)."""

    def __init__(self, upstreams: list[int]) -> None:
        import socket

        self.upstreams = upstreams
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(128)
        self.port: int = self.listener.getsockname()[1]
        self.served = [0] * len(upstreams)
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        turn = 0
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            which = turn % len(self.upstreams)
            self.served[which] += 1
            turn += 1
            threading.Thread(target=self._connect, args=(client, self.upstreams[which]), daemon=True).start()

    def _connect(self, client: Any, port: int) -> None:
        import socket

        with client, socket.create_connection(("127.0.0.1", port)) as upstream:
            back = threading.Thread(target=self._pump, args=(upstream, client), daemon=True)
            back.start()
            self._pump(client, upstream)
            back.join(timeout=60)

    @staticmethod
    def _pump(source: Any, target: Any) -> None:
        import socket

        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        with suppress(OSError):
            target.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self._closed = True
        self.listener.close()


class OpenIdProvider:
    """The npm ``oidc-provider`` (tests/e2e/js/idp.mjs) on 127.0.0.1, set up for a tracker: it issues JWT access
    tokens for ``resource`` and has the board's client (``bee-board``, secret :attr:`board_secret`)."""

    board_secret = "board-secret-" + "x" * 24

    def __init__(self, tracker: TrackerProcess) -> None:
        import subprocess

        tools = require_installed()
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        spec = {
            "port": self.port,
            "resource": tracker.url,
            "boardRedirect": f"http://127.0.0.1:{tracker.port}/board/signin/idp/back",
            "boardSecret": self.board_secret,
        }
        self.log = tracker.home.parent / f"idp-{self.port}.log"
        with self.log.open("wb") as sink:
            self.process = subprocess.Popen(
                [str(tools.node), str(JS_DIR / "idp.mjs"), json.dumps(spec)], cwd=JS_DIR, stdout=sink, stderr=sink
            )
        import time

        import httpx

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.issuer}/.well-known/openid-configuration", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError(f"the OpenID Provider did not start:\n{self.log.read_text()}")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


# -- the MCP Inspector CLI ------------------------------------------------------------------------------------------


@dataclass
class InspectorOAuth:
    """One `mcp-inspector --cli` run that signed in: its exit status, the result it printed, what it said."""

    returncode: int
    result: Any
    stderr: str


async def inspector_oauth(url: str, flow: BrowserFlow, *method: str, home: Path) -> InspectorOAuth:
    """The pinned Inspector's CLI against ``url``, as its documentation has it run without a terminal: with
    ``MCP_AUTO_OPEN_ENABLED=true`` it prints "Please navigate to: URL", tries to open a browser (here ``BROWSER`` is
    ``true``, which opens nothing) and listens at ``--callback-url`` itself; ``flow`` takes the person through."""
    from tests.harness.node import INSPECTOR_BIN

    tools = require_installed()
    callback = f"http://127.0.0.1:{free_port()}/oauth/callback"
    argv = [str(tools.node), str(INSPECTOR_BIN), "--cli", "--format", "json", "--connect-timeout", "60000"]
    argv += ["--transport", "http", "--server-url", url, "--callback-url", callback, *method]
    env = {
        **{k: v for k, v in os.environ.items() if k != "DISPLAY"},
        "HOME": str(home),
        "MCP_AUTO_OPEN_ENABLED": "true",
        "BROWSER": "true",
    }
    flow.listen = False
    stderr = b""
    stdout = b""
    async with await anyio.open_process(argv, env=env, cwd=JS_DIR) as process:
        assert process.stderr is not None and process.stdout is not None

        async def read_stdout() -> None:
            nonlocal stdout
            async for chunk in process.stdout:  # type: ignore[union-attr]
                stdout += chunk

        with anyio.fail_after(180):
            async with anyio.create_task_group() as group:
                group.start_soon(read_stdout)
                navigated = False
                async for chunk in process.stderr:
                    stderr += chunk
                    found = re.search(rb"Please navigate to: (\S+)", stderr)
                    if found and not navigated:
                        navigated = True
                        await flow(found.group(1).decode(), callback)
            await process.wait()
    result = None
    for line in reversed(stdout.decode().splitlines()):
        with suppress(ValueError):
            parsed = json.loads(line)
            if isinstance(parsed, dict) and "result" in parsed:
                result = parsed["result"]
                break
    return InspectorOAuth(process.returncode or 0, result, stderr.decode())
