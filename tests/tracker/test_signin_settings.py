"""The sign-in's settings that cannot work are refused before the tracker listens, saying which option to change;
and what decides a request's scopes and a tracker's origin, on inputs no client sends."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bee_cli import make_cli
from bee_tracker.cli import register
from bee_tracker.oauth import origin, scopes


def serve(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(make_cli([register]), ["tracker", "serve", "--home", str(tmp_path / "home"), *args])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--sign-in", "idp"], "--sign-in idp needs --oidc-issuer"),
        (["--no-pasted-tokens"], "--no-pasted-tokens leaves --sign-in token no token to take"),
        (["--oidc-client-id", "board"], "--oidc-client-id needs --oidc-issuer"),
        (["--sign-in", "idp", "--oidc-issuer", "http://idp.example.com"], "must be https://"),
        (["--sign-in", "idp", "--oidc-issuer", "https://idp.example.com/?tenant=1"], "no query or fragment"),
        (["--sign-in", "idp", "--oidc-issuer", "idp.example.com"], "must be the provider's issuer URL"),
        (["--sign-in", "builtin", "--public-url", "https://tracker.example.com/bee"], "must be only scheme://host"),
        (["--sign-in", "builtin", "--public-url", "tracker.example.com"], "is not an http:// or https:// origin"),
        (["--sign-in", "builtin", "--access-token-lifetime", "10"], "10 is not in the range 60<=x<=3600"),
        (["--sign-in", "magic"], "'magic' is not one of 'token', 'builtin', 'idp'"),
    ],
)
def test_settings_that_cannot_work_are_refused_before_listening(tmp_path: Path, args: list[str], said: str) -> None:
    code, output = serve(tmp_path, *args)
    assert code == 2 and said in output, output


def test_a_client_secret_file_needs_a_client_and_a_secret(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("\n")
    issuer = ["--sign-in", "idp", "--oidc-issuer", "https://idp.example.com"]
    code, output = serve(tmp_path, *issuer, "--oidc-client-secret-file", str(secret))
    assert code == 2 and "--oidc-client-secret-file needs --oidc-client-id" in output
    code, output = serve(tmp_path, *issuer, "--oidc-client-id", "board", "--oidc-client-secret-file", str(secret))
    assert code == 2 and "is empty" in output


@pytest.mark.parametrize(
    ("body", "needed"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', {scopes.READ}),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get","arguments":{}}}', {scopes.READ}),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"claim","arguments":{}}}',
            {scopes.READ, scopes.WRITE},
        ),
        (b'[{"method":"tools/list"},{"method":"tools/call","params":{"name":"create"}}]', {scopes.READ, scopes.WRITE}),
        (b'{"method":"tools/call","params":{"name":["claim"]}}', {scopes.READ}),  # no tool by that name runs
        (b'{"method":"tools/call","params":"claim"}', {scopes.READ}),
        (b"not json", {scopes.READ}),
        (b"\xff\xfe\x00", {scopes.READ}),
        (b"[" * 100_000 + b"]" * 100_000, {scopes.READ}),  # deeper than the parser goes
    ],
)
def test_the_scopes_a_request_needs(body: bytes, needed: set[str]) -> None:
    assert scopes.needed(body) == needed


def test_every_tool_that_writes_needs_the_write_scope() -> None:
    writing = {"add_note", "claim", "complete", "create", "handoff", "link", "release", "update"}
    assert scopes.write_tools() == writing | {"lease_join", "lease_renew", "lease_leave"}


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        (b"127.0.0.1:8765", "http://127.0.0.1:8765"),
        (b"LOCALHOST:80", "http://localhost"),
        (b"[::1]:8765", "http://[::1]:8765"),
        (b"", "http://10.0.0.1:9"),  # HTTP/1.0 without Host: the address the request reached
        (b"bad host name:x", "http://127.0.0.1"),  # the DNS-rebinding guard refuses it anyway
    ],
)
def test_the_origin_of_a_request(host: bytes, expected: str) -> None:
    scope = {"type": "http", "scheme": "http", "headers": [(b"host", host)] if host else [], "server": ("10.0.0.1", 9)}
    assert origin.of_request(scope, None) == expected
    assert origin.of_request(scope, "https://tracker.example.com") == "https://tracker.example.com"
