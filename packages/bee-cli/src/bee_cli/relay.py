"""The relay between an editor's stdio and its warm host's socket, which outlives the host it relays to.

Bytes pass through as they are; the relay reads what it relays only as far as surviving the host needs, one
``json.loads`` per line from the editor and a match at the head of each line from the host:

- per session it keeps the ``initialize`` request and the ``notifications/initialized`` the editor sent (the
  2025-11-25 era), and every request in flight by id: its line, its method, and whether it is a read — every method
  but ``tools/call`` is, and a tool call is when the host's welcome lists the tool as read-only (the catalog's
  ``readOnlyHint``; for the discovery view, the tool ``bee_tool_invoke`` names);
- when the host's connection ends (it died, or the supervisor restarted it for an upgrade), the relay reattaches
  (:mod:`bee_cli.attach`) and, to the new host: replays the ``initialize`` (its answer swallowed) and the
  ``initialized`` of a 2025-11-25 session, replays each read that was in flight, answers each write that was in flight
  with a retryable ``unavailable`` error (whether it landed is unknown), and sends on whatever the editor wrote
  meanwhile. A 2026-07-28 session has nothing to replay but its reads: each request stands alone. So the editor sees
  a restart as, at most, one retryable error;
- a frame over the frame limit is never forwarded: it is answered here, as the host's transport would answer it
  (:func:`bee_hostkit.framing.oversized_answer`), and the rest of the line is skipped without being held;
- when stdin closes (or the editor's process is gone), what is queued is sent, the host is told the session ended,
  and the relay exits within a second, whatever the host is doing.

No request is left without an answer: while no host can be had, requests are answered with a retryable
``unavailable`` error, and a host that refuses this front end's wire (an upgrade the front end is too old for) is
reported once on stderr and in every answer after.
"""

from __future__ import annotations

import json
import os
import re
import select
import socket
import stat
import sys
import time
from collections import deque

from bee_cli.attach import Attached, TooOld, attach, in_background
from bee_contracts.limits import MAX_FRAME_BYTES
from bee_contracts.warm import WarmUnavailable, identity_digest

# Annotations only (mypy reads this name as True).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

#: After stdin closes, how long the host's last answers get to arrive: the relay is gone within a second.
DRAIN_SECONDS = 0.8
#: Stop reading a side while this much waits to be written to the other.
_BACKLOG = 4 * 1024 * 1024
_READ = 256 * 1024
_MODERN_KEY = "io.modelcontextprotocol/protocolVersion"
#: A response as the SDK (pydantic) and Bee's framing write it: the id comes right after the version.
_RESPONSE = re.compile(rb'\{"jsonrpc":"2\.0","id":(-?\d+|"(?:[^"\\]|\\.)*"),"(?:result|error)"')
_HEAD_KEEP = 64 * 1024
#: Host lines not in the SDK's own form are parsed for their id only when at most this long.
_PARSE_AT_MOST = 64 * 1024


class _Pending:
    """A request in flight: its line, what it is, and whether it reached the current host whole."""

    __slots__ = ("line", "method", "modern", "read", "sent", "tool")

    def __init__(self, line: bytes, method: str, read: bool, modern: bool, tool: str | None) -> None:
        self.line = line
        self.method = method
        self.read = read
        self.modern = modern
        self.tool = tool
        self.sent = False


class _Unit:
    """One line on its way to the host, and how much of it was written."""

    __slots__ = ("data", "pending", "written")

    def __init__(self, data: bytes, pending: _Pending | None = None) -> None:
        self.data = data
        self.written = 0
        self.pending = pending


def _as_id(value: object) -> int | str | None:
    """``value`` when it is an id a request may carry (a string or an integer), else None."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


class Relay:
    """Relays fd 0/1 to an attached warm host until stdin closes; :meth:`run` returns the exit status."""

    def __init__(self, attached: Attached, identity: dict[str, str], environ: dict[str, str], wait: float) -> None:
        self.identity = identity
        self.digest = identity_digest(identity)
        self.environ = environ
        self.wait = wait
        self.sock: socket.socket | None = None
        self.installed: object = None
        self.reads: frozenset[str] = frozenset()
        self.dispatcher: dict[str, object] | None = None
        self.server_info: object = None
        self.in_flight: dict[int | str, _Pending] = {}
        self.initialize: dict[str, object] | None = None
        self.initialized: bytes | None = None
        self.out: deque[_Unit] = deque()
        self.out_bytes = 0
        self.priority: deque[_Unit] = deque()
        self.after_init: list[_Unit] = []
        self.holding = False
        self.swallow: set[int | str] = set()
        self.replays = 0
        self.to_client = bytearray()
        self.stdin_buf = bytearray()
        self.host_buf = bytearray()
        self.host_scan = 0
        self.skipping: tuple[int, bytes] | None = None  # inside an oversized frame: bytes so far, and its head
        self.attaching: Callable[[], Attached | WarmUnavailable | None] | None = None
        self.too_old: str | None = None
        self.eof_at: float | None = None
        self.parent = os.getppid()
        self._adopt(attached)

    # -- the host -----------------------------------------------------------------------------------------------

    def _adopt(self, attached: Attached) -> None:
        attached.sock.setblocking(False)
        self.sock = attached.sock
        self.installed = attached.installed
        welcome = attached.welcome
        reads = welcome.get("reads")
        self.reads = frozenset(r for r in reads if isinstance(r, str)) if isinstance(reads, list) else frozenset()
        dispatcher = welcome.get("dispatcher")
        self.dispatcher = dispatcher if isinstance(dispatcher, dict) else None
        self.server_info = welcome.get("serverInfo")
        self.host_buf.clear()
        self.host_scan = 0

    def _lost(self) -> None:
        """The host's connection ended: forget what was partial, and reattach unless the editor is leaving."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self.host_buf.clear()
        self.host_scan = 0
        self.priority.clear()
        self.after_init.clear()
        self.holding = False
        self.swallow.clear()
        if self.out:
            self.out[0].written = 0  # a line half written never reached the host whole: it is sent again
        if self.eof_at is None:
            self._reattach()

    def _reattach(self) -> None:
        if self.attaching is not None or self.too_old is not None:
            return
        deadline = time.monotonic() + self.wait
        known = self.installed
        self.attaching = in_background(lambda: attach(self.identity, self.digest, self.environ, deadline, known))

    def _reattached(self, outcome: Attached | WarmUnavailable) -> None:
        self.attaching = None
        if isinstance(outcome, TooOld):
            self.too_old = (
                f"the installed Bee no longer speaks this front end's protocol ({outcome}); restart this MCP server "
                "in your editor to use the new version"
            )
            sys.stderr.write(f"bee: {self.too_old}\n")
            sys.stderr.flush()
            self._fail_all(self.too_old, retryable=False)
            return
        if isinstance(outcome, WarmUnavailable):
            self._fail_all(f"the warm Bee host is unavailable ({outcome}); retry shortly", retryable=True)
            return
        self._adopt(outcome)
        replays: list[_Unit] = []
        for key, pending in list(self.in_flight.items()):
            if not pending.sent:
                continue  # still queued: it goes to the new host in its turn
            if pending.read:
                replays.append(_Unit(pending.line, pending))
            else:
                del self.in_flight[key]
                self._answer_error(
                    key,
                    pending,
                    f"the warm Bee host restarted while {pending.tool or pending.method} ran; whether it took effect "
                    "is unknown: check, then call it again",
                    retryable=True,
                    outcome_unknown=True,
                )
        for pending in self.in_flight.values():
            pending.sent = False
        if self.initialized is not None:
            replays.insert(0, _Unit(self.initialized))
        initialize = self.initialize
        answered = initialize is not None and not any(p.method == "initialize" for p in self.in_flight.values())
        if initialize is not None and answered:
            # The 2025-11-25 handshake again, its answer swallowed: the editor already has one.
            self.replays += 1
            replay_id = f"bee-frontend-replay-{self.replays}"
            line = json.dumps({**initialize, "id": replay_id}, separators=(",", ":")).encode() + b"\n"
            self.swallow.add(replay_id)
            self.holding = True
            self.priority.append(_Unit(line))
            self.after_init = replays
        else:
            self.priority.extend(replays)

    def _fail_all(self, message: str, *, retryable: bool) -> None:
        """Answer every request in flight or queued with ``message``; forget the queue."""
        for key, pending in list(self.in_flight.items()):
            unknown = pending.sent and not pending.read  # a write the last host received may have landed
            self._answer_error(key, pending, message, retryable=retryable, outcome_unknown=unknown)
        self.in_flight.clear()
        self.out.clear()
        self.out_bytes = 0

    # -- answers the relay makes itself ----------------------------------------------------------------------------

    def _answer_error(
        self, key: int | str, pending: _Pending, message: str, *, retryable: bool, outcome_unknown: bool
    ) -> None:
        if pending.method == "tools/call":
            body = {"error": message, "code": "unavailable", "retryable": retryable, "outcome_unknown": outcome_unknown}
            result: dict[str, object] = {
                "content": [{"type": "text", "text": json.dumps(body)}],
                "isError": True,
            }
            if pending.modern:
                result["resultType"] = "complete"
                if isinstance(self.server_info, dict):
                    result["_meta"] = {"io.modelcontextprotocol/serverInfo": self.server_info}
            answer: dict[str, object] = {"jsonrpc": "2.0", "id": key, "result": result}
        else:
            answer = {"jsonrpc": "2.0", "id": key, "error": {"code": -32603, "message": message}}
        self.to_client += json.dumps(answer, separators=(",", ":")).encode() + b"\n"

    def _oversized(self, size: int, head: bytes) -> None:
        # The transport's own answer (bee-hostkit is installed wherever a host this front end serves is).
        from bee_hostkit.framing import Oversized, oversized_answer

        self.to_client += oversized_answer(Oversized(size, head), MAX_FRAME_BYTES)

    # -- from the editor ---------------------------------------------------------------------------------------

    def _from_client(self, data: bytes) -> None:
        buf = self.stdin_buf
        start = 0
        while start < len(data):
            newline = data.find(b"\n", start)
            end = len(data) if newline < 0 else newline
            if self.skipping is not None:
                size, head = self.skipping
                self.skipping = (size + end - start, head)
            else:
                buf += data[start:end]
                if len(buf) > MAX_FRAME_BYTES:
                    self.skipping = (len(buf), bytes(buf[:_HEAD_KEEP]))
                    buf.clear()
            if newline < 0:
                return
            start = newline + 1
            if self.skipping is not None:
                self._oversized(*self.skipping)
                self.skipping = None
                continue
            line = bytes(buf) + b"\n"
            buf.clear()
            self._client_line(line)

    def _client_line(self, line: bytes) -> None:
        pending: _Pending | None = None
        try:
            message = json.loads(line) if line.strip() else None
        except (ValueError, RecursionError):
            message = None  # the host answers what it cannot read
        if isinstance(message, dict):
            method = message.get("method")
            if isinstance(method, str):
                params = message.get("params")
                params = params if isinstance(params, dict) else {}
                if "id" not in message:
                    if method == "notifications/initialized":
                        self.initialized = line
                    elif method == "notifications/cancelled":
                        cancelled = _as_id(params.get("requestId"))
                        if cancelled is not None:
                            self.in_flight.pop(cancelled, None)
                elif (key := _as_id(message["id"])) is not None:
                    meta = params.get("_meta")
                    modern = isinstance(meta, dict) and _MODERN_KEY in meta
                    tool = params.get("name") if method == "tools/call" else None
                    tool = tool if isinstance(tool, str) else None
                    read = method != "tools/call" or self._is_read(tool, params.get("arguments"))
                    if method == "initialize":
                        self.initialize = message
                    pending = _Pending(line, method, read, modern, tool)
                    self.in_flight[key] = pending
                    if self.too_old is not None:
                        del self.in_flight[key]
                        self._answer_error(key, pending, self.too_old, retryable=False, outcome_unknown=False)
                        return
        if self.too_old is not None:
            return  # no host will take it; the requests among such lines were answered above
        self.out.append(_Unit(line, pending))
        self.out_bytes += len(line)
        if self.sock is None:
            self._reattach()

    def _is_read(self, tool: str | None, arguments: object) -> bool:
        if tool in self.reads:
            return True
        dispatcher = self.dispatcher
        if dispatcher is None or tool != dispatcher.get("tool") or not isinstance(arguments, dict):
            return False
        reads = dispatcher.get("reads")
        return isinstance(reads, list) and arguments.get(dispatcher.get("argument")) in reads

    # -- from the host -----------------------------------------------------------------------------------------

    def _from_host(self) -> None:
        assert self.sock is not None
        try:
            data = self.sock.recv(_READ)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._lost()
            return
        buf = self.host_buf
        buf += data
        start = 0
        while True:
            newline = buf.find(b"\n", max(start, self.host_scan))
            if newline < 0:
                self.host_scan = len(buf)
                break
            self._host_line(bytes(buf[start : newline + 1]))
            start = newline + 1
            self.host_scan = start
        if start:
            del buf[:start]
            self.host_scan -= start

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
        if key is not None:
            if key in self.swallow:
                self.swallow.discard(key)
                self.holding = False
                self.priority.extend(self.after_init)
                self.after_init = []
                return
            self.in_flight.pop(key, None)
        self.to_client += line

    def _to_host(self) -> None:
        """Write what is queued for the host, as far as the socket takes it."""
        while self.sock is not None:
            queue = self.priority if self.priority else (self.out if not self.holding else None)
            if not queue:
                return
            unit = queue[0]
            try:
                written = self.sock.send(memoryview(unit.data)[unit.written :])
            except BlockingIOError:
                return
            except OSError:
                self._lost()
                return
            unit.written += written
            if unit.written < len(unit.data):
                return
            queue.popleft()
            if queue is self.out:
                self.out_bytes -= len(unit.data)
            if unit.pending is not None:
                unit.pending.sent = True

    # -- the loop --------------------------------------------------------------------------------------------------

    def _to_client(self) -> bool:
        """Write what waits for the editor, as far as stdout takes it; False when stdout is gone."""
        try:
            written = os.write(1, self.to_client)
        except BlockingIOError:
            return True
        except OSError:
            return False
        del self.to_client[:written]
        return True

    def _stdin_closed(self) -> None:
        self.eof_at = time.monotonic()
        if self.stdin_buf and self.skipping is None:
            self._client_line(bytes(self.stdin_buf))  # a last line without its newline is still a frame
            self.stdin_buf.clear()

    def run(self) -> int:
        """Relay until stdin closes (or stdout does); the exit status (0)."""
        for fd in (0, 1):
            mode = os.fstat(fd).st_mode
            if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
                os.set_blocking(fd, fd == 0)  # stdout never blocks the loop; stdin is read only when ready
        stdin_open = True
        shut = False
        while True:
            now = time.monotonic()
            if self.attaching is not None:
                outcome = self.attaching()
                if outcome is not None:
                    self._reattached(outcome)
            if self.sock is not None and (self.priority or (self.out and not self.holding)):
                self._to_host()
            if self.eof_at is not None:
                idle = not self.out and not self.priority
                if self.sock is not None and idle and not shut:
                    shut = True
                    try:
                        self.sock.shutdown(socket.SHUT_WR)  # the host's session ends as a cold host's would
                    except OSError:
                        self._lost()
                if self.sock is None or now - self.eof_at >= DRAIN_SECONDS:
                    self._to_client()  # what the host answered last, if stdout takes it now
                    return 0
            poll = select.poll()
            if stdin_open and self.out_bytes < _BACKLOG:
                poll.register(0, select.POLLIN)
            if self.sock is not None:
                events = select.POLLIN if len(self.to_client) < _BACKLOG else 0
                if self.priority or (self.out and not self.holding):
                    events |= select.POLLOUT
                poll.register(self.sock, events)
            if self.to_client:
                poll.register(1, select.POLLOUT)
            timeout = 1000
            if self.attaching is not None:
                timeout = 20
            if self.eof_at is not None:
                timeout = max(1, int((self.eof_at + DRAIN_SECONDS - now) * 1000))
            for fd, event in poll.poll(timeout):
                if fd == 0:
                    data = os.read(0, _READ) if event & (select.POLLIN | select.POLLHUP | select.POLLERR) else b""
                    if data:
                        self._from_client(data)
                    else:
                        stdin_open = False
                        self._stdin_closed()
                elif fd == 1:
                    if not self._to_client():
                        return 0
                elif self.sock is not None and fd == self.sock.fileno():
                    if event & (select.POLLIN | select.POLLHUP | select.POLLERR):
                        self._from_host()
                    if self.sock is not None and event & select.POLLOUT:
                        self._to_host()
            if self.to_client and not self._to_client():
                return 0
            if stdin_open and os.getppid() != self.parent:
                stdin_open = False  # the editor is gone even if something else holds its end of the pipe
                self._stdin_closed()
