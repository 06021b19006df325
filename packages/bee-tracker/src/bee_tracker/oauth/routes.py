"""The sign-in's HTTP routes: protected resource metadata (RFC 9728) for ``/mcp`` and the board, and, with the
built-in server, its metadata (RFC 8414) and the SDK's ``/authorize``, ``/token``, ``/register`` and ``/revoke``.

The SDK's :func:`mcp.server.auth.routes.create_auth_routes` builds the four endpoints (with their CORS and body
limits) and is used as it is; only its metadata route is replaced, for two reasons the SDK's static document cannot
serve: the issuer is the origin each request reached (:mod:`.origin`) unless ``--public-url`` fixes it, and the
document says what this server adds — Client ID Metadata Documents, the ``iss`` of RFC 9207 in every authorization
response (SEP-2468), public clients (``none`` at the token endpoint), and its scopes. Every route answers only for
the names the tracker answers for (421 otherwise, as the board), and sets the request's origin for the provider.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from mcp.server.auth.json_response import PydanticJSONResponse
from mcp.server.auth.routes import AUTHORIZATION_PATH, build_metadata, cors_middleware, create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from bee_tracker.board.headers import host_name
from bee_tracker.oauth import origin, scopes
from bee_tracker.oauth.documents import DocumentError, Documents, is_document_id
from bee_tracker.oauth.provider import Provider
from bee_tracker.oauth.resource import SignIn

AS_METADATA_PATH = "/.well-known/oauth-authorization-server"
_REGISTRATION = ClientRegistrationOptions(
    enabled=True, valid_scopes=list(scopes.FOR_CLIENTS), default_scopes=list(scopes.FOR_CLIENTS)
)
_REVOCATION = RevocationOptions(enabled=True)
_AUTH_METHODS = ["none", "client_secret_post", "client_secret_basic"]


class OriginEdge:
    """Answer only for the tracker's names (421 otherwise) and set the request's origin (:data:`origin.CURRENT`)."""

    def __init__(self, app: ASGIApp, names: frozenset[str], public_origin: str | None) -> None:
        self.app = app
        self.names = names
        self.public_origin = public_origin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
        if host_name(host).lower() not in self.names:
            response = Response("This tracker does not answer for that host name (see --allowed-host).", 421)
            await response(scope, receive, send)
            return
        token = origin.CURRENT.set(origin.of_request(scope, self.public_origin))
        try:
            await self.app(scope, receive, send)
        finally:
            origin.CURRENT.reset(token)


@lru_cache(maxsize=64)
def server_metadata(issuer: str) -> OAuthMetadata:
    """The built-in server's metadata for ``issuer`` (an origin)."""
    base = build_metadata(AnyHttpUrl(issuer), None, _REGISTRATION, _REVOCATION)
    document: dict[str, Any] = base.model_dump(mode="json", exclude_none=True)
    for endpoint in ("authorization_endpoint", "token_endpoint", "registration_endpoint", "revocation_endpoint"):
        document[endpoint] = issuer + "/" + document[endpoint].rstrip("/").rsplit("/", 1)[-1]
    document.update(
        issuer=issuer,
        scopes_supported=list(scopes.FOR_CLIENTS),
        token_endpoint_auth_methods_supported=_AUTH_METHODS,
        revocation_endpoint_auth_methods_supported=_AUTH_METHODS,
        client_id_metadata_document_supported=True,
        authorization_response_iss_parameter_supported=True,
    )
    return OAuthMetadata.model_validate(document)


@lru_cache(maxsize=128)
def resource_metadata(here: str, path: str, authorization_server: str) -> ProtectedResourceMetadata:
    """The protected resource metadata of the tracker's ``path`` at origin ``here``."""
    offered = scopes.FOR_MCP if path == origin.MCP_PATH else (scopes.READ, scopes.ADMIN)
    return ProtectedResourceMetadata.model_validate(
        {
            "resource": origin.resource(here, path),
            "authorization_servers": [authorization_server],
            "scopes_supported": list(offered),
            "bearer_methods_supported": ["header"],
            "resource_name": "Bee tracker" if path == origin.MCP_PATH else "Bee tracker board",
        }
    )


def _metadata_route(path: str, signin: SignIn) -> Route:
    async def metadata(request: Request) -> Response:
        here = origin.CURRENT.get()
        document = resource_metadata(here, path, signin.authorization_server(here))
        return PydanticJSONResponse(content=document, headers={"Cache-Control": "public, max-age=3600"})

    return Route(
        origin.METADATA_PREFIX + path, cors_middleware(metadata, ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"]
    )


def _server_metadata_route() -> Route:
    async def metadata(request: Request) -> Response:
        return PydanticJSONResponse(
            content=server_metadata(origin.CURRENT.get()), headers={"Cache-Control": "public, max-age=3600"}
        )

    return Route(AS_METADATA_PATH, cors_middleware(metadata, ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"])


class DocumentCheck:
    """Before the SDK's ``/authorize`` looks a client up, fetch its metadata document when its id is a URL, so that
    a refused one is answered with the reason (400 ``invalid_client``), not the SDK's "not found"."""

    def __init__(self, app: ASGIApp, documents: Documents) -> None:
        self.app = app
        self.documents = documents

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client_id = Request(scope).query_params.get("client_id", "") if scope["type"] == "http" else ""
        if is_document_id(client_id):
            try:
                await self.documents.client(client_id)
            except DocumentError as exc:
                body = {"error": "invalid_client", "error_description": str(exc)}
                await JSONResponse(body, 400, headers={"Cache-Control": "no-store"})(scope, receive, send)
                return
        await self.app(scope, receive, send)


def signin_routes(signin: SignIn, provider: Provider | None, *, names: frozenset[str]) -> list[Route]:
    """The routes of a sign-in mode: resource metadata, and the built-in server's when ``provider`` is given."""
    routes = [_metadata_route(origin.MCP_PATH, signin), _metadata_route(origin.BOARD_PATH, signin)]
    if provider is not None:
        # The issuer passed here only shapes the SDK's own metadata route, which is replaced.
        sdk = create_auth_routes(
            provider,
            issuer_url=AnyHttpUrl("http://localhost"),
            client_registration_options=_REGISTRATION,
            revocation_options=_REVOCATION,
        )
        for route in sdk:
            if route.path == AUTHORIZATION_PATH:
                routes.append(Route(route.path, DocumentCheck(route.app, provider.documents), methods=route.methods))
            elif route.path != AS_METADATA_PATH:
                routes.append(route)
        routes.append(_server_metadata_route())
    return [
        Route(route.path, OriginEdge(route.app, names, signin.public_origin), methods=route.methods) for route in routes
    ]
