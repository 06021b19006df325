"""The discovery view of a host: its tools behind three small ones, so a client pays for a schema only when used.

``tools/list`` of the view lists the ``discovery`` catalog of bee-contracts: ``bee_tool_search`` (names, titles
and one-line summaries, ranked by :mod:`bee_hostkit.ranking`), ``bee_tool_schema`` (one tool's full wire
definition) and ``bee_tool_invoke``. Invoking goes through :meth:`Host.execute` of the host being viewed — the
path a direct call takes — so validation, deadlines, the result limit and every error are the tool's own, and the
answer is the same either way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from bee_contracts import BeeError, ErrorCode, load_catalog
from bee_contracts.limits import DEFAULT_DEADLINE_SECONDS
from bee_hostkit import ranking
from bee_hostkit.call import Call
from bee_hostkit.host import GRACE_SECONDS, Host

if TYPE_CHECKING:
    from bee_contracts.shapes.discovery import (
        ToolInvokeArgs,
        ToolSchemaArgs,
        ToolSchemaResult,
        ToolSearchArgs,
        ToolSearchResult,
        ToolSearchTool,
    )

#: The catalog (in bee-contracts) that the view lists.
CATALOG = "discovery"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def summary(description: str) -> str:
    """The first sentence of a tool description (catalog descriptions open with when to use the tool)."""
    return _SENTENCE_END.split(description, maxsplit=1)[0]


def discovery_host(inner: Host, *, instructions: str | None = None) -> Host:
    """The discovery view of ``inner``: same server name, version and contract, three tools instead of its catalog."""
    specs = {spec.name: spec for spec in inner.catalog}

    def unknown(name: str) -> BeeError:
        return BeeError(
            ErrorCode.NOT_FOUND,
            f"no tool named {name!r} here; bee_tool_search lists the {len(specs)} tools this host serves",
            details={"name": name},
        )

    def bee_tool_search(call: Call[ToolSearchArgs]) -> ToolSearchResult:
        words = ranking.query_words(call.args.get("query", ""))
        found: list[ToolSearchTool] = []
        for spec in specs.values():
            entry: ToolSearchTool = {"name": spec.name, "title": spec.title, "summary": summary(spec.description)}
            if words:
                entry["score"] = ranking.score(words, [(spec.name, 1.0), (spec.title, 1.0), (spec.description, 0.6)])
                if not entry["score"]:
                    continue
            found.append(entry)
        found.sort(key=lambda tool: (-tool.get("score", 0.0), tool["name"]))
        return {"tools": found[: call.args["limit"]], "total": len(found)}

    def bee_tool_schema(call: Call[ToolSchemaArgs]) -> ToolSchemaResult:
        spec = specs.get(call.args["name"])
        if spec is None:
            raise unknown(call.args["name"])
        return cast("ToolSchemaResult", spec.to_wire())

    async def bee_tool_invoke(call: Call[ToolInvokeArgs]) -> Mapping[str, Any]:
        name = call.args["name"]
        if name not in specs:
            raise unknown(name)
        return await inner.execute(name, call.args["arguments"], caller=call.caller)

    # The invoked tool keeps its own deadline; the view's outlasts every one of them, so the tool's fires first.
    longest = max([DEFAULT_DEADLINE_SECONDS, *inner.deadlines.values()])
    return Host(
        name=inner.name,
        title=f"{inner.title or inner.name} (discovery view)",
        catalog=load_catalog(CATALOG),
        handlers={
            "bee_tool_invoke": bee_tool_invoke,
            "bee_tool_schema": bee_tool_schema,
            "bee_tool_search": bee_tool_search,
        },
        instructions=instructions,
        deadlines={"bee_tool_invoke": longest + 2 * GRACE_SECONDS},
        caller_of=inner.caller_of,
        viewed=inner,
        dispatcher="bee_tool_invoke",
    )
