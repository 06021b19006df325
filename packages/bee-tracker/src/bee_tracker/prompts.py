"""The tracker's MCP prompts (prompts/list, prompts/get), from their catalog in bee-contracts: ``session_start``, an
agent's session-start context (:mod:`bee_tracker.session_start`) for the token's actor."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio

from bee_contracts import BeeError
from bee_contracts.prompts import load_prompts
from bee_tracker import session_start
from bee_tracker.store import SqlStore

if TYPE_CHECKING:
    from mcp.server import Server
    from mcp.server.context import ServerRequestContext


def ready_count(arguments: Mapping[str, str] | None) -> int:
    """The ``ready`` argument of ``session_start`` (a string, as prompt arguments are).

    Raises:
        ValueError: saying what to send instead.
    """
    text = (arguments or {}).get("ready")
    if text is None:
        return session_start.READY_DEFAULT
    if not text.strip().isdigit() or not 1 <= int(text) <= session_start.READY_MAX:
        raise ValueError(f"ready must be a whole number from 1 to {session_start.READY_MAX}, not {text[:40]!r}")
    return int(text)


def add_prompts(server: Server[Any], store: SqlStore, actor_in: Any) -> None:
    """Serve prompts/list and prompts/get on ``server``; ``actor_in`` reads the verified actor from a request's ASGI
    scope (the tools' own rule)."""
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    from bee_tracker import calls

    specs = {spec.name: spec for spec in load_prompts("tracker")}

    async def list_prompts(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        if params is not None and params.cursor:
            raise MCPError(code=types.INVALID_PARAMS, message="unknown cursor: the prompt listing has one page")
        return types.ListPromptsResult.model_validate({"prompts": [spec.to_wire() for spec in specs.values()]})

    async def get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        spec = specs.get(params.name)
        if spec is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"no prompt {params.name[:80]!r}; see prompts/list")
        unknown = sorted(set(params.arguments or {}) - {argument["name"] for argument in spec.arguments})
        if unknown:
            raise MCPError(code=types.INVALID_PARAMS, message=f"{spec.name} takes no argument {unknown[0][:40]!r}")
        try:
            ready = ready_count(params.arguments)
        except ValueError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        actor = actor_in(getattr(ctx.request, "scope", None) or {})
        if not actor:
            raise MCPError(code=types.INVALID_REQUEST, message="this request carries no verified actor")

        def made() -> str:
            def call(tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
                data: dict[str, Any] = calls.call(store, tool, actor, dict(args))["data"]
                return data

            return session_start.context(call, actor, ready=ready)

        try:
            text = await anyio.to_thread.run_sync(made)
        except BeeError as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=exc.message) from None
        message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        return types.GetPromptResult(description=spec.description, messages=[message])

    server.add_request_handler("prompts/list", types.PaginatedRequestParams, list_prompts)
    server.add_request_handler("prompts/get", types.GetPromptRequestParams, get_prompt)
