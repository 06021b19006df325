"""The capped stdio transport, in process over real OS pipes."""

import json
import os

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from bee_hostkit.stdio import capped_stdio_server

pytestmark = pytest.mark.anyio


async def test_oversized_outbound_response_becomes_an_error_for_its_id():
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    stdin = os.fdopen(in_read, "rb", buffering=0)
    stdout = os.fdopen(out_write, "wb", buffering=0)
    reader = os.fdopen(out_read, "rb")
    huge = types.JSONRPCResponse(jsonrpc="2.0", id=41, result={"blob": "x" * 600_000})
    with anyio.fail_after(20):
        async with capped_stdio_server(stdin, stdout, limit=512 * 1024) as (_read_stream, write_stream):
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
