"""Talking to the tracker: its tools over MCP Streamable HTTP, with a bearer token and bounded waits.

bee-core never imports the tracker's code. It is one more MCP client of the tracker, through
:func:`bee_core.remote.session`, speaking the 2026-07-28 protocol (one HTTP request per tool call, no handshake).
Every failure becomes a :class:`~bee_contracts.BeeError`, mapped as :mod:`bee_core.remote` says (a refused token
is ``unauthorized``, the tracker's admission limit ``busy``, a tracker that cannot be reached or is silent for
:data:`~bee_core.remote.REQUEST_TIMEOUT_SECONDS` ``unavailable``, running out of the caller's deadline (an answer
that drips in included) ``deadline_exceeded``, an answer over the byte cap ``result_too_large``). What is the
tracker's own is read here:

- the tracker's tool errors keep their code and message (``not_found``, ``forbidden``, …);
- a tool the tracker does not serve (an older tracker) is ``unsupported``;
- a write that was sent and never answered may or may not have been made: its error says so (``outcome_unknown``).

Callers are synchronous (tool handlers run in worker threads; CLI commands), so :func:`run` gives each unit of
work its own event loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError

from bee_contracts import BeeError, ErrorCode
from bee_contracts.errors import from_envelope
from bee_core import remote
from bee_core.collab.binding import ENV_TOKEN
from bee_hostkit import Deadline

T = TypeVar("T")

#: The protocol spoken: one request per call, no handshake (the tracker serves both eras).
PROTOCOL = "2026-07-28"


class Tracker:
    """One connection to the tracker for one unit of work; :meth:`call` runs a tool, :meth:`write` one that
    writes."""

    def __init__(self, client: Client, server: remote.Server, unanswered_writes: set[str]) -> None:
        self._client = client
        self._server = server
        self._unanswered_writes = unanswered_writes
        self.url = server.url

    async def write(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """:meth:`call` for a tool that writes: when it goes unanswered, the error says the write may have landed
        (``outcome_unknown``)."""
        self._unanswered_writes.add(tool)
        data = await self.call(tool, arguments)
        self._unanswered_writes.discard(tool)
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
                raise self._server.error(
                    ErrorCode.UNSUPPORTED, f"does not serve {tool}; upgrade it to this version of Bee", tool=tool
                ) from None
            raise
        if result.is_error:
            self._unanswered_writes.discard(tool)  # answered: the tracker wrote nothing
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
    unanswered_writes: set[str] = set()
    try:
        return anyio.run(_run, _server(url), token, deadline, work, unanswered_writes)
    except BeeError as exc:
        if unanswered_writes and exc.retryable:
            raise _unknown_outcome(exc, sorted(unanswered_writes)) from None
        raise


def _server(url: str) -> remote.Server:
    """The tracker at ``url``, as errors name it."""
    return remote.Server(
        url,
        f"the tracker at {url}",
        details={"tracker": url},
        token_from=f"the token file or ${ENV_TOKEN}",
        refusal_remedy="get a fresh one (for a local tracker `bee tracker token --actor YOU`)",
    )


async def _run(
    server: remote.Server,
    token: str,
    deadline: Deadline,
    work: Callable[[Tracker], Awaitable[T]],
    unanswered_writes: set[str],
) -> T:
    async with remote.session(server, token, within=deadline, mode=PROTOCOL) as client:
        return await work(Tracker(client, server, unanswered_writes))


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


def _tool_error(tool: str, result: types.CallToolResult) -> BeeError:
    """The tracker's error envelope as a BeeError, its code, message and details kept."""
    text = next((block.text for block in result.content if isinstance(block, types.TextContent)), "")
    return from_envelope(text, unreadable=f"the tracker failed {tool} without a readable error")
