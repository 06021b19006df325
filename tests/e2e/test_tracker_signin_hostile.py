"""What no polite client does, against a real `bee tracker serve --sign-in builtin`: every redirect URI, PKCE and
state mistake; a code replayed; a token for another resource, expired, or of a revoked grant; a refresh token
replayed after rotation; a read-only grant writing; client metadata and metadata documents that are huge, slow,
on a private address, or hold what the consent page should not show; the consent page framed or answered from
another site; open redirects. Each is answered as the specifications say, the tracker keeps serving, and nothing
secret reaches its log.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest

from bee_tracker.store import open_store
from bee_tracker.store.grants import Grants
from tests.harness.documents import DocumentServer, document_server
from tests.harness.signin import (
    ACCEPT,
    LIST,
    OAuthClient,
    Person,
    call,
    close_all,
    code_of,
    path_of,
    pkce,
)
from tests.harness.tracker import TrackerProcess

pytestmark = pytest.mark.e2e

ANN = "ann@example.com"
#: Everything secret a test saw, checked against the log at the end of the module.
SEEN_SECRETS: list[str] = []


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    yield
    close_all()


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocumentServer]:
    with document_server(tmp_path_factory.mktemp("documents")) as served:
        yield served


def _tracker(folder: Path, documents: DocumentServer, *extra: str) -> TrackerProcess:
    server = TrackerProcess(folder / "home", None, "--sign-in", "builtin", *extra)
    server.env = {"SSL_CERT_FILE": str(documents.certificate)}
    server.start()
    return server


@pytest.fixture(scope="module")
def tracker(tmp_path_factory: pytest.TempPathFactory, documents: DocumentServer) -> Iterator[TrackerProcess]:
    server = _tracker(tmp_path_factory.mktemp("hostile"), documents)
    yield server
    server.stop()
    log = server.log.read_text()
    assert "Traceback" not in log
    leaked = [secret[:12] for secret in SEEN_SECRETS if secret in log]
    assert not leaked, f"secrets in the log: {leaked}"


@pytest.fixture(scope="module")
def trusting(tmp_path_factory: pytest.TempPathFactory, documents: DocumentServer) -> Iterator[TrackerProcess]:
    """A tracker whose operator lets it fetch metadata documents from 127.0.0.1."""
    server = _tracker(tmp_path_factory.mktemp("trusting"), documents, "--client-metadata-host", "127.0.0.1")
    yield server
    server.stop()


def base(tracker: TrackerProcess) -> str:
    return f"http://127.0.0.1:{tracker.port}"


def mcp(tracker: TrackerProcess, token: str, body: dict[str, Any] = LIST) -> httpx.Response:
    return httpx.post(tracker.url, json=body, headers={**ACCEPT, "Authorization": f"Bearer {token}"}, timeout=30)


def signed_in(tracker: TrackerProcess, client: OAuthClient, actor: str = ANN, **person: Any) -> dict[str, Any]:
    tokens = client.tokens(Person(tracker, actor, **person))
    SEEN_SECRETS.extend([tokens["access_token"], tokens["refresh_token"]])
    return tokens


# -- redirect URIs -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("http://evil.example/cb", "not loopback"),
        ("javascript:alert(1)", "javascript scheme"),
        ("data:text/html,hi", "data scheme"),
        ("file:///etc/passwd", "file scheme"),
        ("https://client.example/cb#fragment", "fragment"),
        ("https://user:pw@client.example/cb", "user name or password"),
        ("https://client.example/" + "x" * 2100, "longer than 2000"),
    ],
)
def test_a_redirect_uri_that_could_leak_a_code_is_refused_at_registration(
    tracker: TrackerProcess, uri: str, why: str
) -> None:
    answer = httpx.post(
        f"{base(tracker)}/register", json={"redirect_uris": [uri], "token_endpoint_auth_method": "none"}
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata"), answer.text
    too_many = [f"http://127.0.0.1:{port}/cb" for port in range(9000, 9011)]
    refused = httpx.post(f"{base(tracker)}/register", json={"redirect_uris": too_many})
    assert refused.status_code == 400 and "at most 10" in refused.json()["error_description"]


def test_redirect_uri_mistakes_at_authorize_and_token(tracker: TrackerProcess) -> None:
    first, second = "http://127.0.0.1:9101/callback", "https://client.example/callback"
    client = OAuthClient(base(tracker), redirect_uris=[first, second])
    _, challenge = pkce()
    # Unregistered: answered here, never sent anywhere (RFC 6749 §4.1.2.1: no redirect to an unverified URI).
    for unregistered in (
        "https://evil.example/callback",
        "http://127.0.0.1:9101/other",
        "https://client.example/callback/x",
    ):
        answer = client.authorize(challenge, redirect_uri=unregistered)
        assert answer.status_code == 400 and "location" not in answer.headers, answer.text
        assert "not registered" in answer.json()["error_description"]
    # Two registered and none given: which one is unknowable.
    answer = client.authorize(challenge, redirect_uri=None)
    assert answer.status_code == 400 and "location" not in answer.headers
    # A loopback URI on another port is the same native client's listener (RFC 8252 §7.3).
    moved = client.authorize(challenge, redirect_uri="http://127.0.0.1:9555/callback")
    assert moved.status_code == 302 and "/board/consent?request=" in moved.headers["location"]
    # At the token endpoint the redirect URI must be the one the code was given for.
    code, verifier = client.code(Person(tracker, ANN))
    changed = client.token(grant_type="authorization_code", code=code, code_verifier=verifier, redirect_uri=second)
    assert changed.status_code == 400 and changed.json()["error"] == "invalid_request", changed.text
    missing = client.token(grant_type="authorization_code", code=code, code_verifier=verifier)
    assert missing.status_code == 400 and "redirect_uri did not match" in missing.json()["error_description"]
    assert client.exchange(code, verifier).status_code == 200  # the right one still works: nothing was spent


# -- PKCE ----------------------------------------------------------------------------------------------------------


def test_pkce_mistakes(tracker: TrackerProcess) -> None:
    client = OAuthClient(base(tracker))
    _, challenge = pkce()
    for params, said in (
        ({"code_challenge": None}, "code_challenge"),  # none at all
        ({"code_challenge_method": "plain"}, "code_challenge_method"),  # only S256 is served
        ({"code_challenge": "short"}, "PKCE S256 challenge"),
        ({"code_challenge": "!" * 43}, "PKCE S256 challenge"),
    ):
        answer = client.authorize(challenge, **params)
        assert answer.status_code == 302, answer.text  # the client and its redirect URI are sound: it is told
        back = code_of(answer.headers["location"])
        assert back["error"] == "invalid_request" and said in back["error_description"], (params, back)
        assert back["state"] == "s-1"
    person = Person(tracker, ANN)
    code, verifier = client.code(person)
    wrong = client.exchange(code, pkce()[0])
    assert wrong.status_code == 400 and wrong.json() == {
        "error": "invalid_grant",
        "error_description": "incorrect code_verifier",
    }
    absent = client.token(grant_type="authorization_code", code=code, redirect_uri=client.redirect_uri)
    assert absent.status_code == 400 and absent.json()["error"] == "invalid_request"
    assert client.exchange(code, verifier).status_code == 200


# -- state -----------------------------------------------------------------------------------------------------------


def test_state_comes_back_exactly_on_allow_and_deny_and_an_oversized_one_is_refused(tracker: TrackerProcess) -> None:
    client = OAuthClient(base(tracker))
    person = Person(tracker, ANN)
    odd = "a b&c=d#e/f?g%h+i=é"
    for decision in ("allow", "deny"):
        _, challenge = pkce()
        back = person.consent(client.authorize(challenge, state=odd), decision=decision)
        params = code_of(back.headers["location"])
        assert params["state"] == odd and params["iss"] == base(tracker), params
        assert ("code" in params) == (decision == "allow") and params.get("error", "access_denied") == "access_denied"
    _, challenge = pkce()
    huge = client.authorize(challenge, state="s" * 4097)
    assert huge.status_code == 302
    assert code_of(huge.headers["location"])["error"] == "invalid_request"
    assert "state is longer than 4096" in code_of(huge.headers["location"])["error_description"]


# -- codes and refresh tokens ----------------------------------------------------------------------------------------


def test_a_replayed_code_is_refused_and_revokes_everything_it_gave(tracker: TrackerProcess) -> None:
    client = OAuthClient(base(tracker))
    code, verifier = client.code(Person(tracker, ANN))
    first = client.exchange(code, verifier)
    assert first.status_code == 200
    tokens = first.json()
    SEEN_SECRETS.extend([code, tokens["access_token"], tokens["refresh_token"]])
    again = client.exchange(code, verifier)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert "already used" in again.json()["error_description"]
    refreshed = client.refresh(tokens["refresh_token"])
    assert refreshed.status_code == 400 and "revoked" in refreshed.json()["error_description"]
    assert _grant_of(tracker, tokens["access_token"]).revoked_reason == "authorization code used twice"


def test_a_refresh_token_replayed_after_rotation_revokes_the_grant(tracker: TrackerProcess) -> None:
    client = OAuthClient(base(tracker))
    tokens = signed_in(tracker, client)
    rotated = client.refresh(tokens["refresh_token"])
    assert rotated.status_code == 200, rotated.text
    second = rotated.json()
    SEEN_SECRETS.extend([second["access_token"], second["refresh_token"]])
    assert (
        second["refresh_token"] != tokens["refresh_token"] and mcp(tracker, second["access_token"]).status_code == 200
    )
    replayed = client.refresh(tokens["refresh_token"])
    assert replayed.status_code == 400 and "already used" in replayed.json()["error_description"], replayed.text
    newest = client.refresh(second["refresh_token"])
    assert newest.status_code == 400 and "revoked" in newest.json()["error_description"]
    assert _grant_of(tracker, second["access_token"]).revoked_reason == "refresh token replayed"
    other = OAuthClient(base(tracker))
    stolen = other.refresh(second["refresh_token"])  # another client presenting it: it does not exist for them
    assert stolen.status_code == 400 and stolen.json()["error"] == "invalid_grant"


def _grant_of(tracker: TrackerProcess, access_token: str) -> Any:
    grant_id = jwt.decode(access_token, options={"verify_signature": False})["gid"]
    store = open_store(str(tracker.home / "tracker.db"))
    try:
        return Grants(store.db).grant(grant_id)
    finally:
        store.close()


# -- tokens at /mcp -----------------------------------------------------------------------------------------------


def _forged(tracker: TrackerProcess, **claims: Any) -> str:
    """A token signed with the tracker's own access-token key (read from its store), with these claims."""
    store = open_store(str(tracker.home / "tracker.db"))
    try:
        kid, secret = next(iter(Grants(store.db).keys().items()))
    finally:
        store.close()
    now = int(time.time())
    body: dict[str, Any] = {"iss": base(tracker), "aud": tracker.url, "sub": ANN, "scope": "tracker:read tracker:write"}
    body |= {"iat": now, "exp": now + 300, **claims}
    return jwt.encode(body, secret, algorithm="HS256", headers={"typ": "at+jwt", "kid": kid})


def _challenge(answer: httpx.Response) -> dict[str, str]:
    header = answer.headers["www-authenticate"]
    assert header.startswith("Bearer "), header
    return dict(re.findall(r'(\w+)="([^"]*)"', header))


def test_a_token_for_another_resource_expired_or_unsigned_is_refused_with_the_challenge(
    tracker: TrackerProcess,
) -> None:
    client = OAuthClient(base(tracker))
    _, challenge = pkce()
    other = client.authorize(challenge, resource="https://other.example/mcp")
    assert code_of(other.headers["location"])["error"] == "invalid_target"
    assert mcp(tracker, _forged(tracker)).status_code == 200  # the key is right: the forgeries below differ only in
    cases = {
        "another resource": (_forged(tracker, aud=f"{base(tracker)}/board"), "for another resource"),
        "another tracker": (_forged(tracker, aud="http://127.0.0.1:1/mcp"), "for another resource"),
        "expired": (_forged(tracker, iat=int(time.time()) - 900, exp=int(time.time()) - 600), "expired"),
        "unknown key": (
            jwt.encode({"iss": base(tracker), "sub": ANN}, "k" * 32, headers={"typ": "at+jwt", "kid": "x"}),
            "unknown key",
        ),
        "no actor": (_forged(tracker, sub="a\u202eb"), "not printable"),
    }
    for name, (token, said) in cases.items():
        answer = mcp(tracker, token)
        assert answer.status_code == 401, name
        params = _challenge(answer)
        assert params["error"] == "invalid_token" and said in params["error_description"], (name, params)
        assert params["resource_metadata"] == f"{base(tracker)}/.well-known/oauth-protected-resource/mcp"
        assert params["scope"] == "tracker:read tracker:write"
    # Today's pasted tokens keep working beside the sign-in (--pasted-tokens is the default).
    assert mcp(tracker, tracker.token(ANN)).status_code == 200
    # Without a token: the challenge names the metadata, which names this server, which names its endpoints.
    bare = httpx.post(tracker.url, json=LIST, headers=ACCEPT, timeout=30)
    assert bare.status_code == 401 and "error" not in _challenge(bare)
    metadata = httpx.get(_challenge(bare)["resource_metadata"], timeout=30).json()
    assert metadata["resource"] == tracker.url and metadata["authorization_servers"] == [base(tracker)]
    server = httpx.get(f"{base(tracker)}/.well-known/oauth-authorization-server", timeout=30).json()
    assert server["issuer"] == base(tracker) and server["authorization_response_iss_parameter_supported"] is True
    assert server["client_id_metadata_document_supported"] is True and server["code_challenge_methods_supported"] == [
        "S256"
    ]


def test_a_read_only_grant_reads_and_is_told_403_insufficient_scope_for_a_write(tracker: TrackerProcess) -> None:
    client = OAuthClient(base(tracker))
    tokens = signed_in(tracker, client, "reader@example.com", read_only=True)
    assert tokens["scope"] == "tracker:read"
    assert mcp(tracker, tokens["access_token"]).status_code == 200
    assert mcp(tracker, tokens["access_token"], call("ready")).status_code == 200
    write = mcp(tracker, tokens["access_token"], call("create", {"title": "not allowed", "priority": 2}))
    assert write.status_code == 403, write.text
    params = _challenge(write)
    assert params["error"] == "insufficient_scope" and params["scope"] == "tracker:read tracker:write"
    assert "tracker:write" in params["error_description"]
    batch = mcp(tracker, tokens["access_token"], [call("ready"), call("claim")])  # type: ignore[arg-type]
    assert batch.status_code == 403


# -- client metadata -------------------------------------------------------------------------------------------------


def test_client_metadata_the_consent_page_should_not_show_is_refused(tracker: TrackerProcess) -> None:
    register = f"{base(tracker)}/register"
    uris = ["http://127.0.0.1:9200/cb"]
    for name, said in (("a\u0000b", "not printable"), ("x" * 201, "longer than 200"), ("a\u202eb", "not printable")):
        answer = httpx.post(register, json={"redirect_uris": uris, "client_name": name})
        assert answer.status_code == 400 and said in answer.json()["error_description"], answer.text
    surrogate = b'{"redirect_uris": ["http://127.0.0.1:9200/cb"], "client_name": "a\\ud800b"}'
    answer = httpx.post(register, content=surrogate, headers={"Content-Type": "application/json"})
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_client_metadata"
    # A name made of markup is shown as text, never as markup.
    client = OAuthClient(base(tracker), client_name='<img src=x onerror="alert(1)">')
    person = Person(tracker, ANN)
    _, challenge = pkce()
    page = person.http.get(path_of(client.authorize(challenge).headers["location"]))
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in page.text and "<img src=x" not in page.text


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/huge.json", "larger than 16384 bytes"),
        ("/huge-unsized.json", "larger than 16384 bytes"),
        ("/slow.json", "took longer than 5 seconds"),
        ("/redirect.json", "answered HTTP 302"),
        ("/wrong-id.json", "names another client_id"),
        ("/secret.json", "has no secret"),
        ("/javascript.json", "javascript scheme"),
    ],
)
def test_a_hostile_metadata_document_is_refused_within_its_caps(
    trusting: TrackerProcess, documents: DocumentServer, path: str, said: str
) -> None:
    url = documents.url(path)
    documents.documents["/wrong-id.json"] = {
        "client_id": documents.url("/other.json"),
        "redirect_uris": ["http://127.0.0.1:9/c"],
    }
    documents.documents["/secret.json"] = {
        "client_id": documents.url("/secret.json"),
        "redirect_uris": ["http://127.0.0.1:9/c"],
        "token_endpoint_auth_method": "client_secret_basic",
    }
    documents.documents["/javascript.json"] = {
        "client_id": documents.url("/javascript.json"),
        "redirect_uris": ["javascript:alert(1)"],
    }
    answer = httpx.get(  # gives up after 30 s, long before the slow document's 60 s: waiting for it fails here
        f"{base(trusting)}/authorize",
        params={
            "client_id": url,
            "response_type": "code",
            "code_challenge": pkce()[1],
            "redirect_uri": "http://127.0.0.1:9/c",
        },
        timeout=30,
    )
    assert answer.status_code == 400 and "location" not in answer.headers, answer.text
    assert answer.json()["error"] == "invalid_client" and said in answer.json()["error_description"], answer.text
    assert httpx.get(f"http://127.0.0.1:{trusting.port}/health", timeout=30).status_code == 200


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_metadata_document_on_a_private_address_is_not_fetched(
    tracker: TrackerProcess, documents: DocumentServer, host: str
) -> None:
    path = f"/private-{host}.json"
    url = documents.url(path, host)
    documents.documents[path] = {"client_id": url, "redirect_uris": ["http://127.0.0.1:9/c"]}
    answer = httpx.get(
        f"{base(tracker)}/authorize",
        params={
            "client_id": url,
            "response_type": "code",
            "code_challenge": pkce()[1],
            "redirect_uri": "http://127.0.0.1:9/c",
        },
        timeout=30,
    )
    assert answer.status_code == 400 and "private or local address" in answer.json()["error_description"], answer.text
    assert path not in documents.requests  # refused before any request was made


def test_a_good_metadata_document_signs_a_client_in(trusting: TrackerProcess, documents: DocumentServer) -> None:
    url = documents.url("/client.json")
    redirect = "http://127.0.0.1:9300/callback"
    documents.documents["/client.json"] = {
        "client_id": url,
        "client_name": "A client by its document",
        "redirect_uris": [redirect],
    }
    verifier, challenge = pkce()
    person = Person(trusting, ANN)
    authorize = httpx.get(
        f"{base(trusting)}/authorize",
        params={
            "client_id": url,
            "response_type": "code",
            "code_challenge": challenge,
            "redirect_uri": redirect,
            "state": "s",
        },
        timeout=30,
    )
    back = code_of(person.consent(authorize).headers["location"])
    answer = httpx.post(
        f"{base(trusting)}/token",
        data={
            "grant_type": "authorization_code",
            "code": back["code"],
            "code_verifier": verifier,
            "client_id": url,
            "redirect_uri": redirect,
        },
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    assert mcp(trusting, answer.json()["access_token"]).status_code == 200


# -- the consent page ------------------------------------------------------------------------------------------------


def test_the_consent_page_forbids_framing_and_refuses_answers_from_elsewhere(tracker: TrackerProcess) -> None:
    client = OAuthClient(base(tracker))
    person = Person(tracker, ANN)
    _, challenge = pkce()
    authorize = client.authorize(challenge)
    page = person.http.get(path_of(authorize.headers["location"]))
    assert page.headers["x-frame-options"] == "DENY"
    policy = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy
    assert f"form-action 'self' {client.redirect_uri.rsplit('/', 1)[0]}" in policy  # only to the client's origin
    request_id = re.search(r'name="request" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    form = {"request": request_id, "decision": "allow"}
    for headers, data in (
        ({"Origin": f"http://127.0.0.1:{tracker.port}"}, form),  # no CSRF token
        ({"Origin": f"http://127.0.0.1:{tracker.port}"}, {**form, "csrf": "forged"}),
        ({"Origin": "https://evil.example"}, {**form, "csrf": csrf}),  # the right token from another site
    ):
        refused = person.http.post("/board/consent", data=data, headers=headers)
        assert refused.status_code == 403 and "location" not in refused.headers, refused.text
    stranger = httpx.post(
        f"{base(tracker)}/board/consent", data={**form, "csrf": csrf}, headers={"Origin": base(tracker)}
    )
    assert stranger.status_code == 401 and "location" not in stranger.headers  # no session: nothing granted
    # None of those answered it: the person still can.
    assert "code=" in person.consent(authorize).headers["location"]
    gone = person.http.post("/board/consent", data={**form, "csrf": csrf}, headers={"Origin": base(tracker)})
    assert gone.status_code == 400 and "already answered" in gone.text and "location" not in gone.headers


def test_no_open_redirects(tracker: TrackerProcess) -> None:
    person = Person(tracker, ANN)
    for bogus in ("", "x" * 200, "not-a-request"):
        page = person.http.get("/board/consent", params={"request": bogus})
        assert page.status_code == 400 and "location" not in page.headers
    for target in ("https://evil.example/", "//evil.example/board", "/\\evil.example", "javascript:alert(1)"):
        signin = httpx.get(f"{base(tracker)}/board/signin", params={"next": target}, timeout=30)
        assert f'value="{target}"' not in signin.text
        answer = person.http.get("/board/signin", params={"next": target})
        assert answer.status_code == 303 and answer.headers["location"] == "/board/", target
    unknown = httpx.get(
        f"{base(tracker)}/authorize",
        params={
            "client_id": "nobody",
            "response_type": "code",
            "code_challenge": pkce()[1],
            "redirect_uri": "https://evil.example/",
        },
        timeout=30,
    )
    assert unknown.status_code == 400 and "location" not in unknown.headers


def test_a_dns_rebinding_host_is_refused_on_every_sign_in_route(tracker: TrackerProcess) -> None:
    for path in (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/authorize",
        "/token",
        "/register",
    ):
        method = "POST" if path in ("/token", "/register") else "GET"
        answer = httpx.request(method, f"{base(tracker)}{path}", headers={"Host": "evil.example"}, timeout=30)
        assert answer.status_code == 421, path


def test_refusals_are_logged_without_a_secret(tracker: TrackerProcess) -> None:
    log = tracker.log.read_text()
    assert "an authorization code was used twice: grant" in log and "a refresh token was used twice: grant" in log
    assert "refused a token: token expired" in log
    assert SEEN_SECRETS and not [secret[:12] for secret in SEEN_SECRETS if secret in log]
