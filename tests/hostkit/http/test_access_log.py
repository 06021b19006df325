"""The access log's request lines keep the path and hide every query string and anything shaped like a token."""

import logging

import pytest

from bee_hostkit.http.access_log import QUERY_HIDDEN, TOKEN_HIDDEN, HideQueries, hide_queries, logged_target

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJl"


def access_record(target: object) -> logging.LogRecord:
    """A record exactly as uvicorn's protocol (and the edge's refusals) log a request line."""
    args = ("127.0.0.1:5000", "GET", target, "1.1", 200)
    return logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d', args, None)


@pytest.mark.parametrize(
    ("target", "logged"),
    [
        (f"/board/link?token={JWT}", f"/board/link{QUERY_HIDDEN}"),
        ("/board/search?q=private+task+words", f"/board/search{QUERY_HIDDEN}"),
        ("/board/?", f"/board/{QUERY_HIDDEN}"),
        (f"/board/link/{JWT}", f"/board/link/{TOKEN_HIDDEN}"),
        (f"/board/link%3Ftoken%3D{JWT}x", f"/board/link%3Ftoken%3D{TOKEN_HIDDEN}"),
        ("/board/issues/t-1", "/board/issues/t-1"),
        ("/mcp", "/mcp"),
    ],
)
def test_a_request_line_shows_its_path_without_query_or_token(target: str, logged: str) -> None:
    assert logged_target(target) == logged
    record = access_record(target)
    assert HideQueries().filter(record) is True
    assert record.getMessage() == f'127.0.0.1:5000 - "GET {logged} HTTP/1.1" 200'


def test_other_records_pass_unchanged_and_the_filter_is_installed_once() -> None:
    other = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, "%s", ("x?y",), None)
    assert HideQueries().filter(other) and other.getMessage() == "x?y"
    assert HideQueries().filter(access_record(None)) and isinstance(args := access_record(None).args, tuple)
    assert args[2] is None
    logger = logging.getLogger("tests.access_log")
    hide_queries(logger)
    hide_queries(logger)
    assert sum(isinstance(f, HideQueries) for f in logger.filters) == 1
