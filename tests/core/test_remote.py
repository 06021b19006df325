"""bee_core.remote: the one MCP client session, its one failure mapping and its one token reader.

The mapping is driven with what the SDK client and httpx2 raise and answer; the session is opened against a real
HTTP server on loopback that answers every request with one canned response.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from bee_contracts import BeeError, ErrorCode
from bee_contracts.limits import REMOTE_ANSWER_MAX_BYTES
from bee_core.remote import MAX_TOKEN_FILE_BYTES, Exchange, Server, TokenSource, session
from bee_hostkit import Deadline

URL = "http://127.0.0.1:9/mcp"
SERVER = Server(
    URL,
    f"the server at {URL}",
    details={"server": URL},
    token_from="$SERVER_TOKEN",
    refusal_remedy="mint a new one",
)


def answered(exchange: Exchange, status: int, body: Any = None, *, method: str = "POST") -> None:
    """``exchange`` saw the server answer one request with ``status`` and ``body`` (JSON, or bytes as given)."""
    content = body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else b""
    response = httpx2.Response(status, content=content, request=httpx2.Request(method, URL))
    anyio.run(exchange.note, response)


def stand_in() -> MCPError:
    """What the SDK client raises for an HTTP refusal without a JSON-RPC body."""
    return MCPError(code=types.INTERNAL_ERROR, message="Server returned an error response")


@pytest.mark.parametrize(
    ("status", "code", "words"),
    [
        (401, ErrorCode.UNAUTHORIZED, "refused the token from $SERVER_TOKEN (HTTP 401: token expired); mint a new one"),
        (403, ErrorCode.FORBIDDEN, "refused this request (HTTP 403: token expired)"),
        (429, ErrorCode.BUSY, "is at its limit of requests in flight (HTTP 429: token expired); retry shortly"),
        (503, ErrorCode.BUSY, "is at its limit of requests in flight (HTTP 503: token expired); retry shortly"),
        (404, ErrorCode.UNAVAILABLE, "answered HTTP 404: token expired; check the URL names its MCP endpoint"),
        (500, ErrorCode.UNAVAILABLE, "answered HTTP 500: token expired; check the URL names its MCP endpoint"),
    ],
)
def test_a_refusal_maps_by_its_status_naming_the_server_and_its_reason(
    status: int, code: ErrorCode, words: str
) -> None:
    exchange = Exchange(SERVER, 10.0)
    answered(exchange, status, {"error": "invalid_token", "error_description": "token expired"})
    error = exchange.failure(ExceptionGroup("task group", [stand_in()]))
    assert error.code is code and error.message.startswith(f"the server at {URL} {words}")
    assert error.retryable is (code in (ErrorCode.BUSY, ErrorCode.UNAVAILABLE))
    assert error.details is not None and error.details["server"] == URL and error.details["status"] == status
    if code is ErrorCode.BUSY:
        assert error.details["retryAfterSeconds"] == 1


def test_a_refusal_without_a_token_or_a_readable_reason_says_so() -> None:
    exchange = Exchange(Server(URL, "the server"), 10.0)
    answered(exchange, 401, b"<html>nope</html>")
    assert exchange.failure(stand_in()).message == "the server refused a request without a token (HTTP 401)"


def test_only_a_refusal_of_the_latest_request_explains_a_failure() -> None:
    exchange = Exchange(SERVER, 10.0)
    answered(exchange, 400, {"error": "bad"})  # e.g. a legacy server refusing the server/discover probe
    answered(exchange, 200, {})  # … and answering the handshake that followed
    error = exchange.failure(httpx2.ReadTimeout("timed out"))
    assert error.code is ErrorCode.UNAVAILABLE and "did not answer within 9 seconds" in error.message


def test_a_refused_get_stream_and_a_json_rpc_error_body_are_not_refusals() -> None:
    exchange = Exchange(SERVER, 10.0)
    answered(exchange, 405, {"error": "no stream"}, method="GET")
    assert exchange.refusal is None
    answered(exchange, 404, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no such method"}})
    assert exchange.refusal is None  # an answer: the SDK raises it as the MCPError it is
    error = exchange.failure(MCPError(code=types.METHOD_NOT_FOUND, message="no such method"))
    assert error.code is ErrorCode.UNAVAILABLE and "answered with an error (no such method)" in error.message


def test_running_out_of_the_callers_deadline_is_deadline_exceeded() -> None:
    error = Exchange(SERVER, Deadline(3)).failure(ExceptionGroup("task group", [TimeoutError()]))
    assert (error.code, error.retryable) == (ErrorCode.DEADLINE_EXCEEDED, True)
    assert error.message == (
        f"the server at {URL} did not finish answering within the call's 3-second deadline; nothing partial was "
        "delivered"
    )


def test_running_out_of_the_servers_own_time_limit_is_unavailable() -> None:
    error = Exchange(SERVER, 2.0).failure(TimeoutError())
    assert (error.code, error.retryable) == (ErrorCode.UNAVAILABLE, True)
    assert error.message == f"the server at {URL} did not answer within 2 seconds; retry later"


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [(60.0, "did not answer within 10 seconds"), (2.0, "did not answer within 1.8 seconds")],
)
def test_one_request_without_an_answer_is_unavailable_before_the_whole_bound(seconds: float, expected: str) -> None:
    exchange = Exchange(SERVER, seconds)
    for silent in (httpx2.ReadTimeout("timed out"), MCPError(code=types.REQUEST_TIMEOUT, message="timed out")):
        error = exchange.failure(silent)
        assert (error.code, error.retryable) == (ErrorCode.UNAVAILABLE, True) and expected in error.message


def test_a_server_that_cannot_be_reached_is_unavailable_and_says_why() -> None:
    error = Exchange(SERVER, 10.0).failure(httpx2.ConnectError("[Errno 111] Connection refused"))
    assert (error.code, error.retryable) == (ErrorCode.UNAVAILABLE, True)
    assert error.message == (
        f"the server at {URL} cannot be reached (ConnectError: [Errno 111] Connection refused); check that it is "
        "running, then retry"
    )
    assert error.details == {"server": URL}


def test_exception_groups_are_flattened_and_a_bee_error_inside_them_wins() -> None:
    mine = BeeError(ErrorCode.NOT_FOUND, "no such thing")
    nested = ExceptionGroup("outer", [ExceptionGroup("inner", [httpx2.ConnectError("refused")]), mine])
    exchange = Exchange(SERVER, 10.0)
    answered(exchange, 401, {})
    assert exchange.failure(nested) is mine  # the caller's own error, even over a refusal


def test_a_stopped_exchange_is_its_outcome_whatever_else_failed_after() -> None:
    exchange = Exchange(SERVER, Deadline(10))
    too_large = exchange.stop(exchange.too_large())
    assert too_large.code is ErrorCode.RESULT_TOO_LARGE and too_large.details == {
        "server": URL,
        "limitBytes": REMOTE_ANSWER_MAX_BYTES,
    }
    # What the SDK makes of a cut-off answer (a closed stream, a cancelled wait, the deadline) never replaces it.
    closed = MCPError(code=types.CONNECTION_CLOSED, message="SSE stream ended without a response")
    assert exchange.failure(ExceptionGroup("g", [closed, httpx2.ReadError("reset"), TimeoutError()])) is too_large
    assert exchange.stop(BeeError(ErrorCode.UNSUPPORTED, "later")) is too_large  # the first outcome stays


def test_the_callers_reading_of_an_answer_comes_before_the_generic_one() -> None:
    unsupported = BeeError(ErrorCode.UNSUPPORTED, "not MCP")
    reading = Exchange(SERVER, 10.0, lambda leaf: unsupported if isinstance(leaf, ValueError) else None)
    assert reading.failure(ExceptionGroup("g", [ValueError("garbage")])) is unsupported
    generic = Exchange(SERVER, 10.0).failure(ValueError("garbage"))
    assert generic.code is ErrorCode.UNAVAILABLE
    assert "did not answer as an MCP server (ValueError)" in generic.message
    # Transport failures come first: a reading of answers never hides an unreachable server.
    assert reading.failure(ExceptionGroup("g", [ValueError(), httpx2.ConnectError("x")])).code is ErrorCode.UNAVAILABLE


class _Canned(BaseHTTPRequestHandler):
    """Answers every request with the server's canned response, remembering the Authorization headers it saw."""

    server: _CannedServer

    def do_POST(self) -> None:
        self.server.authorizations.append(self.headers.get("Authorization"))
        self.server.encodings.append(self.headers.get("Accept-Encoding"))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status, body = self.server.answer
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _CannedServer(ThreadingHTTPServer):
    def __init__(self, answer: tuple[int, bytes]) -> None:
        super().__init__(("127.0.0.1", 0), _Canned)
        self.answer = answer
        self.authorizations: list[str | None] = []
        self.encodings: list[str | None] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/mcp"


@pytest.fixture
def busy() -> Iterator[_CannedServer]:
    server = _CannedServer((503, json.dumps({"error": "at the limit of 1 requests in flight"}).encode()))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


@pytest.mark.parametrize("mode", ["auto", "2026-07-28"])
def test_a_session_sends_the_token_and_maps_a_refusal(busy: _CannedServer, mode: str) -> None:
    async def open_session(token: str | None) -> None:
        async with session(Server(busy.url, "the busy server"), token, within=Deadline(10), mode=mode) as client:
            await client.list_tools()  # the first request of a 2026-07-28 session; "auto" probes before it

    for token in ("abc.def.ghi", None):
        with pytest.raises(BeeError) as caught:
            anyio.run(open_session, token)
        assert caught.value.code is ErrorCode.BUSY
        assert caught.value.message.startswith("the busy server is at its limit of requests in flight (HTTP 503")
    assert set(busy.authorizations) == {"Bearer abc.def.ghi", None}  # never a header without a token
    assert set(busy.encodings) == {"identity"}  # the byte cap counts what is parsed: nothing arrives compressed


TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJl"


def private(path: Path, content: bytes) -> Path:
    """``content`` in a file only its owner may read, as a token file must be."""
    path.write_bytes(content)
    path.chmod(0o600)
    return path


def test_a_token_is_read_again_on_every_use_whitespace_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token_file = private(tmp_path / "token", f"  {TOKEN}\n".encode())
    source = TokenSource(file=token_file)
    assert source.read() == TOKEN and source.where == str(token_file)
    token_file.write_text("rotated\n")
    assert source.read() == "rotated"
    monkeypatch.setenv("SOME_TOKEN", f"{TOKEN} ")
    assert TokenSource(env="SOME_TOKEN").read() == TOKEN and TokenSource(env="SOME_TOKEN").where == "$SOME_TOKEN"
    token_file.write_text("x" * MAX_TOKEN_FILE_BYTES)
    assert len(source.read()) == MAX_TOKEN_FILE_BYTES  # the bound itself is still a token


def test_a_token_source_is_a_file_or_a_variable() -> None:
    for wrong in ({}, {"file": Path("/t"), "env": "T"}):
        with pytest.raises(ValueError, match="a file or an environment variable"):
            TokenSource(**cast(dict[str, Any], wrong))


def unusable(source: TokenSource) -> BeeError:
    with pytest.raises(BeeError) as caught:
        source.read()
    assert caught.value.code is ErrorCode.UNAUTHORIZED
    return caught.value


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "cannot read its token file {file} (No such file or directory)"),
        (b"", "cannot use its token file {file}: it does not hold a bearer token"),
        (b"two words", "cannot use its token file {file}: it does not hold a bearer token"),
        (b"line\nbreak", "cannot use its token file {file}: it does not hold a bearer token"),
        ("tök".encode(), "cannot use its token file {file}: it does not hold a bearer token"),
        (b"\xff\xfe", "cannot use its token file {file}: it does not hold a bearer token"),
        (b"x" * (MAX_TOKEN_FILE_BYTES + 1), "cannot use its token file {file}: it holds more than a token"),
    ],
)
def test_an_unusable_token_file_is_unauthorized_naming_owner_file_and_remedy(
    tmp_path: Path, content: bytes | None, problem: str
) -> None:
    token_file = tmp_path / "token"
    if content is not None:
        private(token_file, content)
    source = TokenSource(file=token_file, owner="provider 'p'", whose="its", remedy="write it", details={"p": 1})
    error = unusable(source)
    assert error.message.startswith(f"provider 'p' {problem.format(file=token_file)}")
    assert error.message.endswith("; write it") and error.details == {"p": 1}
    if content:
        assert content.decode("utf-8", "replace") not in error.message  # what the file holds is never echoed


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602, 0o610])
def test_a_token_file_others_may_read_or_write_is_refused_saying_chmod_600(tmp_path: Path, mode: int) -> None:
    token_file = private(tmp_path / "token", TOKEN.encode())
    token_file.chmod(mode)
    error = unusable(TokenSource(file=token_file, whose="its"))
    assert error.message == (
        f"Bee refuses its token file {token_file}: group or others may read or write it (mode {mode:04o}); "
        f"chmod 600 {token_file}"
    )
    assert TOKEN not in error.message
    token_file.chmod(0o600)
    assert TokenSource(file=token_file).read() == TOKEN  # once private, the same file is read


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_token_file_of_another_user_is_refused_even_when_private(tmp_path: Path) -> None:
    token_file = private(tmp_path / "token", TOKEN.encode())
    os.chown(token_file, 65534, 65534)
    error = unusable(TokenSource(file=token_file))
    assert f"refuses the token file {token_file}: it is owned by uid 65534, not by you (uid 0)" in error.message


def test_a_token_file_that_is_not_a_regular_file_or_not_absolute_is_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)  # opened for reading it would block until a writer came: the call must not wait
    answers: list[BeeError] = []
    reader = threading.Thread(target=lambda: answers.append(unusable(TokenSource(file=fifo))), daemon=True)
    reader.start()
    reader.join(timeout=30)  # a give-up guard: a blocked open fails here instead of hanging the suite
    assert answers and "it is not a regular file" in answers[0].message
    assert "it is not a regular file" in unusable(TokenSource(file=tmp_path)).message
    relative = unusable(TokenSource(file=Path("token")))
    assert "a token file must be named by its absolute path" in relative.message


def test_a_symlink_to_a_private_token_file_is_judged_by_the_file_it_opens(tmp_path: Path) -> None:
    token_file = private(tmp_path / "token", TOKEN.encode())
    link = tmp_path / "link"
    link.symlink_to(token_file)
    assert TokenSource(file=link).read() == TOKEN
    token_file.chmod(0o644)  # the open file is what is checked, not the link's own bits
    assert "chmod 600" in unusable(TokenSource(file=link)).message


def test_an_unset_or_unusable_variable_is_unauthorized(monkeypatch: pytest.MonkeyPatch) -> None:
    source = TokenSource(env="SOME_TOKEN", whose="the tracker", remedy="set it")
    monkeypatch.delenv("SOME_TOKEN", raising=False)
    assert unusable(source).message == (
        "Bee takes the tracker token from $SOME_TOKEN, which is not set where Bee runs; set it"
    )
    monkeypatch.setenv("SOME_TOKEN", "  ")
    assert "which is not set" in unusable(source).message
    monkeypatch.setenv("SOME_TOKEN", "secret words")
    error = unusable(source)
    assert "cannot use the tracker token in $SOME_TOKEN: it does not hold a bearer token" in error.message
    assert "secret" not in error.message and error.details is None
