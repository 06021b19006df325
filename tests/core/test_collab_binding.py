"""The collaboration binding in the user's settings: written whole, read back exactly, never holding the token, and
never taken from the checkout."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_contracts.userconfig import UserSettings
from bee_core.collab import binding as bindings
from bee_core.collab.binding import ENV_TOKEN, Binding
from bee_core.instance import Instance

TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJl"


def refused(function: Callable[..., object], *args: object) -> BeeError:
    with pytest.raises(BeeError) as info:
        function(*args)
    return info.value


@pytest.fixture
def instance(tmp_path: Path) -> Instance:
    created = Instance(tmp_path / ".bee")
    created.init()
    return created


def sample(token_file: Path | None = None) -> Binding:
    return Binding(
        tracker="http://127.0.0.1:8765/mcp",
        space="team",
        lease_id="lease-" + "a" * 32,
        checkout_id="chk-0123456789abcdef",
        holder="alice@example.com",
        ttl_seconds=600,
        token_file=token_file,
        joined_at="2026-05-01T09:00:00.000000Z",
    )


def private_token(path: Path, text: str = TOKEN + "\n") -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


def test_a_saved_binding_reads_back_exactly_and_names_only_where_the_token_is(
    instance: Instance, tmp_path: Path, bee_user: dict[str, str]
) -> None:
    token_file = private_token(tmp_path / "token")
    saved = bindings.save(instance, sample(token_file))
    assert saved == bindings.binding_path(instance) == UserSettings(instance.root).path("collab.json")
    assert saved.is_relative_to(bee_user["XDG_CONFIG_HOME"])  # the user's, never the checkout's
    assert not instance.path("collab.json").exists()
    assert bindings.load(instance) == sample(token_file)
    text = saved.read_text()
    assert TOKEN not in text and json.loads(text)["tokenFile"] == str(token_file)
    assert saved.stat().st_mode & 0o077 == 0  # written through a private temporary file
    assert [p.name for p in saved.parent.iterdir() if p.name.startswith(".collab")] == []
    assert bindings.remove(instance) is True and bindings.remove(instance) is False
    assert bindings.load_optional(instance) is None


def test_a_binding_the_checkout_ships_is_never_read_and_the_error_says_how_to_adopt_it(instance: Instance) -> None:
    shipped = instance.path("collab.json")
    shipped.write_text(json.dumps(sample().to_json()))
    assert bindings.load_optional(instance) is None
    error = refused(bindings.load, instance)
    assert error.code == "binding_not_live" and "bee collab join" in error.message
    assert f"this checkout ships a collaboration binding (a tracker URL and its token) in {shipped}" in error.message
    assert "Bee ignores it" in error.message and "run `bee collab trust`" in error.message
    assert error.details == {"binding": None, "shipped": str(shipped), "adopt": "bee collab trust"}


def test_a_missing_or_damaged_binding_is_not_live_and_says_what_to_run(instance: Instance, tmp_path: Path) -> None:
    error = refused(bindings.load, instance)
    assert error.code == "binding_not_live" and "bee collab join --tracker URL --space SPACE" in error.message
    uninitialised = refused(bindings.load, Instance(tmp_path / "nowhere"))
    assert uninitialised.code == "binding_not_live" and "bee init" in uninitialised.message
    assert error.details == {"binding": None}  # nothing shipped, nothing noted
    for damage in (
        "{not json",
        "[]",
        json.dumps({"tracker": "x"}),
        json.dumps({**sample().to_json(), "ttlSeconds": "x"}),
        b"\xff",
    ):
        UserSettings(instance.root).write("collab.json", damage if isinstance(damage, bytes) else damage.encode())
        error = refused(bindings.load, instance)
        assert error.code == "binding_not_live" and "is damaged" in error.message, damage


def test_the_token_comes_from_the_named_file_else_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_TOKEN, "from-the-environment")
    token_file = private_token(tmp_path / "token", f"  {TOKEN}\n")
    assert sample(token_file).token() == TOKEN  # the file wins, whitespace dropped
    token_file.write_text("rotated\n")
    assert sample(token_file).token() == "rotated"  # re-read on every use
    assert sample(None).token() == "from-the-environment"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot read the tracker token file"),
        ("", "does not hold a bearer token"),
        ("two words", "does not hold a bearer token"),
        ("tök", "does not hold a bearer token"),
        ("x" * (64 * 1024 + 1), "holds more than a token"),
        (0o644, "group or others may read or write it (mode 0644); chmod 600 {file}"),
    ],
)
def test_an_unusable_token_file_is_unauthorized(tmp_path: Path, content: str | int | None, expected: str) -> None:
    token_file = tmp_path / "token"
    if isinstance(content, int):
        private_token(token_file).chmod(content)
    elif content is not None:
        private_token(token_file, content)
    error = refused(sample(token_file).token)
    assert error.code == "unauthorized" and expected.format(file=token_file) in error.message
    assert TOKEN not in error.message


def test_no_token_anywhere_is_unauthorized_and_names_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_TOKEN, raising=False)
    error = refused(sample(None).token)
    assert error.code == "unauthorized" and f"${ENV_TOKEN}" in error.message and "--token-file" in error.message


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("ftp://tracker/mcp", "must be http(s)"),
        ("tracker:8765/mcp", "must be http(s)"),
        ("http:///mcp", "must be http(s)"),
        ("https://user:secret@tracker/mcp", "must not carry credentials"),
    ],
)
def test_tracker_urls_are_checked(url: str, expected: str) -> None:
    error = refused(bindings.checked_tracker_url, url)
    assert error.code == "invalid_argument" and expected in error.message
    assert "secret" not in error.message  # a credential in the URL is never echoed


def test_checkout_ids_are_fresh_and_say_nothing_about_the_machine() -> None:
    first, second = bindings.new_checkout_id(), bindings.new_checkout_id()
    assert first != second and first.startswith("chk-") and len(first) == len("chk-") + 16
