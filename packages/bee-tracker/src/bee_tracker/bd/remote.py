"""`bee bd --url …`: the tracker's tools over MCP Streamable HTTP, as the bearer of a token, for a command line.

One MCP client session (the official SDK's, speaking 2026-07-28: one HTTP request per call, no handshake) is kept
open for the whole command on an event loop of its own (an anyio blocking portal), so that the command's many calls
share one connection. The token is read once per command from ``--token-file`` (which must be the user's own and
private, as every Bee token file) or ``$BEE_TRACKER_TOKEN``; it is sent only to the URL the user named and never
printed. Every answer is read under :data:`~bee_contracts.limits.REMOTE_ANSWER_MAX_BYTES`, bodies uncompressed.

Failures become :class:`~bee_contracts.BeeError`: the tracker's tool errors keep their code and message; its HTTP
edge refusing a request is ``unauthorized`` (401), ``forbidden`` (403), ``busy`` (429, 503) or ``unavailable``; a
tracker that cannot be reached or stays silent is ``unavailable``; a write sent and never answered says it may or
may not have been made (``outcome_unknown``).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client
from mcp.client.caching import CacheConfig
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from bee_contracts import BeeError, ErrorCode
from bee_contracts.errors import from_envelope
from bee_contracts.limits import REMOTE_ANSWER_MAX_BYTES
from bee_hostkit.capped import CappedBody
from bee_hostkit.exchange import Unchanged, edge_refusal, exception_leaves

#: Where the token comes from without ``--token-file`` (the variable every Bee client of the tracker reads).
ENV_TOKEN = "BEE_TRACKER_TOKEN"  # noqa: S105 -- the variable's name, not a secret
#: The protocol spoken: one request per call, no handshake (the tracker serves both eras).
PROTOCOL = "2026-07-28"
#: The longest the tracker may be silent while a call waits for its answer's next bytes.
REQUEST_TIMEOUT_SECONDS = 30.0
#: The longest opening a connection may take.
CONNECT_TIMEOUT_SECONDS = 5.0
#: A token file larger than this is not a token.
MAX_TOKEN_FILE_BYTES = 64 * 1024
#: How long one listing of the tools serves the client's checks of results (a command's length, at most).
LISTING_TTL_MS = 10 * 60 * 1000
#: Calls of one read tool sent at once by :meth:`RemoteTracker.each` (well under any tracker's share per client).
IN_FLIGHT = 4


def read_token(token_file: Path | None) -> str:
    """The bearer token: the content of ``token_file``, else ``$BEE_TRACKER_TOKEN``.

    Raises:
        BeeError: ``unauthorized`` when there is none, when the file is not an absolute path, cannot be read, is not
            a regular file, is not the user's own, may be read or written by group or others, or is too large, or
            when the text is not a bearer token (one line of visible ASCII).
    """
    if token_file is None:
        text = os.environ.get(ENV_TOKEN, "").strip()
        where = f"${ENV_TOKEN}"
        if not text:
            raise _unauthorized(f"no token: give --token-file FILE or set ${ENV_TOKEN}")
    else:
        where = f"the token file {token_file}"
        text = _read_private(token_file).decode("utf-8", errors="replace").strip()
    if not text or not all("!" <= ch <= "~" for ch in text):
        raise _unauthorized(f"{where} does not hold a bearer token (one line of visible ASCII, no spaces)")
    return text


def _read_private(path: Path) -> bytes:
    """The bytes of a token file, after checking on the open file that it is the user's own and private."""
    if not path.is_absolute():
        raise _unauthorized(f"name the token file by its absolute path, not {path}")
    try:  # non-blocking, so that a FIFO in its place fails the check instead of hanging the command
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise _unauthorized(f"cannot read the token file {path} ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _unauthorized(f"the token file {path} is not a regular file")
        if info.st_uid != os.geteuid():
            raise _unauthorized(f"the token file {path} is not yours (owned by uid {info.st_uid})")
        if info.st_mode & 0o077:
            raise _unauthorized(f"group or others may read or write the token file {path}; chmod 600 {path}")
        raw = os.read(fd, MAX_TOKEN_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_TOKEN_FILE_BYTES:
        raise _unauthorized(f"the token file {path} holds more than a token (over {MAX_TOKEN_FILE_BYTES} bytes)")
    return raw


def _unauthorized(problem: str) -> BeeError:
    return BeeError(ErrorCode.UNAUTHORIZED, f"bee bd cannot use a token: {problem}")


class _Exchange:
    """What the tracker's HTTP edge answered last, the byte cap on its bodies, and the one mapping of failures."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.refusal: tuple[int, str] | None = None
        self.too_large = False
        #: What failed a request on its way (a refused connection, a timeout): the SDK reports only that the
        #: session ended, from a task of its own.
        self.broken: Exception | None = None

    async def cap(self, response: httpx2.Response) -> None:
        """Read this response's body under the cap; refuse a compressed one (its size says nothing)."""
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity"):
            await response.aclose()
            raise BeeError(ErrorCode.UNSUPPORTED, f"the tracker at {self.url} answered with a compressed body")
        assert isinstance(response.stream, httpx2.AsyncByteStream)  # an AsyncClient's bodies always are
        response.stream = CappedBody(response.stream, self._too_large)

    def _too_large(self) -> BeeError:
        self.too_large = True
        return BeeError(ErrorCode.RESULT_TOO_LARGE, "answer over the byte cap")

    async def note(self, response: httpx2.Response) -> None:
        """Remember whether the edge refused this request (the SDK only says an error response came)."""
        refusal = await edge_refusal(response)
        if not isinstance(refusal, Unchanged):
            self.refusal = refusal

    def failure(self, exc: BaseException, tool: str, writes: bool) -> BeeError:
        """``exc`` (often an exception group of the client's tasks) as the one BeeError it means."""
        leaves = exception_leaves(exc)
        for leaf in leaves:
            if isinstance(leaf, BeeError):
                return leaf
        if self.too_large:
            return BeeError(
                ErrorCode.RESULT_TOO_LARGE,
                f"the tracker at {self.url} sent an answer of more than {REMOTE_ANSWER_MAX_BYTES} bytes; Bee stopped "
                "reading it",
            )
        if self.refusal is not None:
            return self._refused(*self.refusal)
        if self.broken is not None:
            leaves = [self.broken, *leaves]
        for leaf in leaves:
            if isinstance(leaf, MCPError) and leaf.error.code == types.INVALID_PARAMS:
                return BeeError(ErrorCode.UNSUPPORTED, f"the tracker at {self.url} does not serve {tool}; upgrade it")
        error = self._unreachable(leaves)
        if writes:
            return BeeError(
                error.code,
                f"{error.message}. The {tool} was sent but not answered, so it may or may not have been made: look "
                "before you retry",
                retryable=True,
                outcome_unknown=True,
            )
        return error

    def _unreachable(self, leaves: Sequence[BaseException]) -> BeeError:
        for leaf in leaves:
            if isinstance(leaf, httpx2.TimeoutException | TimeoutError):
                return BeeError(
                    ErrorCode.UNAVAILABLE,
                    f"the tracker at {self.url} did not answer within {REQUEST_TIMEOUT_SECONDS:g} seconds; retry",
                    retryable=True,
                )
            if isinstance(leaf, httpx2.TransportError | OSError):
                return BeeError(
                    ErrorCode.UNAVAILABLE,
                    f"the tracker at {self.url} cannot be reached ({type(leaf).__name__}); check that it is running "
                    "and that the URL names its /mcp endpoint",
                    retryable=True,
                )
        return BeeError(
            ErrorCode.UNAVAILABLE,
            f"the tracker at {self.url} did not answer as an MCP server ({type(leaves[0]).__name__}); check that "
            "the URL names its /mcp endpoint",
            retryable=True,
        )

    def _refused(self, status: int, reason: str) -> BeeError:
        said = f"HTTP {status}: {reason}" if reason else f"HTTP {status}"
        if status == 401:
            return BeeError(
                ErrorCode.UNAUTHORIZED,
                f"the tracker at {self.url} refused the token ({said}); get a fresh one (for a local tracker "
                "`bee tracker token --actor YOU`)",
            )
        if status == 403:
            return BeeError(ErrorCode.FORBIDDEN, f"the tracker at {self.url} refused this request ({said})")
        if status in (429, 503):
            return BeeError(
                ErrorCode.BUSY, f"the tracker at {self.url} is busy ({said}); retry shortly", retryable=True
            )
        return BeeError(
            ErrorCode.UNAVAILABLE, f"the tracker at {self.url} answered {said}; check the URL names its /mcp endpoint"
        )


class _Watched(httpx2.AsyncBaseTransport):
    """The HTTP transport, noting what fails a request on its way for :meth:`_Exchange.failure`."""

    def __init__(self, exchange: _Exchange) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._exchange = exchange

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return await self._inner.handle_async_request(request)
        except Exception as exc:
            self._exchange.broken = exc
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


def _tool_error(tool: str, result: types.CallToolResult) -> BeeError:
    """The tracker's error envelope as a BeeError, its code, message and details kept."""
    text = next((block.text for block in result.content if isinstance(block, types.TextContent)), "")
    return from_envelope(text, unreadable=f"the tracker failed {tool} without a readable error")


class RemoteTracker:
    """The tracker at a URL: :meth:`call` runs one tool, :meth:`each` many calls of one read tool."""

    def __init__(self, portal: BlockingPortal, client: Client, exchange: _Exchange, read_only: Mapping[str, bool]):
        self._portal = portal
        self._client = client
        self._exchange = exchange
        self._read_only = read_only
        self.where = f"the tracker at {exchange.url}"

    async def _call(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        try:
            result = await self._client.call_tool(tool, dict(args))
        except Exception as exc:  # a group holding a cancellation is a BaseException and passes through
            raise self._exchange.failure(exc, tool, writes=not self._read_only.get(tool, False)) from None
        if result.is_error:
            raise _tool_error(tool, result)
        structured = result.structured_content
        if not isinstance(structured, dict) or not isinstance(structured.get("data"), dict):
            raise BeeError(ErrorCode.INTERNAL, f"{self.where} answered {tool} without its data; is it a tracker?")
        data: dict[str, Any] = structured["data"]
        return data

    async def _each(self, tool: str, many: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        answers: list[dict[str, Any] | None] = [None] * len(many)
        limit = anyio.Semaphore(IN_FLIGHT)

        async def one(index: int) -> None:
            async with limit:
                answers[index] = await self._call(tool, many[index])

        try:
            async with anyio.create_task_group() as group:
                for index in range(len(many)):
                    group.start_soon(one, index)
        except BaseExceptionGroup as group_error:
            for leaf in exception_leaves(group_error):
                if isinstance(leaf, BeeError):
                    raise leaf from None
            raise
        return [answer for answer in answers if answer is not None]

    async def _prompt(self, ready: int) -> str:
        try:
            result = await self._client.get_prompt("session_start", {"ready": str(ready)})
        except Exception as exc:  # as a tool's: the exchange's failure says what went wrong where
            raise self._exchange.failure(exc, "session_start", writes=False) from None
        content = result.messages[0].content if result.messages else None
        if not isinstance(content, types.TextContent):
            raise BeeError(ErrorCode.INTERNAL, f"{self.where} answered session_start without its text")
        return content.text

    def call(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        return self._portal.call(self._call, tool, args)

    def session_start(self, ready: int) -> str:
        return self._portal.call(self._prompt, ready)

    def each(self, tool: str, many: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return self._portal.call(self._each, tool, many) if many else []


@asynccontextmanager
async def _session(exchange: _Exchange, token: str) -> AsyncIterator[Client]:
    headers = {"Accept-Encoding": "identity", "Authorization": f"Bearer {token}"}
    timeout = httpx2.Timeout(REQUEST_TIMEOUT_SECONDS, connect=CONNECT_TIMEOUT_SECONDS)
    async with (
        httpx2.AsyncClient(
            headers=headers,
            timeout=timeout,
            follow_redirects=False,
            transport=_Watched(exchange),
            event_hooks={"response": [exchange.cap, exchange.note]},
        ) as http,
        Client(
            streamable_http_client(exchange.url, http_client=http),
            mode=PROTOCOL,
            # The client lists the tools beside a call to check its result; one listing serves the whole command.
            cache=CacheConfig(default_ttl_ms=LISTING_TTL_MS),
        ) as client,
    ):
        yield client


@contextmanager
def connect(url: str, token: str, read_only: Mapping[str, bool]) -> Iterator[RemoteTracker]:
    """A session with the tracker at ``url`` for the length of a command.

    Raises:
        BeeError: ``invalid_argument`` for a URL that is not http(s) or carries credentials; whatever opening the
            session raises, mapped as the module says.
    """
    check_url(url)
    exchange = _Exchange(url)
    with start_blocking_portal() as portal:
        try:
            opened = portal.wrap_async_context_manager(_session(exchange, token))
            client = opened.__enter__()
        except Exception as exc:
            raise exchange.failure(exc, "session", writes=False) from None
        try:
            yield RemoteTracker(portal, client, exchange, read_only)
        finally:
            with contextlib.suppress(Exception):  # closing a session that failed: the failure said what went wrong
                opened.__exit__(None, None, None)


def check_url(url: str) -> None:
    """Raises: BeeError: ``invalid_argument`` unless ``url`` is http(s) without credentials."""
    from urllib.parse import urlsplit

    from bee_contracts import invalid

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise invalid(
            f"--url must be the tracker's http(s) MCP endpoint, such as http://127.0.0.1:8765/mcp; got {url!r}"
        )
    if parts.username or parts.password:
        raise invalid("--url must not carry credentials; give the token with --token-file or $BEE_TRACKER_TOKEN")
