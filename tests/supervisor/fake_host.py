"""A stand-in for an outside program the supervisor runs: a "host" whose answers the test chooses.

It is a test double of a program, not of Bee's hosts: it reports whatever version triple the test put in a file,
so the supervisor's contract check, upgrade detection and crash handling can be provoked without reinstalling Bee.
Standard library only, so it starts in milliseconds.

    fake_host.py --version --json        print the triple from $FAKE_HOST_VERSION_FILE (else the installed one)
    fake_host.py http --fd N [--fd M]    serve GET /health on inherited sockets (the triple from
                                         $FAKE_HEALTH_VERSION_FILE, else $FAKE_HOST_VERSION_FILE)
    fake_host.py stdio                   answer an MCP handshake on stdin/stdout with the triple in _meta
    fake_host.py exit CODE               print a line and exit with CODE at once
    fake_host.py sleep                   run until signalled (for the process check)
    fake_host.py chatter BYTES           print BYTES of numbered lines, then sleep
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def triple(variable: str = "FAKE_HOST_VERSION_FILE") -> dict[str, str]:
    chosen = os.environ.get(variable) or os.environ.get("FAKE_HOST_VERSION_FILE")
    if chosen:
        with open(chosen, encoding="utf-8") as handle:
            value = json.load(handle)
        return {key: value[key] for key in ("version", "contractVersion", "contractDigest")}
    from bee_contracts import version_info

    return version_info()


def serve_http(fds: list[int]) -> None:
    body = json.dumps({"status": "ok", "host": "fake", **triple("FAKE_HEALTH_VERSION_FILE")}).encode()

    class Health(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status = 200 if self.path == "/health" else 404
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            print(f"fake host {os.getpid()}: {format % args}", file=sys.stderr, flush=True)

    servers = []
    for fd in fds:
        server = ThreadingHTTPServer(("127.0.0.1", 0), Health, bind_and_activate=False)
        server.socket.close()
        server.socket = socket.socket(fileno=fd)
        servers.append(server)
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"fake host {os.getpid()} serving on {fds}", file=sys.stderr, flush=True)
    while True:
        time.sleep(3600)


def serve_stdio() -> None:
    stamp = {"dev.bee/contract": triple("FAKE_HEALTH_VERSION_FILE")}
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue  # a notification
        method, ident = message.get("method"), message["id"]
        if method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "0"},
                "_meta": stamp,
            }
            answer = {"jsonrpc": "2.0", "id": ident, "result": result}
        elif method == "ping":
            answer = {"jsonrpc": "2.0", "id": ident, "result": {}}
        elif method == "tools/list":
            answer = {"jsonrpc": "2.0", "id": ident, "result": {"tools": [], "_meta": stamp}}
        else:
            answer = {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no method {method}"}}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def main(argv: list[str]) -> None:
    if argv[:2] == ["--version", "--json"]:
        print(json.dumps(triple()))
        return
    mode = argv[0]
    if mode == "http":
        serve_http([int(argv[i + 1]) for i, arg in enumerate(argv) if arg == "--fd"])
    elif mode == "stdio":
        serve_stdio()
    elif mode == "exit":
        print(f"fake host {os.getpid()} exits with {argv[1]}", flush=True)
        sys.exit(int(argv[1]))
    elif mode == "sleep":
        while True:
            time.sleep(3600)
    elif mode == "chatter":
        total, number = int(argv[1]), 0
        while total > 0:
            line = f"line {number:08d} " + "x" * 80
            print(line)
            total -= len(line) + 1
            number += 1
        print("chatter done", flush=True)
        while True:
            time.sleep(3600)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
