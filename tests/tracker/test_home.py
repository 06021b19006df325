"""Secrets stay secret: the tracker home is private, `token` never creates a key, and every command finds the same
home the same way."""

import stat

import pytest

from bee_tracker.auth import hmac_verifier
from bee_tracker.config import default_home
from bee_tracker.home import KEY_FILE, read_key
from tests.tracker.calls import bee

#: No inherited choice of home or instance: each test says where it runs.
CLEAN = {"BEE_TRACKER_HOME": None, "BEE_INSTANCE_ROOT": None}


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_the_home_is_found_from_the_flag_env_instance_or_the_working_directory(tmp_path, monkeypatch):
    checkout = tmp_path / "checkout"
    deep = checkout / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.delenv("BEE_TRACKER_HOME", raising=False)
    monkeypatch.delenv("BEE_INSTANCE_ROOT", raising=False)
    assert default_home(deep) == deep / ".bee" / "tracker"  # nothing found: the working directory's instance
    (checkout / ".bee").mkdir()
    assert default_home(deep) == checkout / ".bee" / "tracker"  # the nearest .bee above
    monkeypatch.setenv("BEE_INSTANCE_ROOT", str(tmp_path / "instance"))
    assert default_home(deep) == tmp_path / "instance" / "tracker"
    monkeypatch.setenv("BEE_TRACKER_HOME", str(tmp_path / "explicit"))
    assert default_home(deep) == tmp_path / "explicit"


def test_init_creates_a_private_home_and_key_once(tmp_path):
    home = tmp_path / "home"
    first = bee("tracker", "init", "--home", str(home), env=CLEAN)
    assert first.returncode == 0 and "created" in first.stdout
    assert mode(home) == 0o700 and mode(home / KEY_FILE) == 0o600
    assert (home / ".gitignore").read_text() == "*\n"
    key = read_key(home)
    again = bee("tracker", "init", "--home", str(home), env=CLEAN)
    assert again.returncode == 0 and "already there" in again.stdout and read_key(home) == key


def test_token_never_creates_a_key_and_says_how_to(tmp_path):
    home = tmp_path / "nowhere"
    refused = bee("tracker", "token", "--home", str(home), "--actor", "a@example.com", env=CLEAN)
    assert refused.returncode == 1 and refused.stdout == ""
    assert str(home) in refused.stderr and "bee tracker init" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not home.exists()


def test_token_in_a_subdirectory_of_a_checkout_uses_the_checkouts_key(tmp_path):
    checkout = tmp_path / "checkout"
    deep = checkout / "src" / "pkg"
    deep.mkdir(parents=True)
    (checkout / ".bee").mkdir()
    assert bee("tracker", "init", cwd=checkout, env=CLEAN).returncode == 0
    key = read_key(checkout / ".bee" / "tracker")
    minted = bee("tracker", "token", "--actor", "a@example.com", cwd=deep, env=CLEAN)
    assert minted.returncode == 0, minted.stderr
    assert hmac_verifier(key).actor(minted.stdout.strip()) == "a@example.com"
    assert not (deep / ".bee").exists()


def test_a_damaged_key_is_reported_not_replaced(tmp_path):
    home = tmp_path / "home"
    assert bee("tracker", "init", "--home", str(home), env=CLEAN).returncode == 0
    (home / KEY_FILE).write_text("not hex\n")
    refused = bee("tracker", "token", "--home", str(home), "--actor", "a", env=CLEAN)
    assert refused.returncode == 1 and "damaged" in refused.stderr
    assert (home / KEY_FILE).read_text() == "not hex\n"


@pytest.mark.parametrize("command", ["import", "export"])
def test_local_commands_on_the_embedded_store_keep_the_home_private(tmp_path, command):
    home = tmp_path / "home"
    source = tmp_path / "empty.jsonl"
    source.write_text("")
    argv = ["tracker", command, "--home", str(home)] + ([str(source)] if command == "import" else [])
    assert bee(*argv, env=CLEAN).returncode == 0
    assert mode(home) == 0o700 and (home / ".gitignore").read_text() == "*\n"
    assert not (home / KEY_FILE).exists()  # only init and serve make keys
