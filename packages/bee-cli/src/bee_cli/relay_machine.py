"""The warm relay's logic, apart from any I/O: the editor's bytes, the host's bytes and events in; bytes out.

:class:`RelayMachine` is what a front end knows about its session with a warm host that may be replaced under it. It
never touches a socket or a clock: :mod:`bee_cli.relay` feeds it what arrives and the time, writes what it gives,
and does what it asks (attach a host, drop one that stopped answering). So every case — a replay, a refusal, a host
replaced mid-request, a replacement that dies too — is tested in memory (tests/cli/test_relay_machine.py).

What it keeps, per session:

- the editor's stream, split by the one framing (:mod:`bee_contracts.framing`): a frame over the limit is never
  forwarded but answered here exactly as the host's transport answers it, the last frame too (one without a newline
  before stdin closes);
- the ``initialize`` request and ``notifications/initialized`` of a 2025-11-25 session, and every request in flight by
  id: its line, whether it is a read (every method but ``tools/call`` is; a tool call is when the host's welcome lists
  the tool as read-only, or for the discovery view, the tool ``bee_tool_invoke`` names), and how many hosts it
  reached whole;
- when the host is lost (it died, was replaced for an upgrade, or stopped answering): a read that reached fewer than
  :data:`MAX_ATTEMPTS` hosts is sent again to the next host, after the 2025-11-25 handshake is replayed to it (its
  answer swallowed); a write that reached the host is answered with a retryable ``unavailable`` error whose outcome is
  unknown; a read that reached :data:`MAX_ATTEMPTS` hosts is answered ``unavailable`` too (it may be what kills
  them). Requests still queued simply go to the next host. A replacement that dies before it answers the replayed
  handshake loses nothing: the replays wait in the queue for the one after;
- the host's liveness: while a request is in flight and the host has sent nothing for :data:`PING_AFTER` seconds, a
  ``ping`` of the front end's own is sent (its answer swallowed); a host that then sends nothing for
  :data:`PING_TIMEOUT` seconds more is given up as if it had died, and the loop tells the warm supervisor, which
  checks it and replaces it. A host stopped with SIGSTOP costs a session at most those ten seconds;
- while no host can be had, every request is answered with a retryable ``unavailable`` error; when the installed Bee
  no longer speaks this front end's wire, every request is answered with that, not retryable.

No request is left without an answer, and nothing is answered twice.
"""

from __future__ import annotations

import json
import re
from collections import deque

from bee_contracts.framing import Frame, FrameSplitter, Oversized, oversized_answer
from bee_contracts.limits import MAX_FRAME_BYTES
from bee_contracts.wire import (
    INTERNAL_ERROR,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    compact,
    complete,
    error_body,
    error_frame,
    result_frame,
    tool_failure,
)

# Annotations only (mypy reads this name as True): the typing module is a megabyte the front end need not load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: How many hosts a read is sent to before it is answered ``unavailable`` instead.
MAX_ATTEMPTS = 2
#: Silence from the host, with a request in flight, after which the front end pings it (seconds).
PING_AFTER = 5.0
#: Further silence after the ping after which the host is given up (seconds).
PING_TIMEOUT = 5.0
#: The host's lines are split with room to spare: its own transport caps them at the frame limit.
_HOST_LINE_LIMIT = 2 * MAX_FRAME_BYTES
#: A response as the SDK (pydantic) and Bee's framing write it: the id comes right after the version.
_RESPONSE = re.compile(rb'\{"jsonrpc":"2\.0","id":(-?\d+|"(?:[^"\\]|\\.)*"),"(?:result|error)"')
#: Host lines not in the SDK's own form are parsed for their id only when at most this long.
_PARSE_AT_MOST = 64 * 1024
#: Ids of the requests the front end makes itself: no editor's request is answered with their answers.
_OWN_ID = "bee-frontend-"


class Pending:
    """A request in flight: its line, what it is, and how many hosts it reached whole."""

    __slots__ = ("arguments", "attempts", "line", "meta", "method", "read", "sent", "tool")

    def __init__(
        self, line: bytes, method: str, meta: dict[str, object] | None, tool: str | None, arguments: object
    ) -> None:
        self.line = line
        self.method = method
        #: Whether it may be sent again: judged by the rule of the host it reached (see :meth:`RelayMachine.sent`).
        self.read = method != "tools/call"
        self.arguments = arguments
        #: The 2026-07-28 envelope it came with (None in a 2025-11-25 session).
        self.meta = meta
        self.tool = tool
        #: Hosts it reached whole; whether the current host has it.
        self.attempts = 0
        self.sent = False


class Unit:
    """One line on its way to the host, and how much of it was written."""

    __slots__ = ("data", "pending", "written")

    def __init__(self, data: bytes, pending: Pending | None = None) -> None:
        self.data = data
        self.written = 0
        self.pending = pending


class HostRule:
    """What a host's welcome says about its tools: which calls are reads (safe to send again), and its info."""

    __slots__ = ("dispatcher", "reads", "server_info")

    def __init__(self, welcome: dict[str, object]) -> None:
        reads = welcome.get("reads")
        self.reads = frozenset(r for r in reads if isinstance(r, str)) if isinstance(reads, list) else frozenset()
        dispatcher = welcome.get("dispatcher")
        self.dispatcher = dispatcher if isinstance(dispatcher, dict) else None
        self.server_info = welcome.get("serverInfo")

    def is_read(self, tool: str | None, arguments: object) -> bool:
        if tool in self.reads:
            return True
        dispatcher = self.dispatcher
        if dispatcher is None or tool != dispatcher.get("tool") or not isinstance(arguments, dict):
            return False
        reads = dispatcher.get("reads")
        return isinstance(reads, list) and arguments.get(dispatcher.get("argument")) in reads


def _as_id(value: object) -> int | str | None:
    """``value`` when it is an id a request may carry (a string or an integer), else None."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


class RelayMachine:
    """One editor session relayed to a warm host that may be replaced under it.

    Inputs: :meth:`client_data`, :meth:`client_eof`, :meth:`attached`, :meth:`host_data`, :meth:`host_lost`,
    :meth:`attach_failed`, :meth:`sent` and :meth:`tick`, each with the time. Outputs: :meth:`client_bytes`
    (for stdout), :meth:`host_bytes` (for the host's socket), and the wishes :attr:`wants_host`,
    :attr:`give_up_host`, :meth:`shut_host` and :meth:`finished`; :meth:`next_wake` says when time matters next.
    """

    def __init__(self, rule: HostRule | None = None, *, limit: int = MAX_FRAME_BYTES) -> None:
        self.limit = limit
        self.client_frames = FrameSplitter(limit)
        self.host_lines = FrameSplitter(_HOST_LINE_LIMIT)
        self.rule = rule
        #: Whether a host is connected (``rule`` is its welcome's).
        self.connected = rule is not None
        self.in_flight: dict[int | str, Pending] = {}
        self.initialize: dict[str, object] | None = None
        self.initialized: bytes | None = None
        self.queue: deque[Unit] = deque()
        #: Bytes in :attr:`queue` (the loop stops reading stdin while too many wait).
        self.queued = 0
        self.priority: deque[Unit] = deque()
        #: The replayed handshake's id while its answer is awaited: nothing from the queue goes before it.
        self.holding: str | None = None
        self.swallow: set[str] = set()
        self.own_requests = 0
        self.to_client = bytearray()
        #: Set when a host must be attached (the loop attaches one and calls :meth:`attached` or
        #: :meth:`attach_failed`); cleared by either.
        self.wants_host = False
        #: Set when the host stopped answering: the loop closes its socket, reports it, then calls :meth:`host_lost`.
        self.give_up_host = False
        self.too_old: str | None = None
        self.eof_at: float | None = None
        self._shut = False
        self.last_from_host = 0.0
        self.ping_sent_at: float | None = None
        self.modern_meta: dict[str, object] | None = None
        self._writing: deque[Unit] = self.queue

    # -- the editor's side ---------------------------------------------------------------------------------------

    def client_data(self, data: bytes, now: float) -> None:
        """Bytes the editor wrote."""
        for item in self.client_frames.feed(data):
            self._client_item(item, now)

    def client_eof(self, now: float) -> None:
        """The editor closed stdin: a last line without its newline is still a frame."""
        for item in self.client_frames.finish():
            self._client_item(item, now)
        self.eof_at = now
        if not self.connected:
            self.wants_host = False  # the editor has gone: nothing more is served

    def _client_item(self, item: Frame | Oversized, now: float) -> None:
        if isinstance(item, Oversized):
            self.to_client += oversized_answer(item, self.limit)  # the host's own answer; the frame never goes on
            return
        self._client_line(item.data + b"\n", now)

    def _client_line(self, line: bytes, now: float) -> None:
        pending: Pending | None = None
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            message = None  # the host answers what it cannot read
        if isinstance(message, dict) and isinstance(method := message.get("method"), str):
            params = message.get("params")
            params = params if isinstance(params, dict) else {}
            if "id" not in message:
                self._client_notification(method, params, line)
            elif (key := _as_id(message["id"])) is not None:
                pending = self._request(key, message, method, params, line)
                if pending is None:
                    return  # answered here
        if self.too_old is not None:
            return  # no host will take it; the requests among such lines were answered above
        self.queue.append(Unit(line, pending))
        self.queued += len(line)
        if not self.connected:
            self.wants_host = True

    def _client_notification(self, method: str, params: dict[str, object], line: bytes) -> None:
        if method == "notifications/initialized":
            self.initialized = line
        elif method == "notifications/cancelled":
            cancelled = _as_id(params.get("requestId"))
            if cancelled is not None:
                self.in_flight.pop(cancelled, None)

    def _request(
        self, key: int | str, message: dict[str, object], method: str, params: dict[str, object], line: bytes
    ) -> Pending | None:
        meta = params.get("_meta")
        modern = meta if isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta else None
        if modern is not None:
            self.modern_meta = modern
        tool = params.get("name") if method == "tools/call" else None
        tool = tool if isinstance(tool, str) else None
        if method == "initialize":
            self.initialize = message
        pending = Pending(line, method, modern, tool, params.get("arguments") if tool else None)
        if self.too_old is not None:
            self._answer_error(key, pending, self.too_old, retryable=False, outcome_unknown=False)
            return None
        self.in_flight[key] = pending
        return pending

    # -- the host's side -----------------------------------------------------------------------------------------

    def attached(self, rule: HostRule, now: float) -> None:
        """A (new) host is connected and checked: send it what it needs to carry the session on."""
        self.rule = rule
        self.connected = True
        self.wants_host = False
        self.give_up_host = False
        self.last_from_host = now
        self.ping_sent_at = None
        initialize = self.initialize
        if initialize is None or any(p.method == "initialize" for p in self.in_flight.values()):
            return  # no handshake to replay: the editor's own initialize (if any) is in the queue
        # The 2025-11-25 handshake again, its answer swallowed (the editor has one), then the editor's initialized.
        replay_id = self._own_id("replay")
        self.priority.append(Unit(compact({**initialize, "id": replay_id}) + b"\n"))
        self.holding = replay_id
        self.swallow.add(replay_id)

    def attach_failed(self, reason: str, *, too_old: bool, now: float) -> None:
        """No host could be had: answer every request in flight or queued; forget the queue."""
        self.wants_host = False
        if too_old:
            self.too_old = (
                f"the installed Bee no longer speaks this front end's protocol ({reason}); restart this MCP server in "
                "your editor to use the new version"
            )
            self._fail_all(self.too_old, retryable=False)
        else:
            self._fail_all(f"the warm Bee host is unavailable ({reason}); retry shortly", retryable=True)

    def host_data(self, data: bytes, now: float) -> None:
        """Bytes the host wrote."""
        self.last_from_host = now
        self.ping_sent_at = None
        for item in self.host_lines.feed(data):
            if isinstance(item, Frame):
                self._host_line(item.data + b"\n")
            # An oversized line cannot come from a Bee host (its transport caps them); it is dropped, not relayed.

    def _host_line(self, line: bytes) -> None:
        found_id: object = None
        found = _RESPONSE.match(line)
        if found is not None:
            raw = found.group(1)
            found_id = json.loads(raw) if raw.startswith(b'"') else int(raw)
        elif len(line) <= _PARSE_AT_MOST and b'"id"' in line:
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                message = None
            if isinstance(message, dict) and "method" not in message:
                found_id = message.get("id")
        key = _as_id(found_id)
        if isinstance(key, str) and key in self.swallow:
            self.swallow.discard(key)
            if key == self.holding:
                self.holding = None
                if self.initialized is not None:
                    self.priority.append(Unit(self.initialized))
            return
        if key is not None:
            self.in_flight.pop(key, None)
        self.to_client += line

    def host_lost(self, now: float) -> None:
        """The host's connection ended (or was given up): what reached it is replayed or answered; what was queued
        goes to the next host."""
        self.connected = False
        self.give_up_host = False
        self.host_lines = FrameSplitter(_HOST_LINE_LIMIT)
        self.priority.clear()
        self.holding = None
        self.swallow.clear()
        self.ping_sent_at = None
        replays: list[Unit] = []
        for key, pending in list(self.in_flight.items()):
            if not pending.sent:
                continue  # still queued: it goes to the next host in its turn
            pending.sent = False
            if pending.read and pending.attempts < MAX_ATTEMPTS:
                replays.append(Unit(pending.line, pending))
                continue
            del self.in_flight[key]
            what = pending.tool or pending.method
            if pending.read:
                message = f"the warm Bee host was lost twice while {what} ran; retry shortly"
            else:
                message = (
                    f"the warm Bee host restarted while {what} ran; whether it took effect is unknown: check, then "
                    "call it again"
                )
            self._answer_error(key, pending, message, retryable=True, outcome_unknown=not pending.read)
        for unit in self.queue:
            unit.written = 0  # a line half written never reached the host whole: it is sent again
        self.queue.extendleft(reversed(replays))
        self.queued += sum(len(unit.data) for unit in replays)
        if self.eof_at is None and (self.queue or self.in_flight):
            self.wants_host = True

    # -- what goes to the host -----------------------------------------------------------------------------------

    def host_bytes(self) -> memoryview | None:
        """What to write to the host next (the rest of one line), or None; say how much was written with
        :meth:`sent` before anything else is fed in."""
        if not self.connected:
            return None
        queue = self.priority if self.priority else (self.queue if self.holding is None else None)
        if not queue:
            return None
        self._writing = queue
        unit = queue[0]
        return memoryview(unit.data)[unit.written :]

    def sent(self, count: int) -> None:
        """``count`` bytes of what :meth:`host_bytes` gave were written."""
        queue = self._writing
        assert queue, "sent() without host_bytes()"
        unit = queue[0]
        unit.written += count
        if unit.written < len(unit.data):
            return
        queue.popleft()
        if queue is self.queue:
            self.queued -= len(unit.data)
        pending = unit.pending
        if pending is not None:
            pending.sent = True
            pending.attempts += 1
            if pending.tool is not None and self.rule is not None:
                pending.read = self.rule.is_read(pending.tool, pending.arguments)

    # -- time ------------------------------------------------------------------------------------------------------

    def _waiting_on_host(self) -> bool:
        return self.holding is not None or any(p.sent for p in self.in_flight.values())

    def tick(self, now: float) -> None:
        """Time passed: ping a silent host with a request in flight, give up one that stays silent."""
        if not self.connected or self.give_up_host:
            return
        if self.ping_sent_at is not None:
            if now - self.ping_sent_at >= PING_TIMEOUT:
                self.give_up_host = True
            return
        if self._waiting_on_host() and now - self.last_from_host >= PING_AFTER:
            self.ping_sent_at = now
            ping: dict[str, object] = {"jsonrpc": "2.0", "id": self._own_id("ping"), "method": "ping"}
            if self.modern_meta is not None:
                ping["params"] = {"_meta": self.modern_meta}
            self.swallow.add(str(ping["id"]))
            self.priority.append(Unit(compact(ping) + b"\n"))

    def next_wake(self) -> float | None:
        """When :meth:`tick` next has something to do (a monotonic time), or None."""
        if not self.connected:
            return None
        if self.ping_sent_at is not None:
            return self.ping_sent_at + PING_TIMEOUT
        if self._waiting_on_host():
            return self.last_from_host + PING_AFTER
        return None

    # -- the end -----------------------------------------------------------------------------------------------

    def shut_host(self) -> bool:
        """True once, when stdin has closed and everything queued reached the host: the loop shuts the socket's
        write side, and the host's session ends as a cold host's would."""
        if self._shut or self.eof_at is None or not self.connected or self.queue or self.priority:
            return False
        self._shut = True
        return True

    def finished(self, now: float, drain_seconds: float) -> bool:
        """Whether the relay is done: stdin closed and the host gave its last answers (or had the time to)."""
        if self.eof_at is None:
            return False
        return not self.connected or now - self.eof_at >= drain_seconds

    def client_bytes(self) -> bytearray:
        """What waits for the editor's stdout: the loop writes what it can and deletes that from the front."""
        return self.to_client

    # -- answers the relay makes itself ----------------------------------------------------------------------------

    def _own_id(self, what: str) -> str:
        self.own_requests += 1
        return f"{_OWN_ID}{what}-{self.own_requests}"

    def _fail_all(self, message: str, *, retryable: bool) -> None:
        for key, pending in list(self.in_flight.items()):
            unknown = pending.sent and not pending.read  # a write the last host received may have landed
            self._answer_error(key, pending, message, retryable=retryable, outcome_unknown=unknown)
        self.in_flight.clear()
        self.queue.clear()
        self.queued = 0

    def _answer_error(
        self, key: int | str, pending: Pending, message: str, *, retryable: bool, outcome_unknown: bool
    ) -> None:
        if pending.method != "tools/call":
            self.to_client += error_frame(key, INTERNAL_ERROR, message)
            return
        result: dict[str, Any] = tool_failure(
            error_body(message, "unavailable", retryable=retryable, outcome_unknown=outcome_unknown)
        )
        if pending.meta is not None:
            complete(result)
            rule = self.rule
            if rule is not None and isinstance(rule.server_info, dict):
                result["_meta"] = {SERVER_INFO_KEY: rule.server_info}
        self.to_client += result_frame(key, result)
