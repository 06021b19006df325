"""`bee tracker open`: a link that signs a person in once, within 60 seconds, from the home's signing key."""

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from click.testing import CliRunner, Result

from bee_cli.main import make_cli
from bee_tracker.auth import AuthError, hmac_verifier
from bee_tracker.board.links import LINK_MAX_SECONDS, claims_of, link_claims
from bee_tracker.cli import register
from bee_tracker.home import ensure_key


def open_link(home: Path, *args: str) -> Result:
    return CliRunner().invoke(
        make_cli([register]), ["tracker", "open", "--home", str(home), "--actor", "ann@example.com", *args]
    )


def test_open_prints_a_link_whose_token_the_tracker_accepts_once_within_a_minute(tmp_path: Path) -> None:
    secret, _ = ensure_key(tmp_path / "home")
    result = open_link(tmp_path / "home", "--url", "http://tracker.internal:9000/", "--audience", "bee")
    assert result.exit_code == 0, result.output
    link = result.stdout.strip()
    parts = urlsplit(link)
    assert (parts.scheme, parts.netloc, parts.path) == ("http", "tracker.internal:9000", "/board/link")
    [token] = parse_qs(parts.query)["token"]
    verifier = hmac_verifier(secret, audience="bee")
    assert verifier.link_actor(token) == "ann@example.com"
    with pytest.raises(AuthError, match="only by opening its link"):
        verifier.actor(token)  # good for the link, not for /mcp or the sign-in form
    claims = claims_of(token)
    assert claims["exp"] - claims["iat"] == LINK_MAX_SECONDS and claims["aud"] == "bee"
    assert link_claims(token).link_id == claims["jti"]
    again = urlsplit(open_link(tmp_path / "home").stdout.strip())
    assert parse_qs(again.query)["token"] != [token]  # every link is new


def test_open_needs_the_homes_key_and_a_web_address(tmp_path: Path) -> None:
    missing = open_link(tmp_path / "nowhere")
    assert missing.exit_code == 1 and "no signing key" in missing.output
    ensure_key(tmp_path / "home")
    bad = open_link(tmp_path / "home", "--url", "ftp://x")
    assert bad.exit_code == 2 and "--url must start with http://" in bad.output


@pytest.mark.parametrize("actor", ["ann\u2028@example.com", "\ud800", "a" * 321, "ann\x00"])
def test_token_and_open_refuse_an_actor_no_tracker_would_accept(tmp_path: Path, actor: str) -> None:
    ensure_key(tmp_path / "home")
    for command in ("token", "open"):
        result = CliRunner().invoke(
            make_cli([register]), ["tracker", command, "--home", str(tmp_path / "home"), "--actor", actor]
        )
        assert result.exit_code == 2, (command, result.output)
        assert "--actor" in result.output and "must be printable text of at most 320 characters" in result.output


def test_open_with_browser_says_so_when_no_browser_can_be_opened(tmp_path: Path) -> None:
    import os
    import subprocess

    from tests.conftest import bee_executable

    ensure_key(tmp_path / "home")
    # As on a server: no browser program on PATH, no display, no $BROWSER.
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}
    env["PATH"] = str(tmp_path / "empty")
    completed = subprocess.run(
        [
            str(bee_executable()),
            "tracker",
            "open",
            "--home",
            str(tmp_path / "home"),
            "--actor",
            "a@example.com",
            "--browser",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("http://127.0.0.1:8765/board/link?token=")
    assert "no web browser could be opened here" in completed.stderr
