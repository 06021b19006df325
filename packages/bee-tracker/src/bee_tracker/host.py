"""The tracker host: the catalog bound to its handlers over the store, the Skills extension, JWT auth, and the
HTTP app.

Each tool's host handler takes the hostkit :class:`~bee_hostkit.Call` (validated arguments, deadline, caller) and
runs the tool through :func:`bee_tracker.calls.run` for the call's verified actor — never an argument: tools
accept ``actor`` only for compatibility and ignore it. The tools themselves are in :mod:`bee_tracker.handlers`.

Importing this module costs little: the SDK (most of a second) and the board's libraries load in the background
once the app has started (:mod:`bee_hostkit.http.deferred`), so a restarted tracker listens before they are loaded.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from bee_contracts import BeeError, ErrorCode, load_catalog, version_info
from bee_hostkit.http.app import mcp_http_app
from bee_hostkit.http.deferred import Built, Deferred
from bee_hostkit.http.limits import EdgeLimits
from bee_tracker import skills
from bee_tracker.auth import Verifier
from bee_tracker.config import TrackerConfig
from bee_tracker.listening import Listening
from bee_tracker.listening.limits import ListenLimits
from bee_tracker.middleware import ACTOR_SCOPE_KEY, BearerAuth
from bee_tracker.oauth import assembly
from bee_tracker.prompts import add_prompts
from bee_tracker.store import SqlStore

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server import Server
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

    from bee_hostkit import Call, Handler, Host
    from bee_hostkit.http.fast import HostServer

logger = logging.getLogger("bee.tracker")

#: How long ``/health`` waits for the MCP server and the board to be built before it answers ``starting``.
HEALTH_WAIT_SECONDS = 10.0
#: How long the board's build waits for the MCP endpoint's to have imported the SDK (a sign-in mode's routes use it).
SDK_WAIT_SECONDS = 60.0

INSTRUCTIONS = (
    "Bee tracker: the team's shared Beads backlog. Find unblocked work with ready, search before you create, claim "
    "before you start, add notes as you learn, hand off when you stop, and complete with evidence. Writes are "
    "attributed to your token's actor. Read the skill at skill://beads-engineering-backlog/SKILL.md (resources/read, "
    "or skills/get where the Skills extension is supported) before using these tools. At the start of a session, and "
    "after a compaction, get the prompt session_start (prompts/get): your claims and their leases, ready work for "
    "you and the handoffs left for you. When nothing is ready, do not poll: listen (subscriptions/listen) on "
    "bee://tracker/ready and claim when it changes."
)


def _actor_in(scope: Mapping[str, Any]) -> str | None:
    """The actor BearerAuth verified for the request whose ASGI scope this is."""
    actor = scope.get(ACTOR_SCOPE_KEY)
    return actor if isinstance(actor, str) else None


def actor_of(call: Call[Any]) -> str:
    """The verified actor of ``call``.

    Raises:
        BeeError: ``unauthorized`` when the call carries none (the HTTP edge refuses such requests first).
    """
    if not call.caller:
        raise BeeError(ErrorCode.UNAUTHORIZED, "this request carries no verified actor; send a valid bearer token")
    return call.caller


def _bound(store: SqlStore, tool: str) -> Handler:
    from bee_tracker import calls

    def handler(call: Call[Any]) -> dict[str, Any]:
        return calls.run(store, tool, actor_of(call), call.args)

    handler.__name__ = handler.__qualname__ = tool
    return handler


def handlers(store: SqlStore) -> dict[str, Handler]:
    """One host handler per tool of the tracker catalog, in catalog order."""
    return {spec.name: _bound(store, spec.name) for spec in load_catalog("tracker")}


def build_host(store: SqlStore, config: TrackerConfig) -> Host:
    from bee_hostkit import Host

    bound = handlers(store)
    return Host(
        name="bee-tracker",
        title="Bee tracker",
        catalog=load_catalog("tracker"),
        handlers=bound,
        instructions=INSTRUCTIONS,
        # Read on both routes of a tools/call (Host.answer): the SDK's and the fast path.
        caller_of=_actor_in,
        deadlines=dict.fromkeys(bound, config.deadline_seconds),
    )


def _hinted(ctx: ServerRequestContext[Any, Any], result: dict[str, Any]) -> dict[str, Any]:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        result.update(ttlMs=skills.TTL_MS, cacheScope=skills.CACHE_SCOPE)
    return result


def add_skills(server: Server[Any], store: SqlStore) -> None:
    """Serve the Skills extension: advertised in both eras, skills/list, skills/get, resources/list and /read (the
    skill's files, and the tracker's own resources: :mod:`bee_tracker.listening.resources`)."""
    import mcp_types as types
    from mcp.shared.exceptions import MCPError
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    class _GetSkillParams(types.RequestParams):
        uri: str

    server.extensions[skills.EXTENSION_ID] = {}

    async def list_skills(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams) -> dict[str, Any]:
        if params.cursor:
            raise MCPError(code=types.INVALID_PARAMS, message="unknown cursor: the skill listing has one page")
        return _hinted(ctx, {"skills": [skill.entry() for skill in skills.bundled()]})

    async def get_skill(ctx: ServerRequestContext[Any, Any], params: _GetSkillParams) -> dict[str, Any]:
        skill = skills.find_skill(params.uri)
        if skill is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"no skill is served at {params.uri}; see skills/list")
        return _hinted(ctx, {"skill": skill.entry()})

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        listed = []
        for skill in skills.bundled():
            for skill_file in skill.files:
                listed.append(
                    types.Resource(
                        uri=skill_file.uri,
                        name=skill.name if skill_file.uri == skill.uri else skill_file.uri.rsplit("/", 1)[-1],
                        description=skill.frontmatter.get("description"),
                        mime_type="text/markdown",
                        size=len(skill_file.data),
                    )
                )
        return types.ListResourcesResult(resources=listed)

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        found = skills.find_file(str(params.uri))
        if found is None:
            return await _read_tracker(ctx, store, str(params.uri))
        contents = types.TextResourceContents(uri=found.uri, mime_type="text/markdown", text=found.data.decode("utf-8"))
        result = types.ReadResourceResult(contents=[contents])
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            result = result.model_copy(update={"ttl_ms": skills.TTL_MS, "cache_scope": skills.CACHE_SCOPE})
        return result

    server.add_request_handler("skills/list", types.PaginatedRequestParams, list_skills)
    server.add_request_handler("skills/get", _GetSkillParams, get_skill)
    server.add_request_handler("resources/list", types.PaginatedRequestParams, list_resources)
    server.add_request_handler("resources/read", types.ReadResourceRequestParams, read_resource)
    server.middleware.append(_LegacyExtensions())


async def _read_tracker(ctx: ServerRequestContext[Any, Any], store: SqlStore, uri: str) -> types.ReadResourceResult:
    """``resources/read`` of an issue, a ready queue or an actor's claims (:mod:`bee_tracker.listening.resources`)."""
    import mcp_types as types

    from bee_hostkit import threads
    from bee_tracker.listening import resources

    actor = _actor_in(getattr(ctx.request, "scope", {})) or ""
    try:
        text = await threads.run_sync(resources.read, store, actor, uri)
    except BeeError as error:
        raise resources.mcp_error(error) from None
    contents = types.TextResourceContents(uri=uri, mime_type=resources.MIME_TYPE, text=text)
    return types.ReadResourceResult(contents=[contents])


class _LegacyExtensions:
    """Put ``capabilities.extensions`` back into the 2025-11-25 initialize result (the SDK's sieve drops it)."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            capabilities = dict(result.get("capabilities") or {})
            capabilities["extensions"] = {**(capabilities.get("extensions") or {}), skills.EXTENSION_ID: {}}
            result = {**result, "capabilities": capabilities}
        return result


def edge_limits(config: TrackerConfig) -> EdgeLimits:
    """What the HTTP edge enforces for this tracker: admission of /mcp requests (a count, the queued work's cost,
    each client's share), connection caps, header caps, header and request timeouts.

    The queue target and its floor are per process (a wait, not a share of capacity): workers keep them whole; so
    are the connection caps, which guard each process's own file descriptors.
    """
    return EdgeLimits(
        max_header_bytes=config.max_header_bytes,
        max_header_line_bytes=config.max_header_line_bytes,
        max_in_flight=config.max_in_flight,
        max_queue_seconds=config.max_queue_seconds or None,
        min_in_flight=config.min_in_flight,
        admitted_paths=frozenset({"/mcp"}),
        request_timeout_seconds=config.request_timeout_seconds,
        header_timeout_seconds=config.header_timeout_seconds,
        max_connections=config.max_http_connections,
        max_connections_per_peer=config.max_http_connections_per_peer,
        max_streams=config.max_listens,
        stream_stall_seconds=config.listen_stall_seconds,
        stream_paths=frozenset({"/board/events"}),
    )


def listen_limits(config: TrackerConfig) -> ListenLimits:
    """How far listening goes for this tracker (:mod:`bee_tracker.listening.limits`)."""
    return ListenLimits(
        streams=config.max_listens,
        per_actor=config.max_listens_per_actor,
        uris=config.max_listen_uris,
        buffer=config.listen_buffer,
    )


def preload() -> None:
    """Import now what the app's background builds import (the SDK, the MCP server, PyJWT, the board): a spare
    (:mod:`bee_contracts.spare`) does this while nobody waits, so its first answer after taking over does not."""
    import jwt  # noqa: F401 -- imported for its side effect, as below

    from bee_hostkit.http import fast  # noqa: F401
    from bee_tracker import board  # noqa: F401
    from bee_tracker.board import board_routes  # noqa: F401
    from bee_tracker.oauth import routes  # noqa: F401 -- a sign-in mode's routes (the SDK's auth handlers)


def build_app(store: SqlStore, verifier: Verifier, config: TrackerConfig) -> Starlette:
    """The tracker's ASGI app: POST /mcp (a bearer token required), GET /health, the web board at /board/
    (sessions), and in a sign-in mode the protected resource metadata and the built-in authorization server
    (:mod:`bee_tracker.oauth`). ``verifier`` checks pasted tokens.

    The app listens as soon as the store is checked. The MCP server and the board are built in the background right
    after start-up, and a request for either that comes sooner waits for it; until both are built ``/health``
    answers 503 ``starting`` (so a supervisor does not count the replica ready), and one that cannot be built makes
    it answer 503 ``failed`` with the reason (and is logged), so a supervisor restarts the tracker.
    """

    sdk_loaded = threading.Event()

    def build_server() -> HostServer:
        # The SDK is imported by now (the endpoint's build imports it before calling this): the board's build may
        # import it too.
        sdk_loaded.set()
        # The token check of the first request (on the event loop, before it waits for this) needs PyJWT: load it
        # first, here in the background, rather than there.
        import jwt  # noqa: F401 -- imported for its side effect: loaded before any request needs it

        from bee_hostkit.http.fast import HostServer

        host = build_host(store, config)
        server = host.build_server()
        add_skills(server, store)
        add_prompts(server, store, _actor_in)
        listening.attach(server)
        # tools/call and tools/list take the fast path: the same host, answering as it does on the SDK's route.
        return HostServer(server, host)

    signin = assembly.resource_side(config, verifier, store)
    listening = Listening(store, config.store, listen_limits(config), _actor_in)

    def build_board() -> Built:
        from bee_tracker.board import board_routes

        if signin.advertises or config.oidc_client_id:
            # The sign-in's routes import the SDK. Two threads importing its modules at once can deadlock on
            # Python's per-module import locks (each holding a submodule the other needs), so this build waits
            # for the MCP endpoint's, which imports it first.
            sdk_loaded.wait(SDK_WAIT_SECONDS)
        allowed = (config.host, *config.allowed_hosts)
        extra, grants, idp = assembly.board_parts(config, signin, store)
        routes = board_routes(
            store,
            verifier,
            allowed_hosts=allowed,
            deadline_seconds=config.deadline_seconds,
            grants=grants,
            idp=idp,
            changes=listening.bus,
        )
        return Starlette(routes=[*extra, *routes]), None

    board = Deferred("the board", build_board)
    info = version_info()

    async def health(request: Request) -> JSONResponse:
        # The pid tells an operator (and the tests) which of several workers answered.
        parts = request.app.state.deferred
        # A replica that listens while it builds takes connections on a shared address: its health waits for the
        # build, as /mcp does, so a caller of the address never sees "starting" from a replica about to serve.
        with anyio.move_on_after(HEALTH_WAIT_SECONDS):
            for part in parts:
                await part.settled()
        problems = [part.failure for part in parts if part.failure]
        if problems:
            body = {"status": "failed", "host": "tracker", "problems": problems, **info, "pid": os.getpid()}
            return JSONResponse(body, status_code=503)
        if not all(part.ready for part in parts):
            # Not ready until /mcp and the board can be served: a supervisor rolling replicas (or a load balancer)
            # must not take this one for ready and stop the other while requests here would still wait.
            starting = [part.name for part in parts if not part.ready]
            body = {"status": "starting", "host": "tracker", "starting": starting, **info, "pid": os.getpid()}
            return JSONResponse(body, status_code=503)
        return JSONResponse({"status": "ok", "host": "tracker", **info, "pid": os.getpid()})

    def startup() -> None:
        # Verify the store before listening: a broken database keeps the server from starting at all.
        store.migrate()
        store.check()
        if config.custom_statuses or config.custom_types:
            store.register(statuses=config.custom_statuses, types=config.custom_types)
        if signin.access is not None:
            signin.access.keys.load()  # the access-token keys, read (or made) before any token is checked
        listening.start(asyncio.get_running_loop())  # the lifespan runs this on the server's loop
        logger.info("tracker store ready (%s)", store.db.dialect)

    def shutdown() -> None:
        listening.stop()
        store.close()

    return mcp_http_app(
        build_server,
        hosts=(config.host, *config.allowed_hosts),
        wrappers=[lambda app: BearerAuth(app, signin)],
        routes=[
            Route("/health", health, methods=["GET"]),
            # Every other path is the board's once it is built (its pages under /board, / leading there, the
            # favicon): its own routes decide, so a path it does not know gets the 404 or 405 it always did.
            Route("/{rest:path}", board),
        ],
        deferred=[board],
        on_startup=startup,
        on_shutdown=shutdown,
    )
