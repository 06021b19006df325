"""The capped stdio transport, in process over real OS pipes."""

import json
import os

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from bee_hostkit._sdk import ContextSendStream
from bee_hostkit.stdio.transport import capped_stdio_server, decode_frame, encode_message
from bee_hostkit.validation import OversizedNumber

pytestmark = pytest.mark.anyio


async def test_oversized_outbound_response_becomes_an_error_for_its_id() -> None:
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    stdin = os.fdopen(in_read, "rb", buffering=0)
    stdout = os.fdopen(out_write, "wb", buffering=0)
    reader = os.fdopen(out_read, "rb")
    huge = types.JSONRPCResponse(jsonrpc="2.0", id=41, result={"blob": "x" * 600_000})
    with anyio.fail_after(20):
        async with capped_stdio_server(stdin, stdout, limit=512 * 1024) as (_read_stream, write_stream):
            assert isinstance(write_stream, ContextSendStream)  # the function yields its streams as objects
            await write_stream.send(SessionMessage(huge))
            line = await anyio.to_thread.run_sync(reader.readline)
            os.close(in_write)  # end of input ends the transport
            await write_stream.aclose()
    for handle in (stdin, stdout, reader):
        handle.close()
    answer = json.loads(line)
    assert answer["id"] == 41
    assert answer["error"]["code"] == -32603
    assert answer["error"]["data"]["limitBytes"] == 512 * 1024


async def test_small_and_large_responses_reach_a_pipe_whole_and_in_order() -> None:
    """Frames up to a page go straight into the pipe, larger ones through a worker thread: the client sees one
    stream of whole lines, in the order they were sent, whichever way each was written."""
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    stdin = os.fdopen(in_read, "rb", buffering=0)
    stdout = os.fdopen(out_write, "wb", buffering=0)
    reader = os.fdopen(out_read, "rb")
    sizes = [10, 5000, 4000, 100_000, 1, 4096, 70_000, 3000] * 4
    with anyio.fail_after(30):
        async with capped_stdio_server(stdin, stdout) as (_read_stream, write_stream):
            assert isinstance(write_stream, ContextSendStream)  # the function yields its streams as objects

            async def send_all() -> None:
                for number, size in enumerate(sizes):
                    response = types.JSONRPCResponse(jsonrpc="2.0", id=number, result={"blob": "y" * size})
                    await write_stream.send(SessionMessage(response))

            async with anyio.create_task_group() as tg:
                tg.start_soon(send_all)
                lines = [await anyio.to_thread.run_sync(reader.readline) for _ in sizes]
            os.close(in_write)
            await write_stream.aclose()
    for handle in (stdin, stdout, reader):
        handle.close()
    answers = [json.loads(line) for line in lines]
    assert [answer["id"] for answer in answers] == list(range(len(sizes)))
    assert [len(answer["result"]["blob"]) for answer in answers] == sizes


async def test_a_client_that_stops_reading_does_not_hold_the_transport_at_shutdown() -> None:
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    stdin = os.fdopen(in_read, "rb", buffering=0)
    stdout = os.fdopen(out_write, "wb", buffering=0)
    with anyio.fail_after(20):
        async with capped_stdio_server(stdin, stdout) as (_read_stream, write_stream):
            assert isinstance(write_stream, ContextSendStream)  # the function yields its streams as objects
            sent = 0
            for number in range(1000):  # frames of under a page, until the pipe is full and nobody reads it
                response = types.JSONRPCResponse(jsonrpc="2.0", id=number, result={"blob": "z" * 3900})
                with anyio.move_on_after(1) as waiting:
                    await write_stream.send(SessionMessage(response))
                if waiting.cancelled_caught:
                    break
                sent += 1
            assert 0 < sent < 1000  # the writer is stuck waiting for the pipe to drain
            os.close(in_write)  # end of input: the transport must end even though its pipe is full
            await write_stream.aclose()
    for handle in (stdin, stdout):
        handle.close()
    os.close(out_read)


@pytest.mark.parametrize(
    ("frame", "code", "answer_id"),
    [
        (b"{not json", -32700, None),
        (b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"n":' + b"[" * 300 + b"NaN}}", -32700, None),
        (b'{"jsonrpc":"2.0","id":3,"nomethod":1}', -32600, 3),
        (b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":1.0,"method":"tools/list"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":null,"method":"tools/list","params":{"n":NaN}}', -32600, None),
        (b'{"jsonrpc":"2.0","id":' + b"[" * 60_000 + b"]" * 60_000 + b',"method":"m"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"x":' + b"[" * 5000 + b"}}", -32600, 3),
        (b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"tools/list"}', -32600, None),
    ],
)
def test_decode_frame_answers_what_it_cannot_pass_on(frame: bytes, code: int, answer_id: int | None) -> None:
    decoded = decode_frame(frame)
    assert isinstance(decoded, bytes)
    answer = json.loads(decoded)
    assert answer["error"]["code"] == code and answer["id"] == answer_id


def test_decode_frame_reads_valid_json_past_the_fast_parsers_limits() -> None:
    deep = decode_frame(b'{"jsonrpc":"2.0","id":4,"method":"m","params":{"x":' + b"[" * 300 + b"]" * 300 + b"}}")
    assert isinstance(deep, types.JSONRPCRequest) and deep.id == 4
    long = decode_frame(b'{"jsonrpc":"2.0","id":5,"method":"m","params":{"n":' + b"9" * 5000 + b"}}")
    assert isinstance(long, types.JSONRPCRequest) and long.params is not None
    assert isinstance(long, types.JSONRPCRequest) and isinstance(long.params["n"], OversizedNumber)
    note = decode_frame(b'{"jsonrpc":"2.0","method":"notifications/initialized","params":{"id":null}}')
    assert isinstance(note, types.JSONRPCNotification)


@pytest.mark.parametrize(
    "message",
    [
        types.JSONRPCError(jsonrpc="2.0", id="\ud800", error=types.ErrorData(code=-32602, message="bad \udfff")),
        types.JSONRPCResponse(jsonrpc="2.0", id="\ud800", result={"text": "x\udcff"}),
        types.JSONRPCNotification(jsonrpc="2.0", method="notifications/message", params={"data": "\ud83d"}),
    ],
)
def test_a_lone_surrogate_a_client_sent_is_written_escaped_not_fatal(message: types.JSONRPCMessage) -> None:
    # JSON can carry "\ud800" (the SDK reads it into the id), UTF-8 cannot: the writer escapes it instead of dying.
    data = encode_message(message)
    data.decode("ascii")  # escaped
    assert json.loads(data) == message.model_dump(mode="json", by_alias=True, exclude_unset=True)
