import pytest

from bee_tracker.store import open_store


@pytest.fixture
def store(store_url: str):
    opened = open_store(store_url, prefix="t")
    yield opened
    opened.close()
