"""Capture in a real Chromium (Debian's, driven by Playwright) of pages served from 127.0.0.1.

The machine is shared: the browser starts as few times as these promises allow (one run per test at most).
"""

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from bee_contracts import BeeError
from bee_design.capture.evidence import EVIDENCE_FILE, PRODUCER, Evidence, parse_evidence
from bee_design.capture.runner import capture
from bee_design.capture.settings import Settings, browser_executable
from bee_design.capture.targets import Target, parse_target, parse_viewport
from bee_design.digests import of_bytes
from tests.conftest import NEEDS_CHROMIUM, bee_executable
from tests.design.helpers import SHOP, static_server

pytestmark = [
    pytest.mark.e2e,
    NEEDS_CHROMIUM,
]

VIEWPORTS = (parse_viewport("desktop=800x600"), parse_viewport("mobile=390x640"))


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with static_server(SHOP) as url:
        yield url


@pytest.fixture(scope="module")
def evidence(site: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Evidence]:
    """One capture run: the screen and the component, each at two viewports."""
    out = tmp_path_factory.mktemp("evidence") / "run"
    targets = [Target("home", site), Target("button", site + "components/button.html")]
    recorded = capture(targets, Settings(browser_executable(), VIEWPORTS, wait_for="#app, .buy"), out)
    return out, recorded


def pixels(path: Path) -> np.ndarray:
    with Image.open(path, formats=["PNG"]) as image:
        return np.asarray(image.convert("RGBA"))


def test_evidence_records_every_screenshot_with_its_hash_browser_flags_and_fonts(
    evidence: tuple[Path, Evidence],
) -> None:
    out, recorded = evidence
    assert parse_evidence((out / EVIDENCE_FILE).read_bytes(), "evidence") == recorded
    assert recorded.producer == PRODUCER
    assert [(c.name, c.viewport) for c in recorded.captures] == [
        ("home", "desktop"),
        ("home", "mobile"),
        ("button", "desktop"),
        ("button", "mobile"),
    ]
    assert sorted(p.name for p in out.iterdir()) == sorted([EVIDENCE_FILE] + [c.file for c in recorded.captures])
    for shot in recorded.captures:
        data = (out / shot.file).read_bytes()
        assert shot.sha256 == of_bytes(data) and shot.bytes == len(data)
        assert (
            (shot.image_width, shot.image_height) == (shot.width, shot.height) == pixels(out / shot.file).shape[1::-1]
        )
    browser = recorded.browser
    assert browser["version"].startswith("156.") and browser["executable"] == browser_executable()
    assert {"--disable-gpu", "--disable-background-networking", "--hide-scrollbars"} <= set(browser["flags"])
    assert "--headless" in browser["commandLine"] and "--disable-gpu" in browser["commandLine"]
    assert recorded.settings["timezone"] == "UTC" and recorded.settings["locale"] == "en-US"
    home = recorded.captures[0]
    families = {font.family for font in home.fonts}
    assert {"DejaVu Sans", "DejaVu Sans Mono"} <= families, home.fonts
    assert all(font.glyphs > 0 for font in home.fonts)


def test_the_same_page_captured_five_times_gives_identical_pixels(
    site: str, evidence: tuple[Path, Evidence], tmp_path: Path
) -> None:
    _, first_run = evidence
    targets = [Target(f"again-{n}", site) for n in range(5)]
    recorded = capture(targets, Settings(browser_executable(), VIEWPORTS[:1], wait_for="#app"), tmp_path / "again")
    shots = [pixels(tmp_path / "again" / c.file) for c in recorded.captures]
    reference = pixels(evidence[0] / first_run.captures[0].file)  # another browser run
    for shot in shots:
        assert shot.shape == reference.shape and np.array_equal(shot, reference)
    assert len({c.sha256 for c in recorded.captures} | {first_run.captures[0].sha256}) == 1


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_url_that_does_not_answer_is_named_and_nothing_half_written_stays(site: str, tmp_path: Path) -> None:
    out = tmp_path / "evidence"
    dead = f"http://127.0.0.1:{_closed_port()}/"
    with pytest.raises(BeeError) as caught:
        capture([Target("home", site), Target("dead", dead)], Settings(browser_executable(), VIEWPORTS[:1]), out)
    assert caught.value.code == "not_found"
    assert f"{dead} did not answer (net::ERR_CONNECTION_REFUSED)" in caught.value.message
    assert list(tmp_path.iterdir()) == []  # neither the folder nor the partial capture of "home"


def test_a_port_chromium_will_not_load_is_named_as_such_not_as_a_server_that_is_down(tmp_path: Path) -> None:
    out = tmp_path / "evidence"
    with pytest.raises(BeeError) as caught:
        capture([Target("discard", "http://127.0.0.1:9/")], Settings(browser_executable(), VIEWPORTS[:1]), out)
    assert caught.value.code == "invalid_argument"
    assert "port 9 is one browsers keep for other protocols (net::ERR_UNSAFE_PORT)" in caught.value.message
    assert "serve the page on another port" in caught.value.message
    assert list(tmp_path.iterdir()) == []


def test_an_element_that_never_appears_and_an_http_error_are_named(site: str, tmp_path: Path) -> None:
    settings = Settings(browser_executable(), VIEWPORTS[:1], timeout_seconds=2, wait_for="#never")
    with pytest.raises(BeeError) as caught:
        capture([Target("home", site)], settings, tmp_path / "a")
    assert caught.value.code == "not_found"
    assert f"element '#never' never appeared on {site} (viewport desktop) within 2 s" in caught.value.message
    with pytest.raises(BeeError) as caught:
        capture([Target("gone", site + "gone.html")], Settings(browser_executable(), VIEWPORTS[:1]), tmp_path / "b")
    assert caught.value.code == "not_found" and "answered HTTP 404" in caught.value.message
    assert list(tmp_path.iterdir()) == []


def test_bad_capture_arguments_are_refused_before_a_browser_starts(tmp_path: Path) -> None:
    for text, message in (("desktop=1440", "NAME=WIDTHxHEIGHT"), ("d=0x10", "1–16384")):
        with pytest.raises(BeeError, match=message):
            parse_viewport(text)
    with pytest.raises(BeeError, match="not an http"):
        parse_target("ftp://example.org/")
    assert parse_target("http://127.0.0.1:8/a/b.html?x=1") == Target("a/b.html", "http://127.0.0.1:8/a/b.html?x=1")
    assert parse_target("http://127.0.0.1:8/") == Target("index", "http://127.0.0.1:8/")
    settings = Settings(browser_executable(), VIEWPORTS)
    with pytest.raises(BeeError, match="share screenshot files"):
        capture([Target("a/b", "http://x/"), Target("a:b", "http://x/")], settings, tmp_path / "x")
    (tmp_path / "exists").mkdir()
    with pytest.raises(BeeError) as caught:
        capture([Target("a", "http://x/")], settings, tmp_path / "exists")
    assert caught.value.code == "conflict" and "--force" in caught.value.message
    with pytest.raises(BeeError, match="no browser at /no/chromium"):
        capture([Target("a", "http://x/")], Settings("/no/chromium", VIEWPORTS), tmp_path / "y")


def test_the_cli_captures_several_pages_with_a_progress_bar(site: str, tmp_path: Path) -> None:
    out = tmp_path / "cli"
    completed = subprocess.run(
        [
            str(bee_executable()),
            "design",
            "capture",
            f"home={site}",
            f"button={site}components/button.html",
            "--viewport",
            "desktop=640x480",
            "--out",
            str(out),
            "--root",
            str(tmp_path),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "TTY_COMPATIBLE": "1"},  # rich draws its bar only for a terminal
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "capturing" in completed.stderr
    summary = json.loads(completed.stdout)
    assert [c["file"] for c in summary["captures"]] == ["home--desktop.png", "button--desktop.png"]
    assert (out / EVIDENCE_FILE).is_file()
