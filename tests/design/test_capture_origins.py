"""Which URLs share an origin for `bee design capture` (scheme, host, port; the scheme's default port filled in)."""

import pytest

from bee_design.capture.navigation import origin


@pytest.mark.parametrize(
    ("given", "other"),
    [
        ("http://127.0.0.1:8000/a", "http://127.0.0.1:8000/b?x#y"),
        ("http://Example.org/", "http://example.org:80/other"),
        ("https://example.org/", "https://example.org:443/"),
        ("file:///srv/site/index.html", "file:///srv/other/page.html"),
    ],
)
def test_urls_of_one_origin(given: str, other: str) -> None:
    assert origin(given) == origin(other)


@pytest.mark.parametrize(
    ("given", "other"),
    [
        ("http://127.0.0.1:8000/", "http://127.0.0.1:8001/"),  # another port
        ("http://example.org/", "https://example.org/"),  # another scheme
        ("http://example.org/", "http://www.example.org/"),  # another host
        ("http://localhost:8000/", "http://127.0.0.1:8000/"),  # the same machine by another name
        ("http://example.org/", "about:blank"),
        ("http://example.org/", "data:text/html,hi"),
        ("file:///srv/index.html", "http://127.0.0.1/"),
        ("http://example.org/", "http://example.org:99999/"),  # a port that does not parse matches nothing
    ],
)
def test_urls_of_another_origin(given: str, other: str) -> None:
    assert origin(given) != origin(other)
