"""One load-generating process for the overload test: CLIENTS concurrent clients, each sending tools/call requests.

Run as ``python overload_client.py SPEC_JSON`` (by :func:`tests.harness.overload.generate`): it prints ``ready``
once set up, waits for a line on stdin, and then prints a JSON list with every request's outcome and latency.

On that line every client opens its own connection (the parent sends it to all processes at once, so they start
together) and sends its requests back to back on it, never retrying: what the server answered is what is recorded.
The client speaks HTTP/1.1 over asyncio streams rather than through httpx because on this 2-core machine the load
generator shares the CPU with the server: against a trivial server that answers 503 at once, 4 x 250 httpx clients
measured a p99 of 1.4-1.8 s by themselves, these clients 0.15-0.4 s. A response is read completely (status,
headers, Content-Length body), so a connection closed without one is seen for what it is.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any
from urllib.parse import urlsplit


def classify(status: int, headers: dict[str, str], body: bytes) -> str:
    """served, busy-tool (the host's own busy result), busy-503 (shed at the edge), or what else it was."""
    if status == 503:
        return "busy-503" if headers.get("retry-after", "").isdigit() else "503-without-retry-after"
    if status != 200:
        return f"http-{status}"
    try:
        result = json.loads(body)["result"]
    except (ValueError, KeyError, TypeError):
        return "200-without-result"
    if result.get("isError"):
        return "busy-tool" if json.loads(result["content"][0]["text"])["code"] == "busy" else "tool-error"
    return "served"


async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> tuple[str, bool]:
    """Send one request and read its whole response: (outcome, whether the server keeps the connection)."""
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return classify(int(status_line.split()[1]), headers, body), headers.get("connection") != "close"


async def run(spec: dict[str, Any]) -> list[tuple[str, bool, float]]:
    """Every request's (outcome, whether it was its connection's first, seconds)."""
    url = urlsplit(spec["url"])
    host, port = url.hostname or "127.0.0.1", url.port or 80
    outcomes: list[tuple[str, bool, float]] = []

    async def client() -> None:
        await go.wait()
        connection: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        for i in range(spec["requests"]):
            body = json.dumps(
                {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "ready", "arguments": {}}}
            ).encode()
            request = (
                f"POST {url.path} HTTP/1.1\r\nHost: {url.netloc}\r\nAuthorization: Bearer {spec['token']}\r\n"
                "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            ).encode() + body
            first = connection is None
            started = time.perf_counter()
            try:
                if connection is None:
                    connection = await asyncio.open_connection(host, port)
                outcome, keep = await exchange(*connection, request)
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
                outcome, keep = f"dropped-{type(exc).__name__}", False
            outcomes.append((outcome, first, time.perf_counter() - started))
            if not keep and connection is not None:
                connection[1].close()
                connection = None
        if connection is not None:
            connection[1].close()

    go = asyncio.Event()
    clients = [asyncio.ensure_future(client()) for _ in range(spec["clients"])]
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    go.set()
    await asyncio.gather(*clients)
    return outcomes


def main() -> None:
    print(json.dumps(asyncio.run(run(json.loads(sys.argv[1])))))


if __name__ == "__main__":
    main()
