"""A one-time sign-in link's token never reaches the access log of a real `bee tracker serve --access-log`, however
the link's address is spelled, and the link signs in once."""

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from bee_hostkit.http.access_log import QUERY_HIDDEN, TOKEN_HIDDEN
from tests.harness.raw_http import RawConnection
from tests.harness.tracker import TrackerProcess

pytestmark = pytest.mark.e2e


def link_token(server: TrackerProcess) -> str:
    """A link from `bee tracker open`, exactly as a person gets one; its token."""
    opened = subprocess.run(
        [
            str(Path(sys.executable).parent / "bee"),
            "tracker",
            "open",
            "--home",
            str(server.home),
            "--actor",
            "ann@x.io",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    [token] = parse_qs(urlsplit(opened.stdout.strip()).query)["token"]
    return token


def get(server: TrackerProcess, target: str) -> int:
    """The status of a GET of ``target``, sent byte for byte as written (no client normalises it)."""
    with RawConnection(server.port) as connection:
        request = f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nConnection: close\r\n\r\n"
        connection.send(request.encode("ascii"))
        response = connection.response()
    assert response is not None, target
    return response.status


def test_no_spelling_of_a_links_address_writes_its_token_to_the_access_log(
    tracker_factory: Callable[..., TrackerProcess],
) -> None:
    server = tracker_factory(None, "--access-log")
    token = link_token(server)
    variants = [
        "/board/link?token={}",
        "/board//link?token={}",
        "/board/link/?token={}",
        "/board/link?next=%2Fboard%2F&token={}",
        "/board/link?TOKEN={}",
        "/board%2Flink?token={}",
        "/board/%6Cink?token={}",
        "/BOARD/LINK?token={}",
        "/board/link%3Ftoken={}",
        "/board/link/{}",
        "/board/link;token={}",
        "/mcp?token={}",
        "/board/signin?next=/board/link%3Ftoken%3D{}",
    ]
    statuses = {variant: get(server, variant.format(token)) for variant in variants}
    assert statuses["/board/link?token={}"] == 303, statuses  # the link itself signs in, once
    assert 500 not in statuses.values(), statuses
    server.stop()
    log = server.log.read_text()
    _, payload, signature = token.split(".")
    for part in (token, payload, signature):
        assert part not in log
    assert f'"GET /board/link{QUERY_HIDDEN} HTTP/1.1" 303' in log
    assert f'"GET /board/link/{TOKEN_HIDDEN} HTTP/1.1"' in log
    assert log.count(QUERY_HIDDEN) >= len(variants) - 3  # each request was logged, with its query hidden


def test_a_link_signs_in_once_whichever_spelling_reaches_it(tracker_factory: Callable[..., TrackerProcess]) -> None:
    server = tracker_factory()
    token = link_token(server)
    assert get(server, f"/board/link?token={token}") == 303
    for again in (f"/board/link?token={token}", f"/board%2Flink?token={token}"):
        assert get(server, again) == 401  # already used
