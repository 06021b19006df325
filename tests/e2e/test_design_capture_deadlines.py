"""`bee design capture` keeps its deadline and its origin, run as a user runs it, against pages that misbehave
(tests.design.misbehaving, on 127.0.0.1).

Each run is the real CLI in a subprocess with a small ``--timeout``; the checks are its exit status and message, the
evidence folder (there is none after a failure, not even a partial one) and the processes it leaves: the CLI runs
under a child subreaper (``tests.harness.reaper``), which every process it starts stays a descendant of —
Chromium's own session and process group and its crash handler's double fork included — and none may be alive once
the CLI has exited.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from bee_design.capture.evidence import EVIDENCE_FILE, parse_evidence
from tests.conftest import NEEDS_CHROMIUM, bee_executable
from tests.design.misbehaving import BLUE, GREEN, Site, misbehaving

REPOSITORY = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.e2e,
    NEEDS_CHROMIUM,
]

#: The deadline of the runs that must stall: small, but room for a trivial page to load on a busy machine.
STALL_TIMEOUT = "8"
#: The deadline of the runs that must succeed (a give-up guard, not a measure).
EASY_TIMEOUT = "60"


@pytest.fixture(scope="module")
def sites() -> Iterator[tuple[Site, Site]]:
    with misbehaving() as both:
        yield both


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
        pixel = image.convert("RGBA").getpixel((300, 190))
        assert isinstance(pixel, tuple)
        red, green, blue, *_ = pixel
        return red, green, blue


def test_a_page_whose_script_keeps_the_main_thread_busy_after_load_is_killed_at_the_deadline(
    sites: tuple[Site, Site], capture: Callable[..., Run]
) -> None:
    site, _ = sites
    run = capture(f"busy={site.base}/spin.html")
    assert run.error().startswith(
        f"Error: {site.base}/spin.html (viewport desktop) stalled waiting for the page's main thread (a script keeps "
        f"it busy): its capture did not finish within {STALL_TIMEOUT} s, so the browser was killed and no evidence "
        "was kept. Raise --timeout"
    )
    run.assert_nothing_kept()
    assert run.survivors == {}


def test_a_web_font_that_never_arrives_after_load_stalls_waiting_for_fonts(
    sites: tuple[Site, Site], capture: Callable[..., Run]
) -> None:
    site, _ = sites
    run = capture(f"{site.base}/font-after-load.html")
    assert run.error().startswith(
        f"Error: {site.base}/font-after-load.html (viewport desktop) stalled waiting for fonts (document.fonts.ready):"
        f" its capture did not finish within {STALL_TIMEOUT} s"
    )
    run.assert_nothing_kept()
    assert run.survivors == {}


def test_a_web_font_that_never_arrives_before_load_stalls_loading_and_no_earlier_page_is_kept(
    sites: tuple[Site, Site], capture: Callable[..., Run]
) -> None:
    site, _ = sites
    run = capture(f"landing={site.base}/landing.html", f"font={site.base}/font-before-load.html")
    assert run.error().startswith(
        f"Error: {site.base}/font-before-load.html (viewport desktop) stalled loading (waiting for the load event)"
    )
    run.assert_nothing_kept()  # the first page's screenshot went with the failed run
    assert run.survivors == {}


def test_a_document_that_never_answers_stalls_navigating(sites: tuple[Site, Site], capture: Callable[..., Run]) -> None:
    site, _ = sites
    run = capture(f"{site.base}/never.html")
    assert run.error().startswith(f"Error: {site.base}/never.html (viewport desktop) stalled navigating: its capture")
    run.assert_nothing_kept()
    assert run.survivors == {}


def test_a_wait_for_that_is_not_a_selector_is_named_and_not_taken_for_a_stall(
    sites: tuple[Site, Site], capture: Callable[..., Run]
) -> None:
    site, _ = sites
    run = capture(f"{site.base}/landing.html", flags=("--wait-for", "##app"))
    assert run.error().startswith("Error: --wait-for '##app' is not a valid selector (")
    run.assert_nothing_kept()
    assert run.survivors == {}


def test_a_page_that_moves_within_its_origin_after_load_is_captured_where_it_ends(
    sites: tuple[Site, Site], capture: Callable[..., Run]
) -> None:
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
def test_a_page_that_leaves_its_origin_after_load_is_refused(
    sites: tuple[Site, Site], capture: Callable[..., Run], how: str
) -> None:
    site, elsewhere = sites
    run = capture(f"{site.base}/leaves-by-{how}.html")
    assert run.error() == (
        f"Error: {site.base}/leaves-by-{how}.html (viewport desktop) navigated to {elsewhere.base}/, outside the "
        f"origin {site.base} it was given; the capture is refused and no evidence was kept. Capture "
        f"{elsewhere.base}/ itself, or pass --allow-cross-origin-redirect to follow it"
    )
    run.assert_nothing_kept()
    assert run.survivors == {}


def test_an_http_redirect_to_another_port_is_refused_unless_allowed_and_the_final_url_is_recorded(
    sites: tuple[Site, Site], capture: Callable[..., Run]
) -> None:
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


def test_the_reaper_reports_a_process_that_left_its_session_and_parent(tmp_path: Path) -> None:
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
