"""What is installed: the fingerprint that notices an upgrade, and the file that can stand for the installation."""

import json

import pytest

from bee_contracts import BeeError, version_info
from bee_supervisor.installed import ENV_INSTALLED_FILE, current_installed, fingerprint, read_installed


def test_the_installed_version_is_the_contracts_package(monkeypatch):
    monkeypatch.delenv(ENV_INSTALLED_FILE, raising=False)
    now = current_installed()
    assert now.info == version_info()
    assert now.fingerprint == fingerprint()  # nothing changes between two looks
    assert read_installed() == now  # a fresh interpreter reads the same


def test_the_file_knob_stands_for_the_installation_and_any_change_to_it_is_an_upgrade(monkeypatch, tmp_path):
    path = tmp_path / "installed.json"
    path.write_text(json.dumps(version_info()))
    monkeypatch.setenv(ENV_INSTALLED_FILE, str(path))
    before = read_installed()
    assert before.info == version_info()
    path.write_text(json.dumps({**version_info(), "build": 2}))  # same triple, reinstalled
    after = read_installed()
    assert after.info == before.info and after.fingerprint != before.fingerprint
    path.write_text(json.dumps({**version_info(), "version": "0.2.0"}))
    assert read_installed().info["version"] == "0.2.0"


@pytest.mark.parametrize("content", ["not json", json.dumps({"version": "1"})])
def test_a_damaged_file_is_reported(monkeypatch, tmp_path, content):
    path = tmp_path / "installed.json"
    path.write_text(content)
    monkeypatch.setenv(ENV_INSTALLED_FILE, str(path))
    with pytest.raises(BeeError, match=ENV_INSTALLED_FILE):
        read_installed()
