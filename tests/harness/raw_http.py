"""HTTP/1.1 over a plain socket, for edge tests that must send exact (or broken) bytes and see exactly what comes back.

A real client would refuse to send half a request, a 64 MiB header or a pipelined pair; these helpers do it and
then read responses as the server wrote them, telling "no response at all" apart from any answer.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


#: uvicorn's flow-control mark: a request is admitted at the edge once its body is complete or this much has arrived.
ADMITTED_AT_BYTES = 64 * 1024


def held_body(body: bytes) -> bytes:
    """``body`` followed by enough spaces (still the same JSON) that it is admitted before it has fully arrived: a
    request with it, sent but for its last bytes, holds its admission slot until they come."""
    return body + b" " * (ADMITTED_AT_BYTES + 1024)


def request(path: str, *, port: int, headers: dict[str, str] | None = None, body: bytes = b"") -> bytes:
    """The bytes of one complete POST request."""
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class RawConnection:
    """One TCP connection: send bytes as given, read whole responses (status, headers, Content-Length body)."""

    def __init__(self, port: int, timeout: float = 30.0, *, source: str | None = None) -> None:
        # From another loopback address (127.0.0.2, …), Linux's loopback takes any 127/8 source: another client.
        bind = (source, 0) if source else None
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=bind)
        self.buffer = b""

    def __enter__(self) -> RawConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    def send(self, data: bytes) -> bool:
        """Send ``data``; False when the server stopped reading first (it may still have answered)."""
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536)
        self.buffer += chunk
        return bool(chunk)

    def response(self) -> RawResponse | None:
        """The next response, or None when the server closed the connection without (another) one."""
        while b"\r\n\r\n" not in self.buffer:
            if not self._fill():
                return None
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers: dict[str, str] = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            if not self._fill():
                raise ConnectionError("the connection closed in the middle of a response body")
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return RawResponse(int(status_line.split()[1]), headers, body)

    def closed_by_server(self) -> bool:
        """True when the server closes the connection with nothing more to read."""
        try:
            return not self.buffer and not self._fill()
        except ConnectionResetError:
            return True
