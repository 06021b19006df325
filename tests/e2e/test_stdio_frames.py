"""Raw frames against a real `bee mcp serve`: what no well-behaved client sends, the host still answers."""

import json
import subprocess

import pytest

from bee_contracts import version_info
from bee_hostkit import CONTRACT_META_KEY
from tests.conftest import bee_executable

pytestmark = pytest.mark.e2e


@pytest.fixture
def host(checkout):
    process = subprocess.Popen(
        [str(bee_executable()), "mcp", "serve"],
        cwd=checkout,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    yield process
    process.kill()
    process.wait(timeout=10)
    process.stdin.close()
    process.stdout.close()


def send(process, data: bytes):
    process.stdin.write(data)
    process.stdin.flush()


def answer(process):
    line = process.stdout.readline()
    assert line, "the host closed stdout"
    return json.loads(line)


def request(process, id, method, params=None):
    frame = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        frame["params"] = params
    send(process, json.dumps(frame).encode() + b"\n")
    return answer(process)


def test_malformed_and_oversized_frames_are_answered_and_the_host_keeps_serving(host):
    send(host, b"{this is not json\n")
    reply = answer(host)
    assert reply["error"]["code"] == -32700 and reply["id"] is None

    send(host, b'{"jsonrpc": "2.0", "id": 9, "no_method": true}\n')
    reply = answer(host)
    assert reply["error"]["code"] == -32600 and reply["id"] == 9

    oversized = (
        b'{"jsonrpc":"2.0","id":"big-1","method":"tools/list","params":{"pad":"' + b"p" * (600 * 1024) + b'"}}\n'
    )
    send(host, oversized)
    reply = answer(host)
    assert reply["id"] == "big-1" and reply["error"]["code"] == -32600
    assert reply["error"]["data"] == {"limitBytes": 512 * 1024, "frameBytes": len(oversized) - 1}

    init = request(
        host,
        1,
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    )
    assert init["result"]["serverInfo"]["name"] == "bee-core"
    assert init["result"]["_meta"][CONTRACT_META_KEY] == version_info()
    send(host, b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    listed = request(host, 2, "tools/list")
    assert "bee_context_packet" in [tool["name"] for tool in listed["result"]["tools"]]


def test_a_frame_exactly_at_the_limit_is_parsed_not_refused(host):
    head = b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"pad":"'
    tail = b'"}}'
    frame = head + b"q" * (512 * 1024 - len(head) - len(tail)) + tail
    assert len(frame) == 512 * 1024
    send(host, frame + b"\n")
    reply = answer(host)
    # Parsed and dispatched: the legacy era refuses tools/list before initialize, but not as an oversized frame.
    assert reply["id"] == 3
    assert reply.get("error", {}).get("code") != -32600
