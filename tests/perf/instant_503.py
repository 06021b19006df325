"""The client floor for the overload test: a server that answers every request 503 with Retry-After at once.

It does the least an HTTP/1.1 server can: reads each request's headers and Content-Length body off a kept-alive
connection and writes a fixed 503, on asyncio's event loop as the tracker runs. What the overload clients measure
against it is the cost of the load generator, the sockets and the machine, which no server can go below.

usage: python instant_503.py PORT   (prints "ready" once listening)
"""

import asyncio
import sys

BODY = b'{"error": "busy", "error_description": "always busy", "retry_after_seconds": 1}'
ANSWER = (
    b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-type: application/json\r\n"
    b"content-length: " + str(len(BODY)).encode() + b"\r\n\r\n" + BODY
)


class Instant503(asyncio.Protocol):
    def __init__(self) -> None:
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            length = 0
            for line in self.buffer[:end].split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return  # the body is still on its way
            self.buffer = self.buffer[end + 4 + length :]
            self.transport.write(ANSWER)


async def serve(port: int) -> None:
    server = await asyncio.get_running_loop().create_server(Instant503, "127.0.0.1", port, backlog=2048)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1])))
