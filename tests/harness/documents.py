"""An https server of Client ID Metadata Documents on 127.0.0.1, with the hostile ones a stranger could publish:
one too large (declared, or streamed without a length), one that drips, one that redirects, one naming another
client. Its certificate (for ``localhost`` and ``127.0.0.1``) is made per server and written beside it; a tracker
trusts it through ``SSL_CERT_FILE``.
"""

from __future__ import annotations

import datetime
import http.server
import ipaddress
import json
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.harness.postgres import free_port

#: Bytes of the oversized documents (the tracker reads at most 16 KiB).
HUGE_BYTES = 20 * 1024
#: How long the slow document takes to finish: the tracker waits at most 5 seconds, and the test's own request gives
#: up after 30, so a tracker that waited for the whole document fails the test without any clock read in it.
SLOW_SECONDS = 60.0


def _certificate(folder: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "bee test documents")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "documents-cert.pem", folder / "documents-key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@dataclass
class DocumentServer:
    """Where the documents are: ``url(path)`` on 127.0.0.1 (or ``localhost``), ``documents`` by path."""

    port: int
    certificate: Path
    documents: dict[str, Any] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"https://{host}:{self.port}{path}"


def _handler(served: DocumentServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _send(self, status: int, body: bytes, *, length: bool = True, extra: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            if length:
                self.send_header("Content-Length", str(len(body)))
            else:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            served.requests.append(self.path)
            path = self.path.split("?", 1)[0]
            if path == "/huge.json":
                self._send(200, b" " * HUGE_BYTES + b"{}")
            elif path == "/huge-unsized.json":
                self._send(200, b" " * HUGE_BYTES + b"{}", length=False)
            elif path == "/slow.json":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Connection", "close")
                self.end_headers()
                for _ in range(int(SLOW_SECONDS * 2)):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.5)
                self.wfile.write(b"{}")
            elif path == "/redirect.json":
                self._send(302, b"", extra={"Location": served.url("/good.json")})
            elif path in served.documents:
                self._send(200, json.dumps(served.documents[path]).encode())
            else:
                self._send(404, b'{"error": "not found"}')

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def document_server(folder: Path) -> Iterator[DocumentServer]:
    """The server, for the duration of the context."""
    cert_path, key_path = _certificate(folder)
    served = DocumentServer(free_port(), cert_path)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", served.port), _handler(served))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_path, key_path)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
