"""Secrets stay secret: the tracker home is private, `token` never creates a key, and every command finds the same
home the same way."""

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_tracker.auth import hmac_verifier
from bee_tracker.config import default_home
from bee_tracker.home import KEY_FILE, read_key
from tests.tracker.calls import bee

#: No inherited choice of home or instance: each test says where it runs.
CLEAN: dict[str, str | None] = {"BEE_TRACKER_HOME": None, "BEE_INSTANCE_ROOT": None}


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_home_is_found_from_the_flag_env_instance_or_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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


def test_init_creates_a_private_home_and_key_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = bee("tracker", "init", "--home", str(home), env=CLEAN)
    assert first.returncode == 0 and "created" in first.stdout
    assert mode(home) == 0o700 and mode(home / KEY_FILE) == 0o600
    assert (home / ".gitignore").read_text() == "*\n"
    key = read_key(home)
    again = bee("tracker", "init", "--home", str(home), env=CLEAN)
    assert again.returncode == 0 and "already there" in again.stdout and read_key(home) == key


def test_token_never_creates_a_key_and_says_how_to(tmp_path: Path) -> None:
    home = tmp_path / "nowhere"
    refused = bee("tracker", "token", "--home", str(home), "--actor", "a@example.com", env=CLEAN)
    assert refused.returncode == 1 and refused.stdout == ""
    assert str(home) in refused.stderr and "bee tracker init" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not home.exists()


def test_token_in_a_subdirectory_of_a_checkout_uses_the_checkouts_key(tmp_path: Path) -> None:
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


def test_a_damaged_key_is_reported_not_replaced(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert bee("tracker", "init", "--home", str(home), env=CLEAN).returncode == 0
    (home / KEY_FILE).write_text("not hex\n")
    refused = bee("tracker", "token", "--home", str(home), "--actor", "a", env=CLEAN)
    assert refused.returncode == 1 and "damaged" in refused.stderr
    assert (home / KEY_FILE).read_text() == "not hex\n"


@pytest.mark.parametrize("command", ["import", "export"])
def test_local_commands_on_the_embedded_store_keep_the_home_private(tmp_path: Path, command: str) -> None:
    home = tmp_path / "home"
    source = tmp_path / "empty.jsonl"
    source.write_text("")
    argv = ["tracker", command, "--home", str(home)] + ([str(source)] if command == "import" else [])
    assert bee(*argv, env=CLEAN).returncode == 0
    assert mode(home) == 0o700 and (home / ".gitignore").read_text() == "*\n"
    assert not (home / KEY_FILE).exists()  # only init and serve make keys


# -- a key that came with the checkout is never used ---------------------------------------------------------


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", "user.name=Bee", "-c", "user.email=bee@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )


ATTACKERS_KEY = "ab" * 32 + "\n"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def shipped_checkout(tmp_path: Path, *, umask: int | None = None) -> Path:
    """A clone of a repository whose author committed .bee/tracker/signing-key (with a key they know)."""
    origin = tmp_path / "origin"
    (origin / ".bee" / "tracker").mkdir(parents=True)
    (origin / ".bee" / ".gitignore").write_text("*\n")
    (origin / ".bee" / "tracker" / KEY_FILE).write_text(ATTACKERS_KEY)
    git(tmp_path, "init", "-q", str(origin))
    git(origin, "add", "-f", ".bee")
    git(origin, "commit", "-qm", "ship a key")
    previous = os.umask(umask) if umask is not None else None
    try:
        git(tmp_path, "clone", "-q", str(origin), "clone")
    finally:
        if previous is not None:
            os.umask(previous)
    return tmp_path / "clone"


def refuses_the_key(done: subprocess.CompletedProcess[str], key: Path | str, why: str) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert f"the signing key {key} was not made by Bee on this machine: {why}" in done.stderr, done.stderr
    assert "bee tracker init --home" in done.stderr and "Traceback" not in done.stderr


@needs_git
@pytest.mark.parametrize("command", ["init", "token", "open", "serve"])
def test_a_key_the_checkout_ships_is_refused_by_every_command(tmp_path: Path, command: str) -> None:
    checkout = shipped_checkout(tmp_path)
    key = checkout / ".bee" / "tracker" / KEY_FILE
    assert mode(key) == 0o644  # what a clone makes of it
    argv = {
        "init": ["tracker", "init"],
        "token": ["tracker", "token", "--actor", "a@example.com"],
        "open": ["tracker", "open", "--actor", "a@example.com"],
        "serve": ["tracker", "serve", "--port", "0"],
    }[command]
    done = bee(*argv, cwd=checkout, env=CLEAN)
    refuses_the_key(done, key, "others may read it (mode 0644, where Bee makes its keys 0600)")
    assert mode(key) == 0o644 and key.read_text() == ATTACKERS_KEY  # never tightened into looking like Bee's
    assert done.stdout == "" or ATTACKERS_KEY.strip() not in done.stdout


@needs_git
def test_a_tracked_key_is_refused_even_when_private(tmp_path: Path) -> None:
    # Under umask 077 a clone writes the key 0600, exactly as Bee does: only git's index tells it apart.
    checkout = shipped_checkout(tmp_path, umask=0o077)
    key = checkout / ".bee" / "tracker" / KEY_FILE
    assert mode(key) == 0o600
    done = bee("tracker", "token", "--actor", "a@example.com", cwd=checkout, env=CLEAN)
    refuses_the_key(done, key, "git tracks it, so it came with the checkout")
    git(checkout, "rm", "-q", "--cached", ".bee/tracker/signing-key")  # the user takes it out of git on purpose
    assert bee("tracker", "token", "--actor", "a@example.com", cwd=checkout, env=CLEAN).returncode == 0


@needs_git
def test_a_tracked_database_is_not_served(tmp_path: Path) -> None:
    checkout = shipped_checkout(tmp_path)
    (checkout / ".bee" / "tracker" / KEY_FILE).unlink()
    database = checkout / ".bee" / "tracker" / "tracker.db"
    database.write_bytes(b"")
    git(checkout, "add", "-f", ".bee/tracker/tracker.db")
    done = bee("tracker", "export", cwd=checkout, env=CLEAN)
    assert done.returncode == 1 and f"the tracker database {database} is tracked by git" in done.stderr, done.stderr


def test_a_key_bee_made_keeps_working_in_a_repository_that_ignores_it(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    if shutil.which("git"):
        git(checkout, "init", "-q")
    (checkout / ".bee").mkdir()
    assert bee("tracker", "init", cwd=checkout, env=CLEAN).returncode == 0
    assert bee("tracker", "token", "--actor", "a@example.com", cwd=checkout, env=CLEAN).returncode == 0


@pytest.mark.parametrize("problem", ["group-readable", "symlink", "fifo", "dangling"])
def test_a_key_that_is_not_a_private_file_is_refused_and_left_alone(tmp_path: Path, problem: str) -> None:
    home = tmp_path / "home"
    assert bee("tracker", "init", "--home", str(home), env=CLEAN).returncode == 0
    key = home / KEY_FILE
    elsewhere = tmp_path / "known-key"
    elsewhere.write_text(ATTACKERS_KEY)
    elsewhere.chmod(0o600)
    why = {
        "group-readable": "others may read it (mode 0640",
        "symlink": "it is a symlink",
        "fifo": "it is not a regular file",
        "dangling": "it is a symlink",
    }[problem]
    if problem == "group-readable":
        key.chmod(0o640)
    else:
        key.unlink()
        if problem == "fifo":
            os.mkfifo(key, 0o600)  # a reader that waited for a writer would hang the command
        else:
            key.symlink_to(elsewhere if problem == "symlink" else tmp_path / "nowhere")
    for argv in (["tracker", "token", "--actor", "a"], ["tracker", "init"]):
        refuses_the_key(bee(*argv, "--home", str(home), env=CLEAN), key, why)
    assert not (tmp_path / "nowhere").exists()  # nothing was written through a dangling link


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_key_of_another_user_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert bee("tracker", "init", "--home", str(home), env=CLEAN).returncode == 0
    os.chown(home / KEY_FILE, 65534, 65534)
    done = bee("tracker", "token", "--home", str(home), "--actor", "a", env=CLEAN)
    refuses_the_key(done, home / KEY_FILE, "it is owned by uid 65534, not by you (uid 0)")


def test_a_dot_bee_linking_out_of_its_checkout_is_not_taken_for_the_checkouts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BEE_TRACKER_HOME", raising=False)
    monkeypatch.delenv("BEE_INSTANCE_ROOT", raising=False)
    theirs, mine = tmp_path / "cloned", tmp_path / "mine"
    (mine / ".bee").mkdir(parents=True)
    (theirs / "src").mkdir(parents=True)
    (theirs / ".bee").symlink_to(mine / ".bee")
    done = bee("tracker", "token", "--actor", "a", cwd=theirs / "src", env=CLEAN)
    assert done.returncode == 1 and "is a symlink to" in done.stderr and "outside the checkout" in done.stderr
    with pytest.raises(BeeError) as caught:
        default_home(theirs / "src")
    assert caught.value.code == "outside_root"
