"""One MCP client over Streamable HTTP for everything bee-core reaches on the network.

bee-core reaches two kinds of remote MCP servers: the tracker (:mod:`bee_core.collab.tracker`) and skill
providers (:mod:`bee_core.skills.remote`). Both are reached here, the same way: the official SDK client over httpx2
(the SDK's own HTTP client), with a bearer token read fresh from its source on every use (:class:`TokenSource`),
bounded waits, every answer read under a byte cap as it arrives, and one shared TLS context (:func:`session`). A
failure on the way becomes a :class:`~bee_contracts.BeeError` in one place, :meth:`Exchange.failure`, naming the
server the way its caller does (:class:`Server`):

- the server's HTTP edge refusing a request: 401 ``unauthorized``, 403 ``forbidden``, 429 or 503 ``busy``, any
  other status ``unavailable``;
- a server that stays silent (no next bytes of an answer) for its timeout, or cannot be reached: ``unavailable``
  (retryable);
- the whole exchange outlasting its bound: ``deadline_exceeded`` when the bound is the caller's deadline,
  ``unavailable`` when it is the server's own time limit (an answer that drips in slowly ends here too);
- one HTTP response whose body passes :data:`~bee_contracts.limits.REMOTE_ANSWER_MAX_BYTES`:
  ``result_too_large``, at the byte that passes it. Reading stops there, the connection is closed and the whole
  exchange is cancelled at once, whatever the SDK client was doing with the answer (:meth:`Exchange.cap`). Bodies
  are asked for and read uncompressed: a compressed body's size says nothing about what it expands to, so one is
  ``unsupported``;
- an error answer the caller did not handle, or an answer that is not MCP: ``unavailable``, unless the caller
  reads it otherwise (``answers``).

What differs between callers on purpose stays with them: the tracker client's unknown outcome of unanswered writes
and its reading of tool errors; the skills client's check for the Skills extension and its ``unsupported`` for
answers that are not MCP.
"""

from __future__ import annotations

import os
import ssl
import stat
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from bee_contracts import BeeError, ErrorCode
from bee_contracts.limits import REMOTE_ANSWER_MAX_BYTES
from bee_hostkit import Deadline
from bee_hostkit.capped import CappedBody
from bee_hostkit.environ import getenv
from bee_hostkit.exchange import Unchanged, edge_refusal, exception_leaves

#: The longest a server may be silent while Bee waits for its answer's next bytes (less when the exchange's bound is
#: nearer).
REQUEST_TIMEOUT_SECONDS = 10.0
#: The longest opening a connection may take: a server that does not accept within this is not there.
CONNECT_TIMEOUT_SECONDS = 5.0
#: A token file larger than this is not a token (a JWT is a few hundred bytes; this bounds a wrong path's cost).
MAX_TOKEN_FILE_BYTES = 64 * 1024
#: The most of a refusal's body read for its reason.
_REASON_CHARS = 300

#: How a caller reads one exception of a failed exchange before the generic mapping does: a BeeError, or None.
Answers = Callable[[Exception], BeeError | None]


@dataclass(frozen=True)
class Server:
    """A server bee-core reaches, as its errors name it."""

    url: str
    #: The server as the subject of a sentence: "the tracker at URL", "skill provider 'team' (URL)".
    name: str
    #: What every error about it carries in its details, e.g. ``{"tracker": URL}``.
    details: Mapping[str, Any] = field(default_factory=dict)
    #: Where the token it is sent comes from, for the message when it refuses it (None: no token is sent).
    token_from: str | None = None
    #: What to do when it refuses the token.
    refusal_remedy: str = ""

    def error(self, code: ErrorCode, message: str, *, retryable: bool | None = None, **details: Any) -> BeeError:
        """``code`` with the message "<server> <message>" and the server's details (plus ``details``)."""
        return BeeError(code, f"{self.name} {message}", details={**self.details, **details}, retryable=retryable)


@dataclass(frozen=True)
class TokenSource:
    """Where a bearer token is read from, on every use: a file, or an environment variable.

    Reading it again each time picks up a rotated token. The token is never stored or logged: :meth:`read` returns
    it for one session's ``Authorization`` header. A token file is only ever one the user named with the CLI (the
    settings that name it are per user, never in a checkout), and it is read only while it is the user's own and
    private: owned by the user running Bee, a regular file, and neither readable nor writable by group or others
    (checked on the open file, so it cannot be swapped between the check and the read).
    """

    #: Exactly one of ``file`` and ``env``.
    file: Path | None = None
    env: str | None = None
    #: Who needs the token, as its errors say: ``("Bee", "the tracker")`` reads "Bee cannot read the tracker token
    #: file …", ``("skill provider 'team' (URL)", "its")`` reads "skill provider 'team' (URL) cannot read its …".
    owner: str = "Bee"
    whose: str = "the"
    #: What to do when there is no usable token, closing every error.
    remedy: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if (self.file is None) == (self.env is None):
            raise ValueError("a token source is a file or an environment variable")

    @property
    def where(self) -> str:
        """The file, or ``$VARIABLE``."""
        return str(self.file) if self.file is not None else f"${self.env}"

    def read(self) -> str:
        """The token, surrounding whitespace dropped.

        Raises:
            BeeError: ``unauthorized`` when the variable is unset or empty; when the file is not an absolute path,
                cannot be read, is not a regular file, is not owned by the user running Bee, may be read or written
                by group or others ("chmod 600 FILE"), or is larger than :data:`MAX_TOKEN_FILE_BYTES`; or when the
                text is not a bearer token (visible ASCII, no spaces).
        """
        if self.file is not None:
            where = f"{self.whose} token file {self.file}"
            raw = self._read_private(where)
            text = raw.decode("utf-8", errors="replace").strip()
        else:
            where = f"{self.whose} token in ${self.env}"
            # The calling session's environment: in a warm host, the front end's (bee_hostkit.environ).
            text = (getenv(str(self.env)) or "").strip()
            if not text:
                raise self._unusable(f"takes {self.whose} token from ${self.env}, which is not set where Bee runs")
        # A bearer token is visible ASCII (RFC 6750); anything else would never be accepted and must not reach a header.
        if not text or not all("!" <= ch <= "~" for ch in text):
            raise self._unusable(
                f"cannot use {where}: it does not hold a bearer token (one line of visible ASCII, no spaces)"
            )
        return text

    def _read_private(self, where: str) -> bytes:
        """The bytes of the token file, after checking on the open file that it is the user's own and private."""
        assert self.file is not None
        if not self.file.is_absolute():
            raise self._unusable(f"cannot use {where}: a token file must be named by its absolute path")
        try:
            # Non-blocking, so that a FIFO in its place fails the check below instead of hanging the call.
            fd = os.open(self.file, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        except OSError as exc:
            raise self._unusable(f"cannot read {where} ({exc.strerror or exc})") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise self._unusable(f"refuses {where}: it is not a regular file")
            if info.st_uid != os.geteuid():
                raise self._unusable(
                    f"refuses {where}: it is owned by uid {info.st_uid}, not by you (uid {os.geteuid()}); a token "
                    "file must be your own"
                )
            if info.st_mode & 0o077:
                raise self._unusable(
                    f"refuses {where}: group or others may read or write it (mode {stat.S_IMODE(info.st_mode):04o}); "
                    f"chmod 600 {self.file}"
                )
            raw = os.read(fd, MAX_TOKEN_FILE_BYTES + 1)
        except OSError as exc:
            raise self._unusable(f"cannot read {where} ({exc.strerror or exc})") from None
        finally:
            os.close(fd)
        if len(raw) > MAX_TOKEN_FILE_BYTES:
            raise self._unusable(f"cannot use {where}: it holds more than a token (over {MAX_TOKEN_FILE_BYTES} bytes)")
        return raw

    def _unusable(self, problem: str) -> BeeError:
        remedy = f"; {self.remedy}" if self.remedy else ""
        return BeeError(ErrorCode.UNAUTHORIZED, f"{self.owner} {problem}{remedy}", details=dict(self.details) or None)


@dataclass(frozen=True)
class Refusal:
    """An HTTP status of 400 or more that the server's edge answered a request with, and its stated reason."""

    status: int
    reason: str = ""


class Exchange:
    """One session's bounds, what the server's HTTP edge refused, and the one mapping of its failures.

    ``within`` bounds the whole session: a :class:`~bee_hostkit.Deadline` is the caller's deadline (running out of
    it is ``deadline_exceeded``); a number of seconds is the server's own time limit (running out is
    ``unavailable``). Within it, a server may be silent for at most :data:`REQUEST_TIMEOUT_SECONDS`, and less than
    the whole bound, while Bee waits for a connection's next bytes, so that a server silent for (nearly) the whole
    exchange fails as ``unavailable`` a little before the bound would end the session.
    An answer that keeps arriving, however slowly, is never silent: it ends at the bound itself (there is no
    per-request limit on a whole answer, which would race the bound and report a caller's deadline as the
    server's silence).
    """

    def __init__(self, server: Server, within: Deadline | float, answers: Answers | None = None) -> None:
        self.server = server
        self.deadline = within if isinstance(within, Deadline) else None
        self.seconds = within.remaining if isinstance(within, Deadline) else within
        self.request_seconds = min(REQUEST_TIMEOUT_SECONDS, self.seconds * 0.9)
        self.answers = answers
        #: The refusal the latest request was answered with, if it was one (the SDK says only "Server returned an
        #: error response"); an answer that is not a refusal clears it, so one that was recovered from (such as the
        #: ``server/discover`` probe of a legacy server) never explains a later failure.
        self.refusal: Refusal | None = None
        #: Why the exchange was stopped before its end (an answer Bee will not read), if it was: it is the outcome.
        self.stopped: BeeError | None = None
        #: The cancel scope of the session, which :meth:`stop` cancels (set by :func:`session`).
        self.scope: anyio.CancelScope | None = None

    @property
    def timeout(self) -> httpx2.Timeout:
        return httpx2.Timeout(self.request_seconds, connect=min(self.request_seconds, CONNECT_TIMEOUT_SECONDS))

    def stop(self, error: BeeError) -> BeeError:
        """End the whole exchange now, with ``error`` as its outcome (the first one stays): its session is cancelled
        wherever it waits. Returns the outcome, for the caller to raise where it is."""
        if self.stopped is None:
            self.stopped = error
        if self.scope is not None:
            self.scope.cancel()
        return self.stopped

    async def cap(self, response: httpx2.Response) -> None:
        """The client's first response hook: this response's body is read under the byte cap from here on.

        Every response passes here before any other hook or the SDK reads a byte of its body, whichever transport
        (a proxy's included) carried it. A body that passes :data:`REMOTE_ANSWER_MAX_BYTES` stops the exchange
        with ``result_too_large`` at that byte (:class:`bee_hostkit.capped.CappedBody`).

        Raises:
            BeeError: ``unsupported`` (and the exchange stops) for a compressed body: Bee asks for bodies
                uncompressed (``Accept-Encoding: identity``) because a few KiB of gzip can expand to gigabytes.
        """
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity"):
            await response.aclose()
            raise self.stop(
                self.server.error(
                    ErrorCode.UNSUPPORTED,
                    f"answered with a compressed body (Content-Encoding: {encoding[:40]}) though Bee asks for "
                    "uncompressed answers (Accept-Encoding: identity); configure it, or the proxy before it, not to "
                    "compress them",
                )
            )
        assert isinstance(response.stream, httpx2.AsyncByteStream)  # an AsyncClient's bodies always are
        response.stream = CappedBody(response.stream, lambda: self.stop(self.too_large()))

    def too_large(self) -> BeeError:
        """The outcome of an answer over the cap."""
        return self.server.error(
            ErrorCode.RESULT_TOO_LARGE,
            f"sent an answer of more than {REMOTE_ANSWER_MAX_BYTES} bytes, more than Bee reads of one; it stopped "
            "reading there and nothing was delivered",
            limitBytes=REMOTE_ANSWER_MAX_BYTES,
        )

    async def note(self, response: httpx2.Response) -> None:
        """The client's response hook: remember whether the server's edge refused this request."""
        refusal = await edge_refusal(response)
        if not isinstance(refusal, Unchanged):
            self.refusal = None if refusal is None else Refusal(*refusal)

    def failure(self, exc: Exception) -> BeeError:
        """``exc`` (often exception groups, from the client's task groups) as the one BeeError it means."""
        if self.stopped is not None:
            return self.stopped  # whatever the SDK made of the cut-off answer, this is what happened
        leaves = exception_leaves(exc)
        for leaf in leaves:
            if isinstance(leaf, BeeError):
                return leaf
        if self.refusal is not None:
            return self._refused(self.refusal)
        server = self.server
        for leaf in leaves:
            if isinstance(leaf, TimeoutError):  # the bound of the whole session (anyio's fail_after)
                if self.deadline is not None:
                    return server.error(
                        ErrorCode.DEADLINE_EXCEEDED,
                        f"did not finish answering within the call's {self.deadline.seconds:g}-second deadline; "
                        "nothing partial was delivered",
                    )
                return server.error(
                    ErrorCode.UNAVAILABLE, f"did not answer within {self.seconds:g} seconds; retry later"
                )
            if isinstance(leaf, httpx2.TimeoutException) or (
                isinstance(leaf, MCPError) and leaf.error.code == types.REQUEST_TIMEOUT
            ):
                return server.error(
                    ErrorCode.UNAVAILABLE, f"did not answer within {self.request_seconds:g} seconds; retry shortly"
                )
            if isinstance(leaf, httpx2.TransportError | OSError):
                why = f"{type(leaf).__name__}: {str(leaf)[:_REASON_CHARS]}" if str(leaf) else type(leaf).__name__
                return server.error(
                    ErrorCode.UNAVAILABLE, f"cannot be reached ({why}); check that it is running, then retry"
                )
        if self.answers is not None:
            for leaf in leaves:
                if isinstance(leaf, Exception) and (read := self.answers(leaf)) is not None:
                    return read
        for leaf in leaves:
            if isinstance(leaf, MCPError):
                return server.error(
                    ErrorCode.UNAVAILABLE,
                    f"answered with an error ({leaf.error.message[:_REASON_CHARS]}); retry, and check the URL "
                    "names its MCP endpoint",
                )
        return server.error(
            ErrorCode.UNAVAILABLE,
            f"did not answer as an MCP server ({type(leaves[0]).__name__}); retry, and check the URL names its MCP "
            "endpoint",
        )

    def _refused(self, refusal: Refusal) -> BeeError:
        """A request the server's HTTP edge refused before any MCP handler ran."""
        server, status = self.server, refusal.status
        said = f"HTTP {status}: {refusal.reason}" if refusal.reason else f"HTTP {status}"
        if status == 401:
            sent = f"the token from {server.token_from}" if server.token_from else "a request without a token"
            remedy = f"; {server.refusal_remedy}" if server.refusal_remedy else ""
            return server.error(ErrorCode.UNAUTHORIZED, f"refused {sent} ({said}){remedy}", status=status)
        if status == 403:
            return server.error(ErrorCode.FORBIDDEN, f"refused this request ({said})", status=status)
        if status in (429, 503):
            return server.error(
                ErrorCode.BUSY,
                f"is at its limit of requests in flight ({said}); retry shortly",
                status=status,
                retryAfterSeconds=1,
            )
        return server.error(
            ErrorCode.UNAVAILABLE, f"answered {said}; check the URL names its MCP endpoint, then retry", status=status
        )


@asynccontextmanager
async def session(
    server: Server,
    token: str | None,
    *,
    within: Deadline | float,
    mode: str,
    answers: Answers | None = None,
) -> AsyncIterator[Client]:
    """An open MCP client session with ``server``, as the bearer of ``token`` (None: no Authorization header).

    ``within`` bounds the session and its requests (see :class:`Exchange`); ``mode`` is the SDK client's protocol
    mode ("auto" probes ``server/discover`` and falls back to the handshake; a protocol version speaks only it).
    ``answers`` reads an exception the caller gives its own meaning before the generic mapping does.

    Raises:
        BeeError: every failure of opening or using the session, the body's included, mapped as the module says
            (an answer over the byte cap cancels the body where it waits). Cancellation and interrupts pass
            through unchanged.
    """
    exchange = Exchange(server, within, answers)
    # identity: the cap counts the bytes that arrive, which must be the bytes that are parsed.
    headers = {"Accept-Encoding": "identity"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        with anyio.fail_after(exchange.seconds) as scope:
            exchange.scope = scope
            async with (
                httpx2.AsyncClient(
                    headers=headers,
                    timeout=exchange.timeout,
                    follow_redirects=False,
                    verify=_tls(),
                    event_hooks={"response": [exchange.cap, exchange.note]},
                ) as http,
                Client(
                    streamable_http_client(server.url, http_client=http),
                    mode=mode,
                    cache=None,
                    read_timeout_seconds=None,  # silence is httpx's read timeout; a whole answer has the bound
                ) as client,
            ):
                yield client
    except Exception as exc:  # a group holding a cancellation is a BaseException and passes through
        raise exchange.failure(exc) from None
    if exchange.stopped is not None:
        # The session's scope absorbed the cancellation that stop() sent; the body's work did not finish.
        raise exchange.stopped


@cache
def _tls() -> ssl.SSLContext:
    """The TLS settings every connection shares: loading the trust store costs ~50 ms, so it is done once."""
    return httpx2.create_ssl_context()
