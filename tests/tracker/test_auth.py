"""The JWT attack corpus, against every verifier kind. Every forged or broken token is refused."""

import base64
import json
import re
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from hypothesis import given
from hypothesis import strategies as st

from bee_tracker.auth import (
    LINK_TOKEN_TYPE,
    AuthError,
    Verifier,
    hmac_verifier,
    jwks_verifier,
    mint,
    pem_verifier,
    shown,
)
from bee_tracker.home import KEY_FILE, ensure_key
from bee_tracker.middleware import challenge

SECRET = b"s" * 32


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims(**extra: Any) -> dict[str, Any]:
    return {"sub": "agent-1", "email": "alice@example.com", "exp": int(time.time()) + 600, **extra}


def pem(public_key: rsa.RSAPublicKey | ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey) -> bytes:
    return public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def refused(verifier: Verifier, token: str, reason: str) -> None:
    with pytest.raises(AuthError, match=reason):
        verifier.actor(token)


def test_valid_hs256_gives_email_then_sub() -> None:
    verifier = hmac_verifier(SECRET)
    assert verifier.actor(jwt.encode(claims(), SECRET, algorithm="HS256")) == "alice@example.com"
    no_email = {k: v for k, v in claims().items() if k != "email"}
    assert verifier.actor(jwt.encode(no_email, SECRET, algorithm="HS256")) == "agent-1"


def test_hs256_attack_corpus() -> None:
    verifier = hmac_verifier(SECRET, issuer="bee", audience="tracker")
    good = claims(iss="bee", aud="tracker")
    assert verifier.actor(jwt.encode(good, SECRET, algorithm="HS256")) == "alice@example.com"
    header_none = b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    body = b64(json.dumps(good).encode())
    refused(verifier, f"{header_none}.{body}.", "alg none")
    refused(verifier, f"{b64(json.dumps({'alg': 'None'}).encode())}.{body}.", "alg none")
    refused(verifier, jwt.encode(good, b"x" * 32, algorithm="HS256"), "invalid signature")
    refused(verifier, jwt.encode(good, SECRET * 2, algorithm="HS512"), "algorithm HS512 is not accepted")
    refused(verifier, jwt.encode({**good, "exp": int(time.time()) - 3600}, SECRET, algorithm="HS256"), "expired")
    refused(verifier, jwt.encode({k: v for k, v in good.items() if k != "exp"}, SECRET, algorithm="HS256"), "exp")
    refused(verifier, jwt.encode({**good, "iss": "evil"}, SECRET, algorithm="HS256"), "wrong issuer")
    refused(verifier, jwt.encode({**good, "aud": "other"}, SECRET, algorithm="HS256"), "wrong audience")
    refused(
        verifier,
        jwt.encode({"exp": good["exp"], "iss": "bee", "aud": "tracker"}, SECRET, algorithm="HS256"),
        "names no actor",
    )
    refused(verifier, "not.a.token", "malformed")
    refused(verifier, "", "malformed")
    token = jwt.encode(good, SECRET, algorithm="HS256")
    head, _, signature = token.split(".")
    tampered = b64(json.dumps({**good, "email": "mallory@example.com"}).encode())
    refused(verifier, f"{head}.{tampered}.{signature}", "invalid signature")


def test_algorithm_confusion_hmac_signed_with_the_public_key_is_refused(rsa_key: rsa.RSAPrivateKey) -> None:
    public_pem = pem(rsa_key.public_key())
    verifier = pem_verifier(public_pem)
    assert verifier.actor(jwt.encode(claims(), rsa_key, algorithm="RS256")) == "alice@example.com"
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps(claims()).encode())
    import hashlib
    import hmac

    signature = b64(hmac.new(public_pem, f"{header}.{body}".encode(), hashlib.sha256).digest())
    refused(verifier, f"{header}.{body}.{signature}", "algorithm HS256 is not accepted")
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    refused(verifier, jwt.encode(claims(), other, algorithm="RS256"), "invalid signature")


def test_ec_and_eddsa_keys_accept_only_their_own_family() -> None:
    ec_key = ec.generate_private_key(ec.SECP256R1())
    verifier = pem_verifier(pem(ec_key.public_key()))
    assert verifier.actor(jwt.encode(claims(), ec_key, algorithm="ES256")) == "alice@example.com"
    assert "RS256" not in verifier.algorithms and "HS256" not in verifier.algorithms
    ed_key = ed25519.Ed25519PrivateKey.generate()
    verifier = pem_verifier(pem(ed_key.public_key()))
    assert verifier.actor(jwt.encode(claims(), ed_key, algorithm="EdDSA")) == "alice@example.com"
    refused(verifier, jwt.encode(claims(), ec_key, algorithm="ES256"), "algorithm ES256 is not accepted")


def test_jwks_file_selects_by_kid(tmp_path: Path, rsa_key: rsa.RSAPrivateKey) -> None:
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(rsa_key.public_key()))
    jwk.update(kid="k1", use="sig", alg="RS256")
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [jwk]}))
    verifier = jwks_verifier(str(path))
    token = jwt.encode(claims(), rsa_key, algorithm="RS256", headers={"kid": "k1"})
    assert verifier.actor(token) == "alice@example.com"
    refused(verifier, jwt.encode(claims(), rsa_key, algorithm="RS256", headers={"kid": "k2"}), "kid")


def test_default_key_is_created_once_with_0600(tmp_path: Path) -> None:
    home = tmp_path / "home"
    secret, created = ensure_key(home)
    assert created and len(secret) == 32 and (home / KEY_FILE).stat().st_mode & 0o777 == 0o600
    assert ensure_key(home) == (secret, False)
    token = mint(secret, "carol@example.com", ttl_seconds=120)
    assert hmac_verifier(secret).actor(token) == "carol@example.com"


def test_short_secrets_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        hmac_verifier(b"short")


# -- header fields are data -------------------------------------------------------------------------------------

#: What an RFC 6750 error_description may hold.
SAFE = re.compile(r"[ !#-\[\]-~]*")


def unsigned(header: object, payload: dict[str, Any] | None = None) -> str:
    return f"{b64(json.dumps(header).encode())}.{b64(json.dumps(payload or claims()).encode())}.c2ln"


@given(st.text(max_size=200))
def test_shown_text_is_printable_ascii_without_quotes_and_bounded(text: str) -> None:
    assert SAFE.fullmatch(shown(text)) and len(shown(text)) <= 35


@given(st.text(max_size=300))
def test_a_challenge_holds_only_what_rfc_6750_allows(description: str) -> None:
    header = challenge("bee-tracker", "invalid_token", description).decode("ascii")
    assert re.fullmatch(r'Bearer realm="bee-tracker", error="invalid_token", error_description="[ !#-\[\]-~]*"', header)


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ({"alg": "HS256\r\nINFO forged"}, r"^algorithm HS256\?\?INFO forged is not accepted here \(accepted: HS256\)$"),
        ({"alg": 'x", error="y'}, r"^algorithm x\?, error=\?y is not"),
        ({"alg": "HS256☃"}, r"^algorithm HS256\? is not"),
        ({"alg": "A" * 100}, r"^algorithm A{32}\.\.\. is not"),
        ({"alg": None}, "alg must be a string"),
        ({"alg": "HS256", "kid": 7}, "^malformed token: its header's kid \\(key id\\) is not a string$"),
        ([1, 2], "^malformed token: its header is not a base64url-encoded JSON object"),
    ],
    ids=["crlf", "quote", "non-latin-1", "long", "null", "kid-int", "array"],
)
def test_hostile_header_fields_become_safe_reasons(header: object, reason: str) -> None:
    with pytest.raises(AuthError, match=reason) as info:
        hmac_verifier(SECRET).actor(unsigned(header))
    assert SAFE.fullmatch(str(info.value))


@pytest.mark.parametrize("token", ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0", "abc", "a.b.c.d"])
def test_a_token_cut_in_copying_is_named_as_such_without_asking_for_a_kid(token: str) -> None:
    with pytest.raises(AuthError, match=r"^malformed token: a JWT is three base64url parts joined by dots") as info:
        hmac_verifier(SECRET).actor(token)
    assert "kid" not in str(info.value)


def test_a_jwks_key_must_be_of_the_tokens_family(tmp_path: Path, rsa_key: rsa.RSAPrivateKey) -> None:
    ec_key = ec.generate_private_key(ec.SECP256R1())
    rsa_jwk = {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(rsa_key.public_key())), "kid": "r"}
    ec_jwk = {**json.loads(jwt.algorithms.ECAlgorithm.to_jwk(ec_key.public_key())), "kid": "e"}
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [rsa_jwk, ec_jwk]}))
    verifier = jwks_verifier(str(path))
    refused(verifier, jwt.encode(claims(), ec_key, algorithm="ES256", headers={"kid": "r"}), "cannot verify ES256")
    refused(verifier, jwt.encode(claims(), SECRET, algorithm="HS256", headers={"kid": "r"}), "HS256 is not accepted")
    assert verifier.actor(jwt.encode(claims(), ec_key, algorithm="ES256")) == "alice@example.com"  # no kid


# -- time claims and the maximum lifetime -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exp", "reason"),
    [("9999999999", "exp claim must be a number"), (True, "exp claim must be a number"), (None, "lacks the exp")],
    ids=["string", "bool", "null"],
)
def test_exp_must_be_a_number(exp: object, reason: str) -> None:
    refused(hmac_verifier(SECRET), jwt.encode({**claims(), "exp": exp}, SECRET, algorithm="HS256"), reason)


def test_lifetime_is_capped_from_now_and_from_iat() -> None:
    verifier = hmac_verifier(SECRET, max_lifetime_seconds=3600)
    now = int(time.time())
    refused(verifier, jwt.encode({**claims(), "exp": now + 7200}, SECRET, algorithm="HS256"), "3600 seconds from now")
    lived = {**claims(), "iat": now - 3000, "exp": now + 1200}
    refused(verifier, jwt.encode(lived, SECRET, algorithm="HS256"), "lives longer than 3600 seconds")
    refused(verifier, jwt.encode({**claims(), "iat": now + 600}, SECRET, algorithm="HS256"), "issued in the future")
    refused(verifier, jwt.encode({**claims(), "nbf": now + 600}, SECRET, algorithm="HS256"), "not yet valid")
    assert verifier.actor(jwt.encode({**claims(), "iat": now, "exp": now + 3600}, SECRET, "HS256"))


def test_mint_refuses_a_ttl_over_the_maximum() -> None:
    with pytest.raises(ValueError, match="7 days"):
        mint(SECRET, "a", ttl_seconds=7 * 86400 + 1)
    assert hmac_verifier(SECRET).actor(mint(SECRET, "a", ttl_seconds=7 * 86400)) == "a"


# -- the actor, and tokens typed for one use --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("actor", "reason"),
    [
        ("ann\ud800@example.com", "not printable text"),  # a lone surrogate, as JSON's "\ud800" decodes
        ("ann\x1b[31m@example.com", "not printable text"),
        ("ann\r\nforged", "not printable text"),
        ("ann\u2029", "not printable text"),
        ("\u200fann", "not printable text"),  # a right-to-left mark (format character)
        ("\U000e0041ann", "not printable text"),  # a tag character (format)
        ("\ue000ann", "not printable text"),  # private use
        ("a" * 321, "longer than 320 characters"),
        (7, "must be a string"),
        ({"name": "ann"}, "must be a string"),
        (True, "must be a string"),
    ],
)
def test_an_actor_must_be_printable_text_of_bounded_length(actor: object, reason: str) -> None:
    token = jwt.encode(claims(email=actor), SECRET, algorithm="HS256")
    refused(hmac_verifier(SECRET), token, f"email claim \\(its actor\\) .*{reason}")
    # The configured claim is refused, not skipped for sub: the token named a bad actor.
    refused(hmac_verifier(SECRET, actor_claim="email"), token, reason)


def test_printable_actors_of_every_script_are_accepted_and_blank_ones_fall_back_to_sub() -> None:
    verifier = hmac_verifier(SECRET)
    for actor in ("Zoë 李 <zoe@example.com>", "a" * 320, "ann o'brien", "🐝 worker"):
        assert verifier.actor(jwt.encode(claims(email=actor), SECRET, algorithm="HS256")) == actor
    assert verifier.actor(jwt.encode(claims(email="  "), SECRET, algorithm="HS256")) == "agent-1"
    assert verifier.actor(jwt.encode(claims(email=None), SECRET, algorithm="HS256")) == "agent-1"
    refused(verifier, jwt.encode(claims(email=None, sub="bad\x00"), SECRET, algorithm="HS256"), "sub claim")


def test_a_link_typed_token_is_good_only_as_a_link_and_a_link_takes_only_those() -> None:
    verifier = hmac_verifier(SECRET)
    for typ in (LINK_TOKEN_TYPE, "Bee-Board-Link+JWT", "application/bee-board-link+jwt"):
        link = jwt.encode(claims(), SECRET, algorithm="HS256", headers={"typ": typ})
        refused(verifier, link, "one-time sign-in link's token, which works only by opening its link")
        assert verifier.link_actor(link) == "alice@example.com"
    plain = jwt.encode(claims(), SECRET, algorithm="HS256")
    with pytest.raises(AuthError, match="not a sign-in link's token"):
        verifier.link_actor(plain)
    # A link's token is checked like any other: signature, times and actor.
    forged = jwt.encode(claims(), b"x" * 32, algorithm="HS256", headers={"typ": LINK_TOKEN_TYPE})
    with pytest.raises(AuthError, match="invalid signature"):
        verifier.link_actor(forged)
    odd = jwt.encode(claims(email="ann\ud800"), SECRET, algorithm="HS256", headers={"typ": LINK_TOKEN_TYPE})
    with pytest.raises(AuthError, match="not printable text"):
        verifier.link_actor(odd)
