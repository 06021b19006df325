"""Fixtures of the `bee setup-mcp` tests: the host registry they see, a project folder and a home folder."""

from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from bee_contracts import hosts as registry

CORE_AND_TRACKER = [
    EntryPoint(name="core", value="bee_core.registry:CORE", group=registry.ENTRY_POINT_GROUP),
    EntryPoint(name="tracker", value="bee_tracker.registry:TRACKER", group=registry.ENTRY_POINT_GROUP),
]


@pytest.fixture
def hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry these tests see: core and tracker, whatever else happens to be installed."""
    monkeypatch.setattr(registry, "entry_points", lambda group: list(CORE_AND_TRACKER))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("BEE_TRACKER_URL", raising=False)
    monkeypatch.delenv("BEE_TRACKER_TOKEN", raising=False)
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    return folder
