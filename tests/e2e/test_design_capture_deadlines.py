"""`bee design capture` keeps its deadline and its origin, run as a user runs it, against pages that misbehave.

Pages served on 127.0.0.1 by a real HTTP server: one whose script keeps the main thread busy after load, web fonts
that never arrive (before and after load), a page that moves to another page of its origin after load, and pages
that leave their origin (a script, a meta refresh, an HTTP 302 to another port). Each run is the real CLI in a
subprocess with a small ``--timeout``; the checks are its exit status and message, the evidence folder (there is none
after a failure, not even a partial one) and the processes it leaves: the CLI runs under a child subreaper
(``tests.harness.reaper``), which every process it starts stays a descendant of — Chromium's own session and
process group and its crash handler's double fork included — and none may be alive once the CLI has exited.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import secrets
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from bee_design.capture.evidence import EVIDENCE_FILE, parse_evidence
from bee_design.capture.settings import browser_executable
from tests.conftest import bee_executable

REPOSITORY = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not Path(browser_executable()).exists() and not os.environ.get("BEE_REQUIRE_CHROMIUM"),
        reason="Chromium is not installed (CI installs Debian's chromium)",
    ),
]

#: The deadline of the runs that must stall: small, but room for a trivial page to load on a busy machine.
STALL_TIMEOUT = "8"
#: The deadline of the runs that must succeed (a give-up guard, not a measure).
EASY_TIMEOUT = "60"
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
    """A server on 127.0.0.1 answering ``routes`` (path → page, or (status, Location)); ``/never.woff2`` never."""

    base: str
    routes: dict[str, Any]


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: dict[str, Any]
    release: threading.Event

    def do_GET(self) -> None:
        route = self.routes.get(self.path.split("?", 1)[0])
        if self.path == "/never.woff2":
            self.release.wait(120)  # answers nothing until the test ends (the browser is killed long before)
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


@pytest.fixture(scope="module")
def sites() -> Iterator[tuple[Site, Site]]:
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


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    out: Path
    #: Processes the run started that were still alive after it exited: pid → command line.
    survivors: dict[int, str]

    def evidence(self) -> Any:
        return parse_evidence((self.out / EVIDENCE_FILE).read_bytes(), "evidence")

    def error(self) -> str:
        """The one line a failed run prints: no traceback, no asyncio report of an exception nobody retrieved."""
        assert self.returncode == 1, self.stderr
        lines = self.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), self.stderr
        return lines[0]

    def assert_succeeded(self) -> None:
        assert (self.returncode, self.stderr) == (0, "")

    def assert_nothing_kept(self) -> None:
        assert not self.out.exists()
        assert [p.name for p in self.out.parent.iterdir() if p.name.startswith(f".{self.out.name}.")] == []


@pytest.fixture
def capture(tmp_path: Path) -> Callable[..., Run]:
    def run(*urls: str, timeout: str = STALL_TIMEOUT, flags: tuple[str, ...] = ()) -> Run:
        out = tmp_path / "evidence" / "run"
        report = tmp_path / f"left-{secrets.token_hex(4)}.json"
        command = [str(bee_executable()), "design", "capture", *urls, "--viewport", "desktop=320x200"]
        command += ["--timeout", timeout, *flags, "--out", str(out), "--root", str(tmp_path)]
        completed = subprocess.run(
            [sys.executable, "-m", "tests.harness.reaper", str(report), "--", *command],
            capture_output=True,
            text=True,
            timeout=240,  # give up on a run that ignores its deadline (the behaviour under test)
            cwd=REPOSITORY,
            check=False,
        )
        survivors = {int(pid): line for pid, line in json.loads(report.read_text()).items()}
        return Run(completed.returncode, completed.stdout, completed.stderr, out, survivors)

    return run


def colour(path: Path) -> tuple[int, int, int]:
    with Image.open(path) as image:
        red, green, blue, *_ = image.convert("RGBA").getpixel((300, 190))
        return red, green, blue


def test_a_page_whose_script_keeps_the_main_thread_busy_after_load_is_killed_at_the_deadline(sites, capture):
    site, _ = sites
    run = capture(f"busy={site.base}/spin.html")
    assert run.error().startswith(
        f"Error: {site.base}/spin.html (viewport desktop) stalled waiting for the page's main thread (a script keeps "
        f"it busy): its capture did not finish within {STALL_TIMEOUT} s, so the browser was killed and no evidence "
        "was kept. Raise --timeout"
    )
    run.assert_nothing_kept()
    assert run.survivors == {}


def test_a_web_font_that_never_arrives_after_load_stalls_waiting_for_fonts(sites, capture):
    site, _ = sites
    run = capture(f"{site.base}/font-after-load.html")
    assert run.error().startswith(
        f"Error: {site.base}/font-after-load.html (viewport desktop) stalled waiting for fonts (document.fonts.ready):"
        f" its capture did not finish within {STALL_TIMEOUT} s"
    )
    run.assert_nothing_kept()
    assert run.survivors == {}


def test_a_web_font_that_never_arrives_before_load_stalls_loading_and_no_earlier_page_is_kept(sites, capture):
    site, _ = sites
    run = capture(f"landing={site.base}/landing.html", f"font={site.base}/font-before-load.html")
    assert run.error().startswith(
        f"Error: {site.base}/font-before-load.html (viewport desktop) stalled loading (waiting for the load event)"
    )
    run.assert_nothing_kept()  # the first page's screenshot went with the failed run
    assert run.survivors == {}


def test_a_page_that_moves_within_its_origin_after_load_is_captured_where_it_ends(sites, capture):
    site, _ = sites
    # Three captures of the page in one run: the navigation races each one's settling differently.
    urls = [f"{name}={site.base}/moves.html" for name in ("first", "second", "third")]
    run = capture(*urls, timeout=EASY_TIMEOUT)
    run.assert_succeeded()
    evidence = run.evidence()
    assert [(c.name, c.url, c.final_url) for c in evidence.captures] == [
        (name, f"{site.base}/moves.html", f"{site.base}/landing.html") for name in ("first", "second", "third")
    ]
    for shot in evidence.captures:
        assert colour(run.out / shot.file) == GREEN  # the page it moved to, not the one it left
    assert json.loads((run.out / EVIDENCE_FILE).read_text())["captures"][0]["finalUrl"] == f"{site.base}/landing.html"
    assert f"(ended at {site.base}/landing.html)" in run.stdout
    assert run.survivors == {}


@pytest.mark.parametrize("how", ["script", "meta-refresh"])
def test_a_page_that_leaves_its_origin_after_load_is_refused(sites, capture, how):
    site, elsewhere = sites
    run = capture(f"{site.base}/leaves-by-{how}.html")
    assert run.error() == (
        f"Error: {site.base}/leaves-by-{how}.html (viewport desktop) navigated to {elsewhere.base}/, outside the "
        f"origin {site.base} it was given; the capture is refused and no evidence was kept. Capture "
        f"{elsewhere.base}/ itself, or pass --allow-cross-origin-redirect to follow it"
    )
    run.assert_nothing_kept()
    assert run.survivors == {}


def test_an_http_redirect_to_another_port_is_refused_unless_allowed_and_the_final_url_is_recorded(sites, capture):
    site, elsewhere = sites
    refused = capture(f"moved={site.base}/redirect")
    assert refused.error().startswith(
        f"Error: {site.base}/redirect (viewport desktop) redirected to {elsewhere.base}/, outside the origin "
        f"{site.base} it was given"
    )
    refused.assert_nothing_kept()
    assert refused.survivors == {}

    allowed = capture(f"moved={site.base}/redirect", timeout=EASY_TIMEOUT, flags=("--allow-cross-origin-redirect",))
    allowed.assert_succeeded()
    evidence = allowed.evidence()
    (shot,) = evidence.captures
    assert (shot.url, shot.final_url) == (f"{site.base}/redirect", f"{elsewhere.base}/")
    assert colour(allowed.out / shot.file) == BLUE
    assert evidence.settings["crossOrigin"] == "allowed"
    assert allowed.survivors == {}


def test_the_reaper_reports_a_process_that_left_its_session_and_parent(tmp_path):
    """The check above can fail: a double-forked process in a session of its own is still found."""
    report = tmp_path / "left.json"
    detach = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(60)"
    completed = subprocess.run(
        [sys.executable, "-m", "tests.harness.reaper", str(report), "--", sys.executable, "-c", detach],
        timeout=60,
        cwd=REPOSITORY,
        check=False,
    )
    assert completed.returncode == 0
    (line,) = json.loads(report.read_text()).values()
    assert "time.sleep(60)" in line
