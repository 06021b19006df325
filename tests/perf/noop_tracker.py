"""The peer for the tracker benchmark: the same HTTP stack (uvicorn through the hostkit edge, Starlette, the SDK's
stateless Streamable HTTP with the hostkit fast path in front, bearer-JWT middleware, the hostkit Host with
validation and result guard) serving one tool that does nothing.

usage: python noop_tracker.py PORT SECRET_HEX
"""

import sys

from bee_contracts import ToolSpec
from bee_hostkit import Host
from bee_hostkit.http.app import mcp_http_app
from bee_hostkit.http.fast import HostServer
from bee_hostkit.http.limits import EdgeLimits
from bee_hostkit.http.serve import serve_http
from bee_tracker.auth import hmac_verifier
from bee_tracker.middleware import BearerAuth

NOOP = ToolSpec(
    host="tracker",
    name="noop",
    title="No-op",
    description="Does nothing.",
    input_schema={"type": "object", "properties": {}, "additionalProperties": True},
    output_schema={"type": "object"},
    annotations={"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
)


def main() -> None:
    port, secret = int(sys.argv[1]), bytes.fromhex(sys.argv[2])
    host = Host("noop", [NOOP], {"noop": lambda call: {"data": {}}})
    verifier = hmac_verifier(secret)
    served = HostServer(host.build_server(), host)
    app = mcp_http_app(lambda: served, wrappers=[lambda inner: BearerAuth(inner, verifier)])
    serve_http(app, host="127.0.0.1", port=port, limits=EdgeLimits(max_in_flight=100), log_level="warning")


if __name__ == "__main__":
    main()
