"""The tracker's scopes, what each allows, and which a ``/mcp`` request needs.

Reading and writing are apart: ``tracker:read`` for every request (listing, the read tools, resources, the skill),
``tracker:write`` besides for a call of a tool that changes the backlog (a tool whose catalog entry is not
``readOnlyHint``). ``board:admin`` is the board's own: a lead's writes from the web board need it in the session.
A token or session without a ``scope`` (a pasted token, an operator's link) carries every scope, as before there
were scopes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from typing import Any

READ = "tracker:read"
WRITE = "tracker:write"
ADMIN = "board:admin"

#: Every scope, in the order they are shown.
ALL: tuple[str, ...] = (READ, WRITE, ADMIN)
#: What an MCP client may be granted (the board's writes are made in the board, never by a client).
FOR_CLIENTS: tuple[str, ...] = (READ, WRITE)
#: What ``/mcp`` asks for in its challenge: enough for every tool.
FOR_MCP: tuple[str, ...] = (READ, WRITE)

#: What each scope allows, as the consent page says it.
MEANING = {
    READ: "read the team's backlog: ready work, search, issues and their history, the engineering-backlog skill",
    WRITE: "change the backlog in your name: create, claim, update, comment on, link, complete, hand off and "
    "release issues",
    ADMIN: "make a lead's changes from the web board",
}


def parse(text: str | None) -> frozenset[str]:
    """The scopes of a space-separated ``scope`` value (unknown ones kept: callers compare with what they need)."""
    return frozenset((text or "").split())


def shown(scopes: Iterable[str]) -> str:
    """Scopes as a ``scope`` value, in :data:`ALL`'s order (then any others, sorted)."""
    given = set(scopes)
    return " ".join([s for s in ALL if s in given] + sorted(given - set(ALL)))


@cache
def write_tools() -> frozenset[str]:
    """The tracker tools that change the backlog: those its catalog does not mark read-only."""
    from bee_contracts import load_catalog

    return frozenset(spec.name for spec in load_catalog("tracker") if not spec.annotations["readOnlyHint"])


def _message_needs(message: Any) -> str:
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return READ
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return WRITE if isinstance(name, str) and name in write_tools() else READ


def needed(body: bytes) -> frozenset[str]:
    """The scopes a ``/mcp`` request body needs: read, and write for a call of a tool that writes (in any message
    of a batch). A body that is not JSON needs read only: the server answers it with its own error."""
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        return frozenset({READ})
    messages = parsed if isinstance(parsed, list) else [parsed]
    return frozenset({READ, *(_message_needs(message) for message in messages)})
