from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from bee_tracker.store import SqlStore, open_store
from tests.board.helpers import client


@pytest.fixture
def store(store_url: str) -> Iterator[SqlStore]:
    opened = open_store(store_url, prefix="t")
    yield opened
    opened.close()


@pytest.fixture
def lite(tmp_path: Path) -> Iterator[SqlStore]:
    """A SQLite store, for the tests whose subject is the board rather than the store."""
    opened = open_store(str(tmp_path / "tracker.db"), prefix="t")
    yield opened
    opened.close()


@pytest.fixture
def web(lite: SqlStore, tmp_path: Path) -> Iterator[TestClient]:
    with client(lite, tmp_path) as test_client:
        yield test_client
