from collections.abc import Iterator

import pytest

from bee_tracker.store import SqlStore, open_store


@pytest.fixture
def store(store_url: str) -> Iterator[SqlStore]:
    opened = open_store(store_url, prefix="t")
    yield opened
    opened.close()
