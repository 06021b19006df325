"""The warm relay's logic in memory: what reaches the host, what the editor is answered, when a host is given up.

No socket, no process, no clock: a test plays the editor and the hosts, feeding bytes and events with the time it
chooses. The process tests (tests/e2e/test_warm_hosts.py) show the same promises with real hosts; these cover every
case of replay, refusal and host replacement, including those a process test cannot time.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bee_cli.relay_machine import MAX_ATTEMPTS, PING_AFTER, PING_TIMEOUT, HostRule, RelayMachine
from bee_contracts.framing import Oversized, oversized_answer
from bee_contracts.limits import MAX_FRAME_BYTES

WELCOME: dict[str, object] = {
    "bee": "welcome",
    "reads": ["bee_context_packet"],
    "dispatcher": {"tool": "bee_tool_invoke", "argument": "name", "reads": ["bee_context_packet"]},
    "serverInfo": {"name": "bee-core", "version": "0.1.0"},
}
MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def request(id: int | str, method: str, params: dict[str, Any] | None = None) -> bytes:
    return line({"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}})


def call(id: int, tool: str, modern: bool = False, **arguments: Any) -> bytes:
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if modern:
        params["_meta"] = MODERN
    return request(id, "tools/call", params)


def answer(id: int | str, result: Any = None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id, "result": result or {}}, separators=(",", ":")).encode() + b"\n"


class Host:
    """The host's side of one connection: everything the machine sent it, as messages."""

    def __init__(self, machine: RelayMachine, now: float = 0.0) -> None:
        self.machine = machine
        machine.attached(HostRule(WELCOME), now)
        self.got: list[dict[str, Any]] = []

    def drain(self) -> list[dict[str, Any]]:
        """Take whatever the machine has for the host, as a socket that takes it all would."""
        data = b""
        while (chunk := self.machine.host_bytes()) is not None:
            data += bytes(chunk)
            self.machine.sent(len(chunk))
        new = [json.loads(piece) for piece in data.splitlines()]
        self.got += new
        return new

    def answer(self, id: int | str, now: float = 0.0, result: Any = None) -> None:
        self.machine.host_data(answer(id, result), now)


def to_editor(machine: RelayMachine) -> list[dict[str, Any]]:
    pending = machine.client_bytes()
    out = [json.loads(piece) for piece in bytes(pending).splitlines()]
    pending.clear()
    return out


def envelope(reply: dict[str, Any]) -> dict[str, Any]:
    result = reply["result"]
    assert result["isError"] is True and "structuredContent" not in result
    return json.loads(result["content"][0]["text"])  # type: ignore[no-any-return]


def legacy_session(machine: RelayMachine, host: Host) -> None:
    machine.client_data(request(0, "initialize", {"protocolVersion": "2025-11-25"}), 0)
    assert [m["method"] for m in host.drain()] == ["initialize"]
    host.answer(0)
    machine.client_data(line({"jsonrpc": "2.0", "method": "notifications/initialized"}), 0)
    host.drain()
    assert [m["id"] for m in to_editor(machine)] == [0]


# -- passing through ---------------------------------------------------------------------------------------------


def test_lines_pass_through_in_order_and_answers_come_back_as_the_host_wrote_them() -> None:
    machine = RelayMachine()
    host = Host(machine)
    legacy_session(machine, host)
    machine.client_data(call(1, "bee_context_packet") + call(2, "bee_context_packet")[:10], 0)
    machine.client_data(call(2, "bee_context_packet")[10:], 0)
    assert [m["id"] for m in host.drain()] == [1, 2]
    written = b'{"jsonrpc":"2.0","id":2,"result":{"x":"\\u00e9"}}\n'
    machine.host_data(written[:7], 0)
    machine.host_data(written[7:], 0)
    assert bytes(machine.client_bytes()) == written  # byte for byte
    assert set(machine.in_flight) == {1}


def test_a_cancelled_request_is_no_longer_waited_for() -> None:
    machine = RelayMachine()
    host = Host(machine)
    machine.client_data(call(1, "bee_context_packet"), 0)
    machine.client_data(line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}), 0)
    host.drain()
    assert machine.in_flight == {}


# -- frames over the limit ----------------------------------------------------------------------------------------


def test_an_oversized_frame_is_answered_as_the_host_would_and_never_forwarded() -> None:
    machine = RelayMachine(limit=1000)
    host = Host(machine)
    big = request(7, "tools/call", {"name": "x", "arguments": {"pad": "a" * 5000}})
    machine.client_data(big[:600], 0)
    machine.client_data(big[600:] + request(8, "tools/list"), 0)
    assert [m["id"] for m in host.drain()] == [8]
    expected = oversized_answer(Oversized(len(big) - 1, big[: len(big) - 1]), 1000)
    assert bytes(machine.client_bytes()) == expected
    assert json.loads(expected)["id"] == 7 and json.loads(expected)["error"]["code"] == -32600


def test_an_oversized_last_frame_without_its_newline_is_answered_at_eof() -> None:
    machine = RelayMachine(limit=1000)
    Host(machine)
    big = request(9, "tools/list", {"pad": "a" * 5000}).rstrip(b"\n")
    machine.client_data(big, 0)
    machine.client_eof(1)
    [reply] = to_editor(machine)
    assert reply["id"] == 9 and reply["error"]["code"] == -32600


def test_a_last_frame_without_its_newline_still_goes_to_the_host() -> None:
    machine = RelayMachine()
    host = Host(machine)
    machine.client_data(request(3, "tools/list").rstrip(b"\n"), 0)
    assert host.drain() == []
    machine.client_eof(1)
    assert [m["id"] for m in host.drain()] == [3]


# -- a host lost -----------------------------------------------------------------------------------------------


def test_a_read_in_flight_is_replayed_after_the_handshake_and_a_write_gets_one_retryable_error() -> None:
    machine = RelayMachine()
    first = Host(machine)
    legacy_session(machine, first)
    machine.client_data(call(1, "bee_context_packet") + call(2, "bee_plan_write") + request(3, "tools/list"), 0)
    first.drain()
    machine.host_lost(1)
    assert machine.wants_host
    [write] = to_editor(machine)
    assert write["id"] == 2
    assert envelope(write) == {
        "error": "the warm Bee host restarted while bee_plan_write ran; whether it took effect is unknown: check, then "
        "call it again",
        "code": "unavailable",
        "retryable": True,
        "outcome_unknown": True,
    }
    second = Host(machine, 2)
    [replay] = second.drain()
    assert replay["method"] == "initialize" and replay["id"].startswith("bee-frontend-")
    second.answer(replay["id"])
    assert to_editor(machine) == []  # the editor has its answer already
    assert [m.get("id", m["method"]) for m in second.drain()] == ["notifications/initialized", 1, 3]
    second.answer(1)
    second.answer(3)
    assert [m["id"] for m in to_editor(machine)] == [1, 3]
    assert machine.in_flight == {}


def test_a_replacement_that_dies_before_answering_the_replayed_handshake_loses_nothing() -> None:
    machine = RelayMachine()
    first = Host(machine)
    legacy_session(machine, first)
    machine.client_data(call(1, "bee_context_packet"), 0)
    first.drain()
    machine.host_lost(1)
    second = Host(machine, 2)
    assert [m["method"] for m in second.drain()] == ["initialize"]  # the read waits behind it
    machine.client_data(call(4, "bee_context_packet"), 2)
    machine.host_lost(3)  # before the replayed handshake was answered
    assert to_editor(machine) == [] and set(machine.in_flight) == {1, 4}
    third = Host(machine, 4)
    [replay] = third.drain()
    third.answer(replay["id"])
    assert [m.get("id", m["method"]) for m in third.drain()] == ["notifications/initialized", 1, 4]
    third.answer(1)
    third.answer(4)
    assert [m["id"] for m in to_editor(machine)] == [1, 4]


def test_a_read_that_reached_two_lost_hosts_is_answered_not_sent_a_third_time() -> None:
    machine = RelayMachine()
    machine.client_data(call(1, "bee_context_packet"), 0)
    for now in range(MAX_ATTEMPTS):
        host = Host(machine, now)
        assert [m["id"] for m in host.drain()] == [1]
        machine.host_lost(now)
    [reply] = to_editor(machine)
    assert reply["id"] == 1
    body = envelope(reply)
    assert body["code"] == "unavailable" and body["retryable"] is True and body["outcome_unknown"] is False
    assert "lost twice" in body["error"] and machine.in_flight == {}
    assert Host(machine, 9).drain() == []


def test_a_line_half_written_when_the_host_is_lost_is_sent_whole_to_the_next() -> None:
    machine = RelayMachine()
    Host(machine)
    machine.client_data(call(1, "bee_context_packet"), 0)
    chunk = machine.host_bytes()
    assert chunk is not None
    machine.sent(5)
    machine.host_lost(1)
    assert to_editor(machine) == []  # it never reached the host: nothing is lost, nothing is unknown
    [again] = Host(machine, 2).drain()
    assert again["id"] == 1


def test_a_write_that_discovery_names_as_a_read_is_replayed_and_its_other_calls_are_writes() -> None:
    machine = RelayMachine()
    Host(machine)
    machine.client_data(call(1, "bee_tool_invoke", name="bee_context_packet", arguments={}), 0)
    machine.client_data(call(2, "bee_tool_invoke", name="bee_context_compress", arguments={}), 0)
    Host(machine).drain()  # the same connection's rule
    machine.host_lost(1)
    assert [m["id"] for m in to_editor(machine)] == [2]
    assert [m["id"] for m in Host(machine, 2).drain()] == [1]


def test_a_modern_write_lost_is_answered_in_its_era_with_the_hosts_server_info() -> None:
    machine = RelayMachine()
    host = Host(machine)
    machine.client_data(call(5, "bee_plan_write", modern=True), 0)
    host.drain()
    machine.host_lost(1)
    [reply] = to_editor(machine)
    assert reply["result"]["resultType"] == "complete"
    assert reply["result"]["_meta"] == {"io.modelcontextprotocol/serverInfo": WELCOME["serverInfo"]}
    assert envelope(reply)["outcome_unknown"] is True


def test_no_host_to_be_had_answers_everything_retryably_and_the_next_request_asks_again() -> None:
    machine = RelayMachine()
    host = Host(machine)
    machine.client_data(call(1, "bee_context_packet") + request(2, "tools/list"), 0)
    host.drain()
    machine.host_lost(1)
    machine.client_data(request(3, "tools/list"), 1)
    machine.attach_failed("no warm host in 10 s", too_old=False, now=2)
    replies = {m["id"]: m for m in to_editor(machine)}
    assert set(replies) == {1, 2, 3}
    assert envelope(replies[1])["retryable"] is True
    assert replies[2]["error"]["code"] == -32603 and "retry shortly" in replies[2]["error"]["message"]
    assert not machine.wants_host and machine.queue == type(machine.queue)() and machine.queued == 0
    machine.client_data(request(4, "tools/list"), 3)
    assert machine.wants_host


def test_a_front_end_too_old_for_the_installed_bee_answers_every_request_and_never_asks_again() -> None:
    machine = RelayMachine()
    machine.client_data(request(1, "tools/list"), 0)
    machine.attach_failed("wire 1 is not spoken", too_old=True, now=1)
    machine.client_data(request(2, "tools/list") + call(3, "bee_context_packet"), 2)
    replies = to_editor(machine)
    assert [m["id"] for m in replies] == [1, 2, 3]
    assert all("restart this MCP server" in json.dumps(m) for m in replies)
    assert envelope(replies[2])["retryable"] is False
    assert not machine.wants_host and machine.queued == 0


# -- a host that stops answering -------------------------------------------------------------------------------


def test_a_silent_host_is_pinged_then_given_up_and_its_reads_go_to_the_next() -> None:
    machine = RelayMachine()
    host = Host(machine)
    machine.client_data(call(1, "bee_context_packet"), 0)
    host.drain()
    machine.tick(PING_AFTER - 0.1)
    assert host.drain() == []
    assert machine.next_wake() == pytest.approx(PING_AFTER)
    machine.tick(PING_AFTER)
    [ping] = host.drain()
    assert ping["method"] == "ping" and ping["id"].startswith("bee-frontend-ping-")
    machine.tick(PING_AFTER + PING_TIMEOUT - 0.1)
    assert not machine.give_up_host
    machine.tick(PING_AFTER + PING_TIMEOUT)
    assert machine.give_up_host
    machine.host_lost(PING_AFTER + PING_TIMEOUT)
    assert to_editor(machine) == [] and machine.wants_host
    assert [m["id"] for m in Host(machine, 20).drain()] == [1]


def test_a_slow_host_that_answers_the_ping_is_kept_and_the_answer_is_swallowed() -> None:
    machine = RelayMachine()
    host = Host(machine)
    machine.client_data(call(1, "bee_context_packet", modern=True), 0)
    host.drain()
    machine.tick(PING_AFTER)
    [ping] = host.drain()
    assert ping["params"]["_meta"] == MODERN  # in the session's era
    machine.host_data(
        json.dumps({"jsonrpc": "2.0", "id": ping["id"], "error": {"code": -32601, "message": "x"}}).encode() + b"\n",
        PING_AFTER + 1,
    )
    machine.tick(PING_AFTER + PING_TIMEOUT + 0.5)
    assert not machine.give_up_host and to_editor(machine) == []
    host.answer(1, PING_AFTER + 7)
    assert [m["id"] for m in to_editor(machine)] == [1]
    assert machine.next_wake() is None  # nothing in flight: no reason to ping


def test_an_idle_session_is_never_pinged() -> None:
    machine = RelayMachine()
    host = Host(machine)
    machine.tick(1000)
    assert host.drain() == [] and not machine.give_up_host and machine.next_wake() is None


# -- the end ---------------------------------------------------------------------------------------------------


def test_eof_shuts_the_hosts_side_once_everything_went_and_the_relay_ends_after_the_drain() -> None:
    machine = RelayMachine()
    host = Host(machine)
    machine.client_data(request(1, "tools/list"), 0)
    machine.client_eof(1)
    assert not machine.shut_host()  # the request has not gone yet
    host.drain()
    assert machine.shut_host() and not machine.shut_host()
    assert not machine.finished(1.5, 0.8)
    assert machine.finished(1.8, 0.8)


def test_eof_with_no_host_ends_at_once_and_asks_for_none() -> None:
    machine = RelayMachine()
    machine.client_data(request(1, "tools/list"), 0)
    machine.client_eof(1)
    machine.host_lost(1)
    assert not machine.wants_host and machine.finished(1, 0.8)


def test_the_queued_bytes_are_counted_for_the_loops_backpressure() -> None:
    machine = RelayMachine()
    data = request(1, "tools/list") + request(2, "tools/list")
    machine.client_data(data, 0)
    assert machine.queued == len(data)
    host = Host(machine)
    host.drain()
    assert machine.queued == 0
    machine.host_lost(1)
    assert machine.queued == len(data)  # both are reads, queued again for the next host
    assert machine.queued < MAX_FRAME_BYTES
