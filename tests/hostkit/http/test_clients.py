"""Whose request it is, for fair shares: every spelling of one token that verifies is one client."""

import jwt

from bee_hostkit.http.clients import client_of

SECRET = "s" * 32
TOKEN = jwt.encode({"sub": "ann", "exp": 9_999_999_999}, SECRET, algorithm="HS256")
OTHER = jwt.encode({"sub": "bob", "exp": 9_999_999_999}, SECRET, algorithm="HS256")


def verifies(token: str) -> bool:
    try:
        jwt.decode(token, SECRET, algorithms=["HS256"])
    except jwt.InvalidTokenError:
        return False
    return True


def bearer(value: str) -> list[tuple[bytes, bytes]]:
    return [(b"host", b"127.0.0.1"), (b"authorization", value.encode("latin-1"))]


def test_every_spelling_of_a_token_that_verifies_is_one_client() -> None:
    padded = TOKEN + "="  # 43 signature characters: one "=" of padding, which PyJWT accepts
    assert verifies(TOKEN) and verifies(padded)
    spellings = [f"Bearer {TOKEN}", f"bearer {TOKEN}", f"BEARER  {TOKEN} ", f"Bearer {padded}"]
    assert len({client_of(bearer(value), "10.0.0.1") for value in spellings}) == 1
    # The address does not matter: a token is one client wherever it comes from.
    assert client_of(bearer(f"Bearer {TOKEN}"), "10.0.0.1") == client_of(bearer(f"Bearer {TOKEN}"), "10.0.0.2")


def test_other_tokens_and_forgeries_are_other_clients() -> None:
    mine = client_of(bearer(f"Bearer {TOKEN}"), "10.0.0.1")
    assert client_of(bearer(f"Bearer {OTHER}"), "10.0.0.1") != mine
    header, _, signature = TOKEN.split(".")
    forged_payload = jwt.utils.base64url_encode(b'{"sub":"ann","exp":9999999999,"x":1}').decode()
    assert client_of(bearer(f"Bearer {header}.{forged_payload}.{signature}"), "10.0.0.1") != mine
    assert client_of(bearer("Bearer not-a-jwt"), "10.0.0.1") == ("bearer", "not-a-jwt")
    assert client_of(bearer("Bearer a.b.A"), "10.0.0.1") == ("bearer", "a.b.A")  # no signature PyJWT could read


def test_the_last_authorization_header_counts_as_the_app_reads_it() -> None:
    headers = [(b"authorization", f"Bearer {OTHER}".encode()), *bearer(f"Bearer {TOKEN}")]
    assert client_of(headers, "10.0.0.1") == client_of(bearer(f"Bearer {TOKEN}"), "10.0.0.1")


def test_without_a_bearer_token_the_address_is_the_client() -> None:
    assert client_of([(b"host", b"x")], "10.0.0.1") == ("peer", "10.0.0.1")
    assert client_of(bearer("Basic dXNlcjpwdw=="), "10.0.0.1") == ("peer", "10.0.0.1")
    assert client_of(bearer("Bearer   "), "10.0.0.1") == ("peer", "10.0.0.1")
