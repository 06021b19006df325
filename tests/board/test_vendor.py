"""The board's only script is htmx, vendored from its npm package by a pinned, checked step; every page loads it."""

import hashlib
import json
from pathlib import Path

from starlette.testclient import TestClient

from tests.board.helpers import sign_in

STATIC = Path(__file__).parents[2] / "packages/bee-tracker/src/bee_tracker/board/static"
PIN = STATIC / "vendor/htmx.org/VENDORED.json"


def test_the_vendored_files_are_exactly_the_pinned_ones() -> None:
    pin = json.loads(PIN.read_text())
    assert pin["package"] == "htmx.org" and pin["version"] == "2.0.11" and pin["license"] == "0BSD"
    assert pin["integrity"].startswith("sha512-")
    for entry in pin["files"].values():
        data = (PIN.parent / entry["as"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry["as"]
    assert "Zero-Clause BSD" in (PIN.parent / "LICENSE").read_text()
    assert sorted(p.name for p in PIN.parent.iterdir()) == ["LICENSE", "VENDORED.json", "htmx.min.js"]


def test_the_board_serves_the_vendored_library_and_its_license(web: TestClient) -> None:
    sign_in(web)
    served = web.get("/board/static/vendor/htmx.org/htmx.min.js")
    assert served.status_code == 200 and served.headers["content-type"].startswith("text/javascript")
    assert served.content == (PIN.parent / "htmx.min.js").read_bytes()
    assert web.get("/board/static/vendor/htmx.org/LICENSE").status_code == 200
    assert web.get("/board/static/../templates/base.html").status_code == 404


def test_no_static_file_reaches_for_another_site() -> None:
    for path in STATIC.rglob("*"):
        if path.suffix in (".css", ".html"):
            text = path.read_text()
            assert "http://" not in text and "https://" not in text and "@import" not in text, path
