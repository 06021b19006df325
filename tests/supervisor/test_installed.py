"""What is installed: the fingerprint that notices an upgrade, and the file that can stand for the installation."""

import json
from pathlib import Path

import pytest

from bee_contracts import BeeError, version_info
from bee_contracts.installation import ENV_INSTALLED_FILE, fingerprint, served_files, stat_fingerprint
from bee_supervisor.installed import current_installed, read_installed, sources_digest


def test_the_installed_version_is_the_contracts_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_INSTALLED_FILE, raising=False)
    now = current_installed()
    assert now.info == version_info()
    assert now.fingerprint == fingerprint()  # nothing changes between two looks
    assert read_installed() == now  # a fresh interpreter reads the same


def test_the_file_knob_stands_for_the_installation_and_only_a_change_of_what_it_says_is_an_upgrade(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "installed.json"
    path.write_text(json.dumps(version_info()))
    monkeypatch.setenv(ENV_INSTALLED_FILE, str(path))
    before = read_installed()
    assert before.info == version_info() and before.sources is None
    path.write_text(json.dumps(version_info(), indent=2))  # new bytes, the same installation
    same = read_installed()
    assert same.fingerprint != before.fingerprint and same.serves_as(before)
    path.write_text(json.dumps({**version_info(), "build": 2}))  # the same triple, other sources (editable)
    edited = read_installed()
    assert edited.info == before.info and not edited.serves_as(before)
    assert edited.change_from(before) == "the sources of an editable install"
    path.write_text(json.dumps({**version_info(), "version": "0.2.0"}))
    upgraded = read_installed()
    assert upgraded.info["version"] == "0.2.0" and upgraded.change_from(before) == "a new version"


@pytest.mark.parametrize("content", ["not json", json.dumps({"version": "1"})])
def test_a_damaged_file_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, content: str) -> None:
    path = tmp_path / "installed.json"
    path.write_text(content)
    monkeypatch.setenv(ENV_INSTALLED_FILE, str(path))
    with pytest.raises(BeeError, match=ENV_INSTALLED_FILE):
        read_installed()


def test_the_fingerprint_watches_every_bee_distribution_record_and_package() -> None:
    from bee_contracts.installation import distribution_records, package_folders

    records = distribution_records()
    assert {path.parent.name.split("-")[0] for path in records} >= {"bee_contracts", "bee_supervisor", "bee_tracker"}
    assert {path.name for path in records} == {"METADATA", "RECORD"}
    assert all(path.is_file() for path in records)
    assert {folder.name for folder in package_folders()} >= {"bee_contracts", "bee_core", "bee_tracker"}


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A copy of an installed package (the installed files are shared with every process here and left alone)."""
    import shutil

    import bee_contracts

    return Path(shutil.copytree(Path(bee_contracts.__file__).parent, tmp_path / "bee_contracts"))


def test_what_an_ordinary_run_writes_is_never_a_change(package: Path) -> None:
    before_stat, before_sources = stat_fingerprint(served_files([package])), sources_digest([package])
    # A first import writes bytecode beside the sources; tools and editors leave hidden files and backups.
    (package / "__pycache__").mkdir(exist_ok=True)
    (package / "__pycache__" / "warm.cpython-311.pyc").write_bytes(b"\x00" * 64)
    (package / "catalogs" / "__pycache__").mkdir()
    (package / "stray.pyc").write_bytes(b"\x00")
    (package / ".mypy_cache").mkdir()
    (package / ".mypy_cache" / "x.json").write_text("{}")
    (package / ".warm.py.swp").write_text("x")
    (package / "warm.py~").write_text("x")
    assert stat_fingerprint(served_files([package])) == before_stat
    assert sources_digest([package]) == before_sources


def test_a_touched_file_is_looked_at_but_only_new_content_counts(package: Path) -> None:
    import os

    target = package / "catalogs" / "tracker" / "claim.json"
    before_stat, before_sources = stat_fingerprint(served_files([package])), sources_digest([package])
    info = target.stat()
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    assert stat_fingerprint(served_files([package])) != before_stat  # looked at again
    assert sources_digest([package]) == before_sources  # the same content: the same installation
    target.write_text(target.read_text() + " ")
    assert sources_digest([package]) != before_sources
    before_sources = sources_digest([package])
    (package / "catalogs" / "tracker" / "new_tool.json").write_text("{}")
    assert sources_digest([package]) != before_sources  # a file added
    before_sources = sources_digest([package])
    (package / "catalogs" / "tracker" / "new_tool.json").unlink()
    assert sources_digest([package]) != before_sources  # and removed


def test_a_rewritten_record_changes_the_fingerprint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An install rewrites a distribution's RECORD, and an upgrade renames its folder."""
    import os
    import shutil

    from bee_contracts import installation

    record = tmp_path / "bee_tracker-0.1.0.dist-info" / "RECORD"
    record.parent.mkdir()
    record.write_text("bee_tracker/__init__.py,,\n")
    monkeypatch.delenv(ENV_INSTALLED_FILE, raising=False)
    monkeypatch.setattr(installation, "package_folders", lambda **_: [])
    monkeypatch.setattr(installation, "distribution_records", lambda: [record])
    before, info = fingerprint(), record.stat()
    os.utime(record, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    assert fingerprint() != before
    before = fingerprint()
    shutil.rmtree(record.parent)
    assert fingerprint() != before
