"""Names the dead-code check (vulture, run by ./dev test) cannot see used, each with who uses it.

Click commands are recognised by their decorators instead (see ./dev). vulture reads this file; nothing runs it.
"""

# ruff: noqa: B018 -- a bare attribute is how a vulture whitelist marks a name as used

from psycopg import ServerCursor
from pybind11_pixelmatch import Options as KernelOptions

from bee_core.artifacts.verify import Verifier
from bee_core.packet.cache import ContentCache
from bee_core.skills.remote import _Got, _Page
from bee_design.bundle.references import _Collector
from bee_hostkit.http._uvicorn import RequestResponseCycle, ServerState
from bee_hostkit.http.descriptors import EdgeLoop, edge_loop
from bee_hostkit.http.fast import FastPath, _ListingContext
from bee_tracker.board.columns import Board, Card, Column, Options
from bee_tracker.board.epics import Progress
from bee_tracker.oauth.provider import Provider
from bee_tracker.store.feed import Feed
from bee_tracker.store.sql import SqlStore

_Page.model_config  # pydantic reads model_config: these skills/list and skills/get answers keep unknown keys
_Got.model_config
Verifier.rehashes  # observability counter: tests assert when the verifier re-hashes and when it trusts a stat
ContentCache.misses  # observability counter: tests read the outline cache's hit rate
FastPath.answered  # observability counter: tests read how many requests the tracker's fast path answered
RequestResponseCycle.disconnected  # set by the HTTP edge; uvicorn's ASGI receive() reads it
ServerState.total_requests  # counted by the HTTP edge as uvicorn's own protocol does; uvicorn reads it
edge_loop  # uvicorn's loop setting names it (bee_hostkit.http.serve.uvicorn_settings); uvicorn imports and calls it
EdgeLoop._accept_connection  # asyncio's selector loop calls it for each ready listening socket
handler = None
handler.__qualname__  # set so logs and tracebacks name the tracker tool a bound handler runs
KernelOptions.includeAA  # set by bee_design.visual.kernel; pybind11-pixelmatch's C++ reads these options
KernelOptions.diffMask
ServerCursor.itersize  # psycopg fetches a streamed export this many rows at a time
SqlStore.import_lines  # the tests' way to import lines in process (the CLI imports files and directories)
# The seam of the tracker's listening work (bee_tracker.store.feed): what a host subscribes to, and when it wakes to
# tell listeners that a claim expired; the tests use both.
SqlStore.next_lease_expiry
Feed.subscribe
_Collector.handle_startendtag  # html.parser.HTMLParser calls these overrides while parsing a design file
_Collector.handle_endtag
_Collector.handle_data
# The board's templates read these (Jinja2 looks them up by name while rendering).
Card.blocked_by
Card.lease_expires_at
Column.cards
Board.elsewhere
Options.assignees
Progress.epic
Progress.in_progress
Progress.percent
# The SDK's authorization server handlers (mcp.server.auth.handlers) call the provider interface's methods.
Provider.get_client
Provider.register_client
Provider.authorize
Provider.load_authorization_code
Provider.exchange_authorization_code
Provider.load_refresh_token
Provider.exchange_refresh_token
Provider.load_access_token
Provider.revoke_token
# The SDK's request runner reads these from the dispatch context the fast path hands it (its DispatchContext protocol).
_ListingContext.message_metadata
_ListingContext.cancel_requested
_ListingContext.can_send_request
_ListingContext.send_raw_request
_ListingContext.notify
# The warm handshake's messages (bee_contracts.warm): TypedDict fields, read by key from the JSON lines.
message = None
message.versionInfo
message.serverInfo
