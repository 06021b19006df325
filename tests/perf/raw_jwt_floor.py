"""The floor for the tracker benchmarks: a raw Starlette app on uvicorn that verifies the same HS256 JWT with PyJWT
and answers every POST with a fixed JSON-RPC tool result. Nothing of Bee's or the SDK's runs: what is left is the
HTTP server, the framework, the token check and JSON.

usage: python raw_jwt_floor.py PORT SECRET_HEX
"""

import json
import sys

import jwt
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

RESULT = {
    "content": [{"type": "text", "text": '{"data":{}}'}],
    "structuredContent": {"data": {}},
    "isError": False,
}


def app(secret: bytes) -> Starlette:
    async def mcp(request: Request) -> Response:
        token = request.headers.get("authorization", "").partition(" ")[2]
        try:
            jwt.decode(token, secret, algorithms=["HS256"], options={"require": ["exp"]})
        except jwt.PyJWTError:
            return Response(status_code=401)
        body = json.loads(await request.body())
        answer = {"jsonrpc": "2.0", "id": body.get("id"), "result": RESULT}
        return Response(json.dumps(answer, separators=(",", ":")), media_type="application/json")

    return Starlette(routes=[Route("/mcp", mcp, methods=["POST"])])


def main() -> None:
    port, secret = int(sys.argv[1]), bytes.fromhex(sys.argv[2])
    # The settings Bee's hosts run with that matter for speed: asyncio's loop, httptools, no access log.
    uvicorn.run(app(secret), host="127.0.0.1", port=port, loop="asyncio", http="httptools", log_level="warning")


if __name__ == "__main__":
    main()
