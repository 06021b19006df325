"""What is installed: the fingerprint that notices an upgrade, and the file that can stand for the installation."""

import json
from pathlib import Path

import pytest

from bee_contracts import BeeError, version_info
from bee_supervisor.installed import ENV_INSTALLED_FILE, current_installed, fingerprint, read_installed


def test_the_installed_version_is_the_contracts_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_INSTALLED_FILE, raising=False)
    now = current_installed()
    assert now.info == version_info()
    assert now.fingerprint == fingerprint()  # nothing changes between two looks
    assert read_installed() == now  # a fresh interpreter reads the same


def test_the_file_knob_stands_for_the_installation_and_any_change_to_it_is_an_upgrade(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
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
def test_a_damaged_file_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, content: str) -> None:
    path = tmp_path / "installed.json"
    path.write_text(content)
    monkeypatch.setenv(ENV_INSTALLED_FILE, str(path))
    with pytest.raises(BeeError, match=ENV_INSTALLED_FILE):
        read_installed()


def test_the_fingerprint_watches_every_bee_distribution_record() -> None:
    from bee_supervisor.installed import _distribution_records

    records = _distribution_records()
    assert {path.parent.name.split("-")[0] for path in records} >= {"bee_contracts", "bee_supervisor", "bee_tracker"}
    assert {path.name for path in records} == {"METADATA", "RECORD"}
    assert all(path.is_file() for path in records)


def test_a_rewritten_record_or_contracts_file_changes_the_fingerprint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """On copies: the installed files are shared with every process of this environment and are left alone."""
    import os
    import shutil

    import bee_contracts
    from bee_supervisor import installed

    package = shutil.copytree(Path(bee_contracts.__file__).parent, tmp_path / "bee_contracts")
    record = tmp_path / "bee_tracker-0.1.0.dist-info" / "RECORD"
    record.parent.mkdir()
    record.write_text("bee_tracker/__init__.py,,\n")
    monkeypatch.delenv(ENV_INSTALLED_FILE, raising=False)
    monkeypatch.setattr(bee_contracts, "__file__", str(package / "__init__.py"))
    monkeypatch.setattr(installed, "_distribution_records", lambda: [record])
    for path in (record, package / "_version.py", package / "catalogs" / "tracker" / "claim.json"):
        before, stat = fingerprint(), path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        assert fingerprint() != before, path
    before = fingerprint()
    (package / "catalogs" / "tracker" / "new_tool.json").write_text("{}")
    assert fingerprint() != before  # a file added
    before = fingerprint()
    shutil.rmtree(record.parent)
    assert fingerprint() != before  # an upgrade renames the .dist-info folder: the old record is gone
