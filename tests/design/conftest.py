from pathlib import Path

import pytest

from bee_design.bundle.manifest import Manifest
from tests.design.helpers import import_shop, make_root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty checkout with a little source (resolved, as the host resolves its root)."""
    target = tmp_path / "checkout"
    target.mkdir()
    return make_root(target.resolve())


@pytest.fixture
def shop(root: Path) -> Manifest:
    """The fixture bundle imported into ``root`` as ``shop``."""
    return import_shop(root)
