"""The JWT attack corpus, against every verifier kind. Every forged or broken token is refused."""

import base64
import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from bee_tracker.auth import AuthError, hmac_verifier, jwks_verifier, mint, pem_verifier
from bee_tracker.home import KEY_FILE, ensure_key

SECRET = b"s" * 32


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims(**extra):
    return {"sub": "agent-1", "email": "alice@example.com", "exp": int(time.time()) + 600, **extra}


def pem(public_key) -> bytes:
    return public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


@pytest.fixture(scope="module")
def rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def refused(verifier, token, reason):
    with pytest.raises(AuthError, match=reason):
        verifier.actor(token)


def test_valid_hs256_gives_email_then_sub():
    verifier = hmac_verifier(SECRET)
    assert verifier.actor(jwt.encode(claims(), SECRET, algorithm="HS256")) == "alice@example.com"
    no_email = {k: v for k, v in claims().items() if k != "email"}
    assert verifier.actor(jwt.encode(no_email, SECRET, algorithm="HS256")) == "agent-1"


def test_hs256_attack_corpus():
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


def test_algorithm_confusion_hmac_signed_with_the_public_key_is_refused(rsa_key):
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


def test_ec_and_eddsa_keys_accept_only_their_own_family():
    ec_key = ec.generate_private_key(ec.SECP256R1())
    verifier = pem_verifier(pem(ec_key.public_key()))
    assert verifier.actor(jwt.encode(claims(), ec_key, algorithm="ES256")) == "alice@example.com"
    assert "RS256" not in verifier.algorithms and "HS256" not in verifier.algorithms
    ed_key = ed25519.Ed25519PrivateKey.generate()
    verifier = pem_verifier(pem(ed_key.public_key()))
    assert verifier.actor(jwt.encode(claims(), ed_key, algorithm="EdDSA")) == "alice@example.com"
    refused(verifier, jwt.encode(claims(), ec_key, algorithm="ES256"), "algorithm ES256 is not accepted")


def test_jwks_file_selects_by_kid(tmp_path, rsa_key):
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(rsa_key.public_key()))
    jwk.update(kid="k1", use="sig", alg="RS256")
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [jwk]}))
    verifier = jwks_verifier(str(path))
    token = jwt.encode(claims(), rsa_key, algorithm="RS256", headers={"kid": "k1"})
    assert verifier.actor(token) == "alice@example.com"
    refused(verifier, jwt.encode(claims(), rsa_key, algorithm="RS256", headers={"kid": "k2"}), "kid")


def test_default_key_is_created_once_with_0600(tmp_path):
    home = tmp_path / "home"
    secret, created = ensure_key(home)
    assert created and len(secret) == 32 and (home / KEY_FILE).stat().st_mode & 0o777 == 0o600
    assert ensure_key(home) == (secret, False)
    token = mint(secret, "carol@example.com", ttl_seconds=120)
    assert hmac_verifier(secret).actor(token) == "carol@example.com"


def test_short_secrets_are_refused():
    with pytest.raises(ValueError, match="at least 32 bytes"):
        hmac_verifier(b"short")
