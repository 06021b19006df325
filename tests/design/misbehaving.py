"""Pages that misbehave, served on 127.0.0.1 by a real HTTP server: what `bee design capture` must bound and refuse.

A page whose script keeps the main thread busy after load, web fonts that never arrive (before and after load), a
document that never answers, a page that moves to another page of its origin after load, and pages that leave their
origin (a script, a meta refresh, an HTTP 302 to another port). Shared by the capture tests and the deadline
benchmark (tests/perf/bench_capture_deadlines.py).
"""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

RED, GREEN, BLUE = (200, 30, 30), (30, 160, 60), (40, 60, 200)


def page(colour: tuple[int, int, int], body: str = "", head: str = "") -> bytes:
    rgb = "rgb({}, {}, {})".format(*colour)
    return (
        f"<!doctype html><html><head><meta charset=utf-8>{head}<style>html, body {{ margin: 0; background: {rgb}; }}"
        f"</style></head><body><p>text</p>{body}</body></html>"
    ).encode()


#: A script run by a task queued just after the load event: ``{}`` is what it does.
AFTER_LOAD = '<script>addEventListener("load", () => setTimeout(() => {}, 0));</script>'
SPIN_AFTER_LOAD = page(RED, AFTER_LOAD.format("{ for (;;) {} }"))
FONT_FACE = "<style>@font-face { font-family: Never; src: url(/never.woff2); } .never { font-family: Never; }</style>"
FONT_AFTER_LOAD = page(
    RED,
    '<script>addEventListener("load", () => { const late = document.createElement("p"); late.className = "never";'
    ' late.textContent = "late"; document.body.append(late); document.body.offsetHeight; });</script>',
    FONT_FACE,
)
FONT_BEFORE_LOAD = page(RED, '<p class="never">never</p>', FONT_FACE)
MOVES_AFTER_LOAD = page(RED, AFTER_LOAD.format('location.replace("/landing.html")'))
LANDING = page(GREEN)


def leaves_by_script(elsewhere: str) -> bytes:
    return page(RED, AFTER_LOAD.format(f'location.assign("{elsewhere}")'))


def leaves_by_meta_refresh(elsewhere: str) -> bytes:
    return page(RED, head=f'<meta http-equiv="refresh" content="0; url={elsewhere}">')


@dataclass
class Site:
    """A server on 127.0.0.1 answering ``routes`` (path → page, or (status, Location)); a path that starts with
    ``/never`` is never answered (until the server stops)."""

    base: str
    routes: dict[str, Any]


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: dict[str, Any]
    release: threading.Event

    def do_GET(self) -> None:
        route = self.routes.get(self.path.split("?", 1)[0])
        if self.path.startswith("/never"):
            self.release.wait(120)  # answers nothing until the server stops (the browser is killed long before)
            return
        if route is None:
            self.send_error(404)
            return
        if isinstance(route, tuple):
            status, location = route
            self.send_response(status)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(route)))
        self.end_headers()
        self.wfile.write(route)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a killed browser drops its connections mid-request; that is the point, not a server fault


@contextlib.contextmanager
def serve(routes: dict[str, Any]) -> Iterator[Site]:
    release = threading.Event()
    handler = type("Handler", (_Handler,), {"routes": routes, "release": release})
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Site(f"http://127.0.0.1:{server.server_address[1]}", routes)
    finally:
        release.set()
        server.shutdown()
        server.server_close()
        thread.join()


@contextlib.contextmanager
def misbehaving() -> Iterator[tuple[Site, Site]]:
    """The site captured, and another origin (another port on 127.0.0.1) it sends its visitors to."""
    with serve({"/": page(BLUE)}) as elsewhere, serve({}) as site:
        site.routes.update(
            {
                "/spin.html": SPIN_AFTER_LOAD,
                "/font-after-load.html": FONT_AFTER_LOAD,
                "/font-before-load.html": FONT_BEFORE_LOAD,
                "/moves.html": MOVES_AFTER_LOAD,
                "/landing.html": LANDING,
                "/leaves-by-script.html": leaves_by_script(elsewhere.base + "/"),
                "/leaves-by-meta-refresh.html": leaves_by_meta_refresh(elsewhere.base + "/"),
                "/redirect": (302, elsewhere.base + "/"),
            }
        )
        yield site, elsewhere
