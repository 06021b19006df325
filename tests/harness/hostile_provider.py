"""A hostile MCP skills provider on 127.0.0.1: answers of hundreds of megabytes, answers that drip in a byte a
second forever, compressed answers, and skills whose bytes do not match their manifest.

It speaks just enough MCP over HTTP/1.1 for the official client (the SDK's ``mode="auto"``: ``server/discover``
is refused as by a legacy server, then the ``initialize`` handshake; a 2026-07-28 client's requests are answered
as they come), written on a plain asyncio socket server so that it can do what no MCP server library would: stream
a 200 MB body it never holds, write one byte a second, and notice the moment the client hangs up. Nothing in it is
Bee's own code.

usage: python -m tests.harness.hostile_provider PORT SPEC_JSON_FILE LOG_FILE

The spec::

    {"skills": [{"path": "git-workflow", "body": "---\\nname: …", "digest": "sha256:…"?, "size": 12?}],
     "misbehave": {"resources/read": {"how": "huge", "bytes": 200000000, "sse": false}}}

``skills`` are served correctly (frontmatter parsed from the body, a manifest with the SKILL.md's digest and size)
unless ``digest`` or ``size`` overrides what the manifest says (``"size": null`` leaves it out); ``blob: true``
serves the body base64-encoded. ``misbehave`` maps a method to how its answers go
wrong: ``huge`` (a well-formed answer of ``bytes`` bytes, streamed as it is written — for ``skills/list`` a
listing of that many bytes of entries, for ``resources/read`` a SKILL.md that size, for ``skills/get`` a manifest,
otherwise one long text), ``drip`` (the start of an answer, then one space every ``seconds`` (1), forever),
``refuse`` (HTTP 500 with a ``bytes``-byte JSON body that is not JSON-RPC) and ``gzip`` (a small gzip body that
expands to ``bytes`` bytes, with ``Content-Encoding: gzip``). ``sse: true`` sends the answer as one Server-Sent
Event over a chunked body instead of as JSON with a Content-Length.

Every answer appends one JSON line to the log: the method, how it went wrong (``"normal"`` if it did not), the
bytes of body written, ``cut`` (whether the client closed the connection before the body was complete) and, for
an answer that misbehaved, the ``seconds`` from its first byte to its end or cut.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from tests.harness.postgres import free_port

EXTENSION_ID = "io.modelcontextprotocol/skills"
CHUNK = 64 * 1024


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Spec:
    """What the server serves and how it misbehaves."""

    def __init__(self, raw: dict[str, Any]) -> None:
        from bee_core.skills.frontmatter import block, load

        self.misbehave: dict[str, dict[str, Any]] = raw.get("misbehave", {})
        self.entries: dict[str, dict[str, Any]] = {}
        self.files: dict[str, bytes] = {}
        self.blobs: set[str] = set()
        for skill in raw.get("skills", []):
            uri = f"skill://{skill['path']}/SKILL.md"
            data = skill["body"].encode()
            resource = {"uri": uri, "digest": skill.get("digest", _digest(data)), "size": skill.get("size", len(data))}
            if resource["size"] is None:
                del resource["size"]
            self.entries[uri] = {"uri": uri, "frontmatter": load(block(skill["body"])), "resources": [resource]}
            self.files[uri] = data
            if skill.get("blob"):
                self.blobs.add(uri)

    def result(self, method: str, params: dict[str, Any]) -> dict[str, Any] | tuple[int, str]:
        """The correct answer to ``method``: a result, or a JSON-RPC error (code, message)."""
        if method == "initialize":
            return {
                "protocolVersion": "2025-11-25",
                "capabilities": {"resources": {}, "extensions": {EXTENSION_ID: {}}},
                "serverInfo": {"name": "hostile-provider", "version": "1"},
            }
        if method == "skills/list":
            return {"skills": list(self.entries.values())}
        if method == "skills/get":
            entry = self.entries.get(params.get("uri", ""))
            return {"skill": entry} if entry else (-32602, "no such skill")
        if method == "resources/read":
            uri = params.get("uri", "")
            if uri not in self.files:
                return (-32602, "no such resource")
            if uri in self.blobs:
                blob = base64.b64encode(self.files[uri]).decode()
                return {"contents": [{"uri": uri, "mimeType": "text/markdown", "blob": blob}]}
            return {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": self.files[uri].decode()}]}
        if method == "tools/list":
            tools = [{"name": "ready", "inputSchema": {"type": "object"}}]
            return {"tools": tools, "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
        if method == "tools/call":
            return {
                "content": [{"type": "text", "text": '{"data": {"ok": true}}'}],
                "structuredContent": {"data": {"ok": True}},
                "resultType": "complete",
            }
        return (-32601, f"method {method} is not served here")


def _huge_parts(method: str, head: str) -> tuple[bytes, bytes, bytes]:
    """(prefix, repeated unit, suffix) of a well-formed answer to ``method``; ``head`` opens the JSON-RPC object."""
    if method == "skills/list":
        entry = json.dumps(
            {
                "uri": "skill://filler/SKILL.md",
                "frontmatter": {"name": "filler", "description": "x" * 200},
                "resources": [{"uri": "skill://filler/SKILL.md", "digest": _digest(b""), "size": 0}],
            }
        )
        return f'{head}"result":{{"skills":['.encode(), f"{entry},".encode(), f"{entry}]}}}}".encode()
    if method == "skills/get":
        resource = json.dumps({"uri": "skill://filler/x.md", "digest": _digest(b""), "size": 0})
        return (
            f'{head}"result":{{"skill":{{"uri":"skill://filler/SKILL.md","frontmatter":{{"name":"filler",'
            f'"description":"d"}},"resources":['.encode(),
            f"{resource},".encode(),
            f"{resource}]}}}}}}".encode(),
        )
    if method == "resources/read":
        return (
            f'{head}"result":{{"contents":[{{"uri":"skill://filler/SKILL.md","mimeType":"text/markdown","text":"'.encode(),
            b"a",
            b'"}]}}',
        )
    return f'{head}"result":{{"resultType":"complete","content":[{{"type":"text","text":"'.encode(), b"a", b'"}]}}'


def huge_body(method: str, head: str, total: int) -> Iterator[bytes]:
    """A well-formed answer of exactly ``total`` bytes (whitespace pads it), in chunks of about :data:`CHUNK`."""
    prefix, unit, suffix = _huge_parts(method, head)
    count = max(0, (total - len(prefix) - len(suffix)) // len(unit))
    padding = total - len(prefix) - len(suffix) - count * len(unit)
    if unit == b"a":  # inside a string: pad with the unit itself, not whitespace
        count, padding = count + padding, 0
    yield prefix + b" " * padding
    per_chunk = max(1, CHUNK // len(unit))
    block = unit * per_chunk
    full, rest = divmod(count, per_chunk)
    for _ in range(full):
        yield block
    yield unit * rest + suffix


def _refusal_body(total: int) -> Iterator[bytes]:
    """A JSON object of ``total`` bytes that is not JSON-RPC, in chunks."""
    yield b'{"error": "'
    full, rest = divmod(total - 14, CHUNK)
    for _ in range(full):
        yield b"x" * CHUNK
    yield b"x" * rest + b'"}'


def gzip_bomb(total: int) -> bytes:
    """A gzip body that expands to ``total`` bytes of one JSON string (about 1,000 times smaller)."""
    compressor = zlib.compressobj(1, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    parts = [compressor.compress(b'{"jsonrpc":"2.0","id":1,"result":{"text":"')]
    block = b"a" * (1024 * 1024)
    for _ in range(total // len(block)):
        parts.append(compressor.compress(block))
    parts.append(compressor.compress(b'"}}'))
    parts.append(compressor.flush())
    return b"".join(parts)


class Handler:
    """One server: the spec, and the log of what each answer wrote."""

    def __init__(self, spec: Spec, log: Path) -> None:
        self.spec = spec
        self.log = log

    def record(self, method: str, how: str, sent: int, cut: bool, started: float | None = None) -> None:
        seconds = round(time.monotonic() - started, 3) if started is not None else 0.0
        line = {"method": method, "how": how, "sent": sent, "cut": cut, "seconds": seconds}
        with self.log.open("a") as stream:
            stream.write(json.dumps(line) + "\n")

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                method_line, body = request
                if not method_line.startswith("POST "):
                    await _send(writer, 405, b"", "text/plain")
                    continue
                if not await self.answer(body, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()

    async def answer(self, body: bytes, writer: asyncio.StreamWriter) -> bool:
        """Answer one POST; False when the connection is to be dropped."""
        try:
            message = json.loads(body)
        except ValueError:
            await _send(writer, 400, b'{"error": "not JSON"}', "application/json")
            return True
        if not isinstance(message, dict) or "method" not in message:
            await _send(writer, 400, b'{"error": "not a request"}', "application/json")
            return True
        method = str(message["method"])
        if "id" not in message:  # a notification
            await _send(writer, 202, b"", "application/json")
            return True
        head = f'{{"jsonrpc":"2.0","id":{json.dumps(message["id"])},'
        how = self.spec.misbehave.get(method)
        if how is None:
            answer: dict[str, Any] | tuple[int, str]
            if method == "server/discover":  # a legacy server: the client falls back to the handshake
                answer = (-32601, "Method not found")
            else:
                answer = self.spec.result(method, message.get("params") or {})
            payload = json.dumps(
                {"jsonrpc": "2.0", "id": message["id"], **_result_or_error(answer)}, separators=(",", ":")
            ).encode()
            await _send(writer, 200, payload, "application/json")
            self.record(method, "normal", len(payload), False)
            return True
        return await self.misbehave(method, head, how, writer)

    async def misbehave(self, method: str, head: str, how: dict[str, Any], writer: asyncio.StreamWriter) -> bool:
        kind = how["how"]
        total = int(how.get("bytes", 200_000_000))
        sse = bool(how.get("sse"))
        sent = 0
        started = time.monotonic()
        try:
            if kind == "gzip":
                payload = gzip_bomb(total)
                headers = [("Content-Type", "application/json"), ("Content-Encoding", "gzip")]
                await _head(writer, 200, [*headers, ("Content-Length", str(len(payload)))])
                sent = await _write(writer, payload)
                self.record(method, kind, sent, False, started)
                return True
            if kind == "drip":
                seconds = float(how.get("seconds", 1.0))
                await _head(writer, 200, _framing("application/json", sse, 10**12))
                opening = (b"event: message\ndata: " if sse else b"") + head.encode()
                sent += await _write(writer, _frame(sse, opening))
                while True:
                    await asyncio.sleep(seconds)
                    sent += await _write(writer, _frame(sse, b" "))
            status = 500 if kind == "refuse" else 200
            if kind == "refuse":
                parts = _refusal_body(total)
                content_type, sse = "application/json", False
            else:
                parts = huge_body(method, head, total)
                content_type = "text/event-stream" if sse else "application/json"
            if sse:
                await _head(writer, status, [("Content-Type", content_type), ("Transfer-Encoding", "chunked")])
                sent += await _write(writer, _frame(True, b"event: message\ndata: "))
                for part in parts:
                    sent += await _write(writer, _frame(True, part))
                sent += await _write(writer, _frame(True, b"\n\n") + b"0\r\n\r\n")
            else:
                await _head(writer, status, [("Content-Type", content_type), ("Content-Length", str(total))])
                for part in parts:
                    sent += await _write(writer, part)
        except (ConnectionError, OSError):
            self.record(method, kind, sent, True, started)
            return False
        self.record(method, kind, sent, False, started)
        return True


def _result_or_error(answer: dict[str, Any] | tuple[int, str]) -> dict[str, Any]:
    if isinstance(answer, tuple):
        return {"error": {"code": answer[0], "message": answer[1]}}
    return {"result": answer}


def _framing(content_type: str, sse: bool, length: int) -> list[tuple[str, str]]:
    if sse:
        return [("Content-Type", "text/event-stream"), ("Transfer-Encoding", "chunked")]
    return [("Content-Type", content_type), ("Content-Length", str(length))]


def _frame(chunked: bool, data: bytes) -> bytes:
    """``data`` as one chunk of a chunked body (as itself otherwise)."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n" if chunked else data


async def _head(writer: asyncio.StreamWriter, status: int, headers: list[tuple[str, str]]) -> None:
    lines = [f"HTTP/1.1 {status} {'OK' if status < 400 else 'Error'}", *(f"{k}: {v}" for k, v in headers)]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    await writer.drain()


async def _write(writer: asyncio.StreamWriter, data: bytes) -> int:
    writer.write(data)
    await writer.drain()
    return len(data)


async def _send(writer: asyncio.StreamWriter, status: int, body: bytes, content_type: str) -> None:
    await _head(writer, status, [("Content-Type", content_type), ("Content-Length", str(len(body)))])
    await _write(writer, body)


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, bytes] | None:
    """The request line and body of the next request, or None at the end of the connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    return lines[0], await reader.readexactly(length)


async def _serve(port: int, handler: Handler) -> None:
    server = await asyncio.start_server(handler.connection, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


def main() -> None:
    port, spec_file, log = int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    asyncio.run(_serve(port, Handler(Spec(json.loads(spec_file.read_text())), log)))


class HostileProvider:
    """The server above as a subprocess on 127.0.0.1 with ``spec``; use as a context manager."""

    def __init__(self, spec: dict[str, Any], workdir: Path) -> None:
        self.port = free_port()
        self.spec_file = workdir / f"hostile-{self.port}.json"
        self.spec_file.write_text(json.dumps(spec))
        self.log = workdir / f"hostile-{self.port}.jsonl"
        self.output = workdir / f"hostile-{self.port}.out"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def answers(self) -> list[dict[str, Any]]:
        """What each answer so far wrote (see the module docstring)."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def misbehaved(self, method: str, count: int = 1) -> list[dict[str, Any]]:
        """The ``count`` misbehaving answers to ``method``, once the server has logged them (it logs a cut
        connection at the write that fails, so this waits up to 30 seconds for them)."""
        give_up = time.monotonic() + 30
        while True:
            found = [a for a in self.answers() if a["method"] == method and a["how"] != "normal"]
            if len(found) >= count or time.monotonic() > give_up:
                assert len(found) == count, self.answers()
                return found
            time.sleep(0.05)

    def __enter__(self) -> HostileProvider:
        with self.output.open("wb") as output:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.harness.hostile_provider",
                    str(self.port),
                    str(self.spec_file),
                    str(self.log),
                ],
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=Path(__file__).resolve().parents[2],
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the hostile provider exited:\n{self.output.read_text()}")
            try:
                httpx.post(self.url, content=b"{}", timeout=1)
                return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError(f"the hostile provider did not start:\n{self.output.read_text()}")

    def __exit__(self, *_: object) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)


if __name__ == "__main__":
    main()
