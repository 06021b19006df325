"""bee_contracts.userconfig: one private folder per instance in the user's configuration directory, refused when
anyone else could have written it."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from bee_contracts import BeeError, ErrorCode
from bee_contracts.userconfig import MAX_SETTINGS_BYTES, UserSettings, config_home, instance_key

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def refused(settings: UserSettings, name: str = "bridge.json") -> BeeError:
    with pytest.raises(BeeError) as caught:
        settings.read(name)
    assert caught.value.code is ErrorCode.FORBIDDEN and caught.value.retryable is False
    return caught.value


@pytest.fixture
def settings(tmp_path: Path) -> UserSettings:
    return UserSettings(tmp_path / "checkout" / ".bee")


def test_the_folder_is_found_from_xdg_config_home_else_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config_home() == tmp_path / "xdg" / "bee"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for ignored in ("", "relative/config"):  # a relative XDG_CONFIG_HOME is ignored, as the specification says
        monkeypatch.setenv("XDG_CONFIG_HOME", ignored)
        assert config_home() == tmp_path / "home" / ".config" / "bee"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert config_home() == tmp_path / "home" / ".config" / "bee"


def test_an_instance_is_keyed_by_its_real_path(tmp_path: Path) -> None:
    real = tmp_path / "checkout" / ".bee"
    real.mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "checkout")
    key = instance_key(real)
    assert len(key) == 32 and int(key, 16) >= 0
    assert instance_key(tmp_path / "link" / ".bee") == key  # the same instance, however it is reached
    assert instance_key(tmp_path / "other" / ".bee") != key
    assert UserSettings(tmp_path / "link" / ".bee").folder == config_home() / "instances" / key


def test_nothing_is_created_until_a_setting_is_written(settings: UserSettings) -> None:
    assert settings.read("bridge.json") is None and settings.remove("bridge.json") is False
    assert not config_home().exists()


def test_a_written_setting_is_private_recorded_and_read_back(settings: UserSettings) -> None:
    written = settings.write("bridge.json", b'{"version": 1}')
    assert written == settings.path("bridge.json") and settings.read("bridge.json") == b'{"version": 1}'
    for folder in (config_home(), config_home() / "instances", settings.folder):
        assert mode(folder) == 0o700, folder
    assert mode(written) == 0o600
    record = json.loads(settings.path("instance.json").read_text())
    assert record["instance"] == str(settings.instance) and record["created"]
    assert mode(settings.path("instance.json")) == 0o600
    assert settings.read("collab.json") is None  # another setting of the same instance, never written
    assert settings.remove("bridge.json") is True and settings.read("bridge.json") is None


@pytest.mark.parametrize("bits", [0o720, 0o702, 0o770, 0o777])
@pytest.mark.parametrize("which", ["home", "instances", "folder"])
def test_a_folder_others_may_write_is_refused_with_the_chmod_that_fixes_it(
    settings: UserSettings, which: str, bits: int
) -> None:
    settings.write("bridge.json", b"{}")
    folder = {"home": config_home(), "instances": config_home() / "instances", "folder": settings.folder}[which]
    folder.chmod(bits)
    error = refused(settings)
    assert error.message == (
        f"Bee refuses its per-user settings {folder}: group or others may write it (mode {bits:04o}); "
        f"chmod 700 {folder}"
    )
    with pytest.raises(BeeError):  # nor is anything written into it
        settings.write("collab.json", b"{}")
    folder.chmod(0o700)
    assert settings.read("bridge.json") == b"{}"


@pytest.mark.parametrize("bits", [0o620, 0o602, 0o666])
def test_a_file_others_may_write_is_refused(settings: UserSettings, bits: int) -> None:
    path = settings.write("bridge.json", b"{}")
    path.chmod(bits)
    assert refused(settings).message.endswith(f"(mode {bits:04o}); chmod 600 {path}")
    path.chmod(0o644)  # readable by others is no danger here: the file holds no secret, only who to talk to
    assert settings.read("bridge.json") == b"{}"


@as_root
def test_a_file_or_folder_of_another_user_is_refused(settings: UserSettings) -> None:
    path = settings.write("bridge.json", b"{}")
    os.chown(path, 65534, 65534)
    assert f"{path}: it is owned by uid 65534, not by you (uid 0)" in refused(settings).message
    os.chown(path, 0, 0)
    os.chown(settings.folder, 65534, 65534)
    assert f"{settings.folder}: it is owned by uid 65534" in refused(settings).message


def test_a_symlink_special_file_or_huge_file_is_refused(settings: UserSettings, tmp_path: Path) -> None:
    path = settings.write("bridge.json", b"{}")
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}")
    path.unlink()
    path.symlink_to(elsewhere)
    assert "it is a symlink" in refused(settings).message
    path.unlink()
    os.mkfifo(path, 0o600)  # must not block waiting for a writer
    assert "it is not a file" in refused(settings).message
    path.unlink()
    settings.write("bridge.json", b" " * (MAX_SETTINGS_BYTES + 1))
    assert "larger than any settings file Bee writes" in refused(settings).message


def test_a_folder_that_belongs_to_another_instance_is_refused(settings: UserSettings, tmp_path: Path) -> None:
    settings.write("bridge.json", b"{}")
    record = settings.path("instance.json")
    record.write_text(json.dumps({"instance": "/somewhere/else/.bee"}))
    error = refused(settings)
    assert f"it belongs to the instance /somewhere/else/.bee, not to {settings.instance}" in error.message
    assert "move the folder away" in error.message
    record.unlink()
    assert "it records no instance" in refused(settings).message
    record.write_text("{oops")
    assert "it records no instance" in refused(settings).message
