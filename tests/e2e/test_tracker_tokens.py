"""JWT header fields are data: hostile tokens against a real `bee tracker serve`, answered 401 with a challenge that
quotes safely, never a 500, a dropped connection or a forged log line. And a token may not live forever."""

import base64
import hashlib
import hmac
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from tests.harness.tracker import TrackerProcess

pytestmark = pytest.mark.e2e

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
ACCEPT = {"Accept": "application/json, text/event-stream"}
#: RFC 6750 error_description: %x20-21 / %x23-5B / %x5D-7E; around it, the challenge's own quotes and separators.
CHALLENGE = re.compile(r'Bearer realm="bee-tracker", error="invalid_token", error_description="([ !#-\[\]-~]*)"')


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def forged(header: object, claims: object | None = None) -> str:
    """A token with exactly this header (and claims), and a signature nobody checks before the header."""
    body = claims if claims is not None else {"sub": "a", "exp": int(time.time()) + 600}
    return f"{b64(json.dumps(header).encode())}.{b64(json.dumps(body).encode())}.c2ln"


def raw_header(header: bytes) -> str:
    return f"{b64(header)}.{b64(b'{}')}.c2ln"


def secret_of(server: TrackerProcess) -> bytes:
    return bytes.fromhex((server.home / "signing-key").read_text().strip())


def post(server: TrackerProcess, token: str) -> httpx.Response:
    return httpx.post(server.url, json=LIST, headers={**ACCEPT, "Authorization": f"Bearer {token}"}, timeout=30)


def refused(response: httpx.Response) -> str:
    """The error_description of a 401 whose challenge has exactly realm, error and error_description, safely quoted."""
    assert response.status_code == 401, response.text
    match = CHALLENGE.fullmatch(response.headers["www-authenticate"])
    assert match, response.headers["www-authenticate"]
    assert response.json() == {"error": "invalid_token", "error_description": match.group(1)}
    return match.group(1)


def test_hostile_header_fields_are_refused_as_data(tracker_factory: Callable[..., TrackerProcess]) -> None:
    server = tracker_factory()
    crlf = "HS256\r\n2026-01-01 00:00:00,000 INFO bee.tracker: forged line"
    cases = {
        "crlf in alg": forged({"alg": crlf}),
        "quote in alg": forged({"alg": 'x", error="injected'}),
        "non-latin-1 alg": forged({"alg": "HS256☃"}),
        "alg not a string": forged({"alg": ["HS256"]}),
        "kid not a string": forged({"alg": "HS256", "kid": {"k": 1}}),
        "header an array": raw_header(b"[1]"),
        "header a string": raw_header(b'"HS256"'),
        "header not json": raw_header(b"{alg"),
        "deeply nested header": raw_header(b"[" * 2000 + b"]" * 2000),
    }
    with httpx.Client(timeout=30) as http:
        descriptions = {}
        for name, token in cases.items():
            response = http.post(server.url, json=LIST, headers={**ACCEPT, "Authorization": f"Bearer {token}"})
            descriptions[name] = refused(response)
        # The connection that carried every refusal is still usable: none was dropped.
        valid = http.post(server.url, json=LIST, headers={**ACCEPT, "Authorization": f"Bearer {server.token('a')}"})
        assert valid.status_code == 200
    assert "is not accepted here" in descriptions["crlf in alg"]
    assert "injected" in descriptions["quote in alg"] and '"' not in descriptions["quote in alg"]
    assert descriptions["alg not a string"] == "the token header's alg must be a string"
    assert descriptions["kid not a string"].startswith("malformed token")
    server.stop()
    log = server.log.read_text()
    # The CRLF in alg never starts a line of its own: the forged text appears, sanitized, inside the refusal line.
    assert not any(line.startswith("2026-01-01") for line in log.splitlines())
    # ...and only its first 32 characters, without the CR and LF.
    assert "refused a token: algorithm HS256??2026-01-01 00:00:00,000 I... is not accepted here" in log
    assert "forged line" not in log
    assert "Traceback" not in log


def test_time_claims_must_be_numbers(tracker_factory: Callable[..., TrackerProcess]) -> None:
    server = tracker_factory()
    secret, now = secret_of(server), int(time.time())

    def signed(**claims: object) -> str:
        return jwt.encode({"sub": "a", **claims}, secret, algorithm="HS256")

    assert (
        refused(post(server, signed(exp=str(now + 600))))
        == "the token's exp claim must be a number of seconds since the epoch"
    )
    assert "exp claim must be a number" in refused(post(server, signed(exp=True)))
    assert refused(post(server, signed())) == "token lacks the exp claim"
    assert refused(post(server, signed(exp=None))) == "token lacks the exp claim"
    assert "iat claim must be a number" in refused(post(server, signed(exp=now + 600, iat="yesterday")))
    # PyJWT reads JSON's Infinity as a float: still not a number of seconds.
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64(b'{"sub": "a", "exp": Infinity}')
    signature = b64(hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest())
    assert "exp claim must be a number" in refused(post(server, f"{header}.{payload}.{signature}"))
    assert post(server, signed(exp=now + 600.5)).status_code == 200  # a fraction is still a number


def test_token_lifetime_is_capped_and_configurable(tracker_factory: Callable[..., TrackerProcess]) -> None:
    server = tracker_factory()
    secret, now = secret_of(server), int(time.time())
    eight_days = 8 * 86400
    too_far = jwt.encode({"sub": "a", "exp": now + eight_days}, secret, algorithm="HS256")
    assert "more than 7 days from now" in refused(post(server, too_far))
    issued_long_ago = jwt.encode({"sub": "a", "iat": now - 2 * 86400, "exp": now + 6 * 86400}, secret, "HS256")
    assert "lives longer than 7 days" in refused(post(server, issued_long_ago))
    assert post(server, jwt.encode({"sub": "a", "exp": now + 6 * 86400}, secret, "HS256")).status_code == 200

    strict = tracker_factory(None, "--max-token-lifetime", "3600")
    default_ttl = strict.token("a@example.com")  # 8 hours
    assert "more than 3600 seconds from now" in refused(post(strict, default_ttl))
    assert post(strict, strict.token("a@example.com", "--ttl", "3000")).status_code == 200


def test_token_refuses_a_ttl_over_the_maximum(tmp_path: Path) -> None:
    bee = str(Path(sys.executable).parent / "bee")
    minted = subprocess.run(
        [bee, "tracker", "token", "--home", str(tmp_path), "--actor", "a", "--ttl", str(8 * 86400)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert minted.returncode != 0 and "604800" in minted.stderr and minted.stdout == ""


def test_a_jwks_key_of_another_family_is_refused_by_name(
    tracker_factory: Callable[..., TrackerProcess], tmp_path: Path
) -> None:
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    rsa_jwk = {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(rsa_key.public_key())), "kid": "rsa-1"}
    ec_jwk = {**json.loads(jwt.algorithms.ECAlgorithm.to_jwk(ec_key.public_key())), "kid": "ec-1"}
    keyset = tmp_path / "jwks.json"
    keyset.write_text(json.dumps({"keys": [rsa_jwk, ec_jwk]}))
    server = tracker_factory(None, "--jwks", str(keyset))
    claims = {"sub": "a", "email": "a@example.com", "exp": int(time.time()) + 600}

    # ES256 naming the RSA key's kid: the library would fail on the wrong key type; the tracker refuses by name.
    confused = jwt.encode(claims, ec_key, algorithm="ES256", headers={"kid": "rsa-1"})
    assert refused(post(server, confused)) == "the JWKS key for this token cannot verify ES256"
    hmac_token = jwt.encode(claims, b"k" * 32, algorithm="HS256", headers={"kid": "rsa-1"})
    assert "algorithm HS256 is not accepted here" in refused(post(server, hmac_token))
    assert (
        refused(post(server, forged({"alg": "RS256", "kid": "nope"}))) == "no key in the JWKS matches the token's kid"
    )
    assert post(server, jwt.encode(claims, ec_key, algorithm="ES256", headers={"kid": "ec-1"})).status_code == 200
    assert post(server, jwt.encode(claims, rsa_key, algorithm="RS256", headers={"kid": "rsa-1"})).status_code == 200
    # Without a kid, the key of the token's own family is used.
    assert post(server, jwt.encode(claims, ec_key, algorithm="ES256")).status_code == 200


# -- the actor claim -------------------------------------------------------------------------------------------

#: Actors a signed token may carry that no store, page or log should take: each with what the refusal says.
ODD_ACTORS: list[tuple[object, str]] = [
    ("ann\ud800@example.com", "is not printable text"),  # a lone surrogate: not even UTF-8
    ("ann\x00@example.com", "is not printable text"),
    ("ann@example.com\n2026-01-01 INFO bee.tracker: forged", "is not printable text"),
    ("ann\u2028@example.com", "is not printable text"),  # a line separator
    ("\u202eann@example.com", "is not printable text"),  # a right-to-left override
    ("a" * 321, "longer than 320 characters"),
    (12345, "must be a string"),
    (["ann@example.com"], "must be a string"),
]


def board_sign_in(server: TrackerProcess, token: str) -> httpx.Response:
    """The board's sign-in form, filled in and posted as a browser would, over real HTTP."""
    base = f"http://127.0.0.1:{server.port}"
    with httpx.Client(base_url=base, timeout=30) as browser:
        page = browser.get("/board/signin")
        [form_token] = re.findall(r'name="form_token" value="([^"]+)"', page.text)
        form = {"form_token": form_token, "token": token, "next": "/board/"}
        return browser.post("/board/signin", data=form, headers={"origin": base})


def create(server: TrackerProcess, token: str, title: str) -> httpx.Response:
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "create", "arguments": {"title": title}},
    }
    return httpx.post(server.url, json=call, headers={**ACCEPT, "Authorization": f"Bearer {token}"}, timeout=30)


def test_an_actor_that_is_not_printable_text_is_a_401_at_mcp_and_at_board_sign_in(
    tracker_factory: Callable[..., TrackerProcess], store_url: str
) -> None:
    server = tracker_factory(store_url)
    secret = secret_of(server)
    for actor, reason in ODD_ACTORS:
        token = jwt.encode({"sub": "agent-1", "email": actor, "exp": int(time.time()) + 600}, secret, "HS256")
        assert reason in refused(create(server, token, "never written")), actor
        assert "the token's email claim (its actor)" in refused(post(server, token))
        signed_in = board_sign_in(server, token)
        assert signed_in.status_code == 401 and reason in signed_in.text, signed_in.text
        assert "bee-board=" not in signed_in.headers.get("set-cookie", "")
    # The tracker kept serving, and an actor of any script (and a few symbols) is written and signs in.
    good = jwt.encode({"sub": "Zoë 李 <zoe@example.com>", "exp": int(time.time()) + 600}, secret, "HS256")
    answered = create(server, good, "written by a printable actor")
    assert answered.status_code == 200 and '"isError":true' not in answered.text.replace(" ", ""), answered.text
    assert board_sign_in(server, good).status_code == 303
