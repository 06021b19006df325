"""Talking to the tracker: its tools over MCP Streamable HTTP, with a bearer token and bounded waits.

bee-core never imports the tracker's code. It is one more MCP client of the tracker: the official SDK client over
httpx2 (the SDK's own HTTP client), speaking the 2026-07-28 protocol (one HTTP request per tool call, no handshake).
Every failure becomes a :class:`~bee_contracts.BeeError` here and nowhere else:

- the tracker's own tool errors keep their code and message (``not_found``, ``forbidden``, …);
- a refused token (HTTP 401) is ``unauthorized``; 403 is ``forbidden``; 503 (the tracker's admission limit) is
  ``busy``;
- a tracker that cannot be reached, or does not answer one request within :data:`REQUEST_TIMEOUT_SECONDS`, is
  ``unavailable`` (retryable); running out of the caller's deadline is ``deadline_exceeded``;
- a tool the tracker does not serve (an older tracker) is ``unsupported``.

Callers are synchronous (tool handlers run in worker threads; CLI commands), so :func:`run` gives each unit of
work its own event loop.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any, TypeVar

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from bee_contracts import BeeError, ErrorCode
from bee_hostkit import Deadline

T = TypeVar("T")

#: The longest one HTTP request to the tracker may take to connect, send or answer (never past the deadline).
REQUEST_TIMEOUT_SECONDS = 10.0

#: The protocol spoken: one request per call, no handshake (the tracker serves both eras).
PROTOCOL = "2026-07-28"


@dataclass
class _Wire:
    """What one unit of work saw on the wire, for :func:`_mapped`: HTTP refusals (the SDK reports them only as
    "Server returned an error response") and the writes that were sent but not answered."""

    refusals: list[tuple[int, str]] = field(default_factory=list)
    unanswered_writes: set[str] = field(default_factory=set)

    async def note(self, response: httpx2.Response) -> None:
        if response.status_code >= 400 and len(self.refusals) < 4:
            await response.aread()
            self.refusals.append((response.status_code, response.text[:2000]))


class Tracker:
    """One connection to the tracker for one unit of work; :meth:`call` runs a tool, :meth:`write` one that
    writes."""

    def __init__(self, client: Client, url: str, wire: _Wire) -> None:
        self._client = client
        self._wire = wire
        self.url = url

    async def write(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """:meth:`call` for a tool that writes: when it goes unanswered, the error says the write may have landed
        (``outcome_unknown``)."""
        self._wire.unanswered_writes.add(tool)
        data = await self.call(tool, arguments)
        self._wire.unanswered_writes.discard(tool)
        return data

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The ``data`` of a successful call of ``tool``.

        Raises:
            BeeError: the tracker's tool error, with its code and message; ``unsupported`` when the tracker does
                not serve ``tool``; ``internal`` when it answers something that is not a tracker result.
        """
        try:
            result = await self._client.call_tool(tool, arguments)
        except MCPError as exc:
            if exc.code == types.INVALID_PARAMS:
                # Arguments are checked as tool errors; a protocol-level -32602 for a valid call is an unknown tool.
                raise BeeError(
                    ErrorCode.UNSUPPORTED,
                    f"the tracker at {self.url} does not serve {tool}; upgrade it to this version of Bee",
                    details={"tool": tool},
                ) from None
            raise
        if result.is_error:
            self._wire.unanswered_writes.discard(tool)  # answered: the tracker wrote nothing
            raise _tool_error(tool, result)
        structured = result.structured_content
        if not isinstance(structured, dict) or not isinstance(structured.get("data"), dict):
            raise BeeError(
                ErrorCode.INTERNAL, f"the tracker answered {tool} without its data; is {self.url} a tracker?"
            )
        data: dict[str, Any] = structured["data"]
        return data


def run(url: str, token: str, deadline: Deadline, work: Callable[[Tracker], Awaitable[T]]) -> T:
    """Run ``work`` against the tracker at ``url`` as the bearer of ``token``, within ``deadline``.

    Raises:
        BeeError: whatever ``work`` raises, and every failure of the tracker or the network, mapped as the module
            says.
    """
    wire = _Wire()
    try:
        return anyio.run(_run, url, token, deadline, work, wire)
    except BaseException as exc:  # every failure is mapped once; interrupts come back out of _mapped as they were
        mapped = _mapped(exc, url, deadline, wire)
        if isinstance(mapped, BeeError) and wire.unanswered_writes and mapped.retryable:
            mapped = _unknown_outcome(mapped, sorted(wire.unanswered_writes))
        raise mapped from None


async def _run(url: str, token: str, deadline: Deadline, work: Callable[[Tracker], Awaitable[T]], wire: _Wire) -> T:
    seconds = deadline.remaining
    with anyio.fail_after(seconds):
        # One silent request fails as `unavailable` a little before the deadline would end the whole call.
        timeout = httpx2.Timeout(min(REQUEST_TIMEOUT_SECONDS, seconds * 0.9))
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
            follow_redirects=False,
            verify=_tls(),
            event_hooks={"response": [wire.note]},
        ) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode=PROTOCOL, cache=None, read_timeout_seconds=timeout.read) as client:
                return await work(Tracker(client, url, wire))


@cache
def _tls() -> ssl.SSLContext:
    """The TLS settings every connection shares: loading the trust store costs ~50 ms, so it is done once."""
    return httpx2.create_ssl_context()


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


def _mapped(exc: BaseException, url: str, deadline: Deadline, wire: _Wire) -> BaseException:
    """The one place a failure of talking to the tracker becomes a contracts error (interrupts pass through)."""
    leaves = list(_leaves(exc))
    for leaf in leaves:
        if not isinstance(leaf, Exception):
            return leaf  # KeyboardInterrupt, SystemExit, cancellation: never turned into an answer
    for leaf in leaves:
        if isinstance(leaf, BeeError):
            return leaf
    if wire.refusals:
        return _refused(url, *wire.refusals[0])
    for leaf in leaves:
        if isinstance(leaf, TimeoutError) and not isinstance(leaf, httpx2.TimeoutException):
            return BeeError(
                ErrorCode.DEADLINE_EXCEEDED,
                f"the tracker at {url} did not finish answering within the call's {deadline.seconds:g}-second "
                "deadline; nothing partial was delivered",
            )
        if isinstance(leaf, httpx2.TimeoutException):
            return BeeError(
                ErrorCode.UNAVAILABLE,
                f"the tracker at {url} did not answer within {REQUEST_TIMEOUT_SECONDS:g} seconds; retry shortly",
                details={"tracker": url},
            )
        if isinstance(leaf, httpx2.TransportError):
            return BeeError(
                ErrorCode.UNAVAILABLE,
                f"cannot reach the tracker at {url} ({type(leaf).__name__}); check that it is running, then retry",
                details={"tracker": url},
            )
    return BeeError(
        ErrorCode.UNAVAILABLE,
        f"the tracker at {url} did not answer as an MCP server ({type(leaves[0]).__name__}); retry, and check the "
        "URL names its /mcp endpoint",
        details={"tracker": url},
    )


def _unknown_outcome(error: BeeError, writes: list[str]) -> BeeError:
    """``error`` for a write that was sent and not answered: it may or may not have been made."""
    return BeeError(
        error.code,
        f"{error.message}. The {', '.join(writes)} was sent but not answered, so it may or may not have been made: "
        "look before you retry",
        details=error.details,
        retryable=error.retryable,
        outcome_unknown=True,
    )


def _refused(url: str, status: int, body: str) -> BeeError:
    """A request the tracker's HTTP edge refused before any tool ran."""
    reason = _description(body)
    if status == 401:
        return BeeError(
            ErrorCode.UNAUTHORIZED,
            f"the tracker at {url} refused the token ({reason or 'no reason given'}); get a fresh one (for a local "
            "tracker `bee tracker token --actor YOU`) into the token file or $BEE_TRACKER_TOKEN",
            details={"tracker": url, "status": status},
        )
    if status == 403:
        return BeeError(
            ErrorCode.FORBIDDEN,
            f"the tracker at {url} refused this request ({reason or 'forbidden'})",
            details={"tracker": url, "status": status},
        )
    if status in (429, 503):
        return BeeError(
            ErrorCode.BUSY,
            f"the tracker at {url} is at its limit of requests in flight; retry shortly",
            details={"tracker": url, "status": status, "retryAfterSeconds": 1},
        )
    return BeeError(
        ErrorCode.UNAVAILABLE,
        f"the tracker at {url} answered HTTP {status}{f' ({reason})' if reason else ''}; check the URL names its "
        "/mcp endpoint, then retry",
        details={"tracker": url, "status": status},
    )


def _description(body: str) -> str:
    try:
        parsed = json.loads(body)
    except ValueError:
        return ""
    if isinstance(parsed, dict):
        text = parsed.get("error_description") or parsed.get("error")
        return str(text)[:300] if text else ""
    return ""


def _tool_error(tool: str, result: types.CallToolResult) -> BeeError:
    """The tracker's error envelope as a BeeError: its code, message and details, kept."""
    text = next((block.text for block in result.content if isinstance(block, types.TextContent)), "")
    try:
        body = json.loads(text)
        code = ErrorCode(body["code"])
        message = str(body["error"])
    except (ValueError, KeyError, TypeError):
        return BeeError(ErrorCode.INTERNAL, f"the tracker failed {tool} without a readable error")
    details = body.get("details") if isinstance(body.get("details"), dict) else None
    return BeeError(
        code,
        message,
        details=details,
        retryable=bool(body.get("retryable", False)),
        outcome_unknown=bool(body.get("outcome_unknown", False)),
    )
