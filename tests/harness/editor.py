"""An editor's side of a stdio host on raw pipes: a whole session sent, and stdin kept open until it is answered."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

LEGACY_INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}


def session(*requests: dict[str, Any]) -> list[dict[str, Any]]:
    """A 2025-11-25 session's messages: the handshake, then ``requests`` (ids from 1)."""
    return [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": LEGACY_INIT},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *({"jsonrpc": "2.0", "id": n, **request} for n, request in enumerate(requests, 1)),
    ]


def serve(argv: list[str], cwd: Path, env: dict[str, str], messages: list[dict[str, Any]]) -> dict[Any, Any]:
    """Start ``argv`` as an editor does, send ``messages`` and keep stdin open until every request is answered;
    the answers by id (stderr under the key ``"stderr"``)."""
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    waiting = {m["id"] for m in messages if "id" in m}
    found: dict[Any, Any] = {}
    try:
        for message in messages:
            process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()
        while waiting:
            line = process.stdout.readline()
            if not line:
                break
            reply = json.loads(line)
            found[reply.get("id")] = reply
            waiting.discard(reply.get("id"))
        process.stdin.close()
        process.wait(timeout=60)
    finally:
        process.kill()
        process.wait()
        found["stderr"] = process.stderr.read().decode(errors="replace")
        process.stdout.close()
        process.stderr.close()
    return found
