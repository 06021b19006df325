"""The HTTP layer: a host served over Streamable HTTP by uvicorn, behind an edge that enforces the limits.

Installed with the ``http`` extra (``bee-hostkit[http]``). Each module holds one piece: :mod:`.app` (the SDK's
session manager in a Starlette app), :mod:`.fast` (the stateless fast path), :mod:`.body` (the body read once),
:mod:`.deferred` (parts built once the server has started), :mod:`.edge` (limits in uvicorn's protocol) with its
rules :mod:`.limits`, :mod:`.admission`, :mod:`.clients`, :mod:`.connections` and :mod:`.descriptors`,
:mod:`.access_log`, and the runs :mod:`.serve` (one process) and :mod:`.workers` (several). Names load on first use,
so the CLI reads :class:`EdgeLimits` without importing uvicorn.
"""

from typing import TYPE_CHECKING

from bee_contracts.lazy import lazy_exports

if TYPE_CHECKING:
    from bee_hostkit.http.app import mcp_http_app
    from bee_hostkit.http.deferred import Built, Deferred
    from bee_hostkit.http.fast import HostServer
    from bee_hostkit.http.limits import EdgeLimits
    from bee_hostkit.http.serve import serve_http
    from bee_hostkit.http.workers import serve_http_workers

__all__ = ["Built", "Deferred", "EdgeLimits", "HostServer", "mcp_http_app", "serve_http", "serve_http_workers"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Built": "bee_hostkit.http.deferred",
        "Deferred": "bee_hostkit.http.deferred",
        "EdgeLimits": "bee_hostkit.http.limits",
        "HostServer": "bee_hostkit.http.fast",
        "mcp_http_app": "bee_hostkit.http.app",
        "serve_http": "bee_hostkit.http.serve",
        "serve_http_workers": "bee_hostkit.http.workers",
    },
)
