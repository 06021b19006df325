"""What `bee tracker serve` loads before it answers, and what it says when a part cannot be built."""

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from bee_hostkit import Host
from bee_tracker import host as server
from bee_tracker.auth import mint
from bee_tracker.config import TrackerConfig
from bee_tracker.store import SqlStore, open_store
from tests.board.helpers import ALICE, SECRET, client

#: What the tracker's request paths need only after start-up: the SDK (and pydantic with it), the token library
#: (and cryptography with it), the board's template engine and its Graphviz writer.
HEAVY = ("mcp", "mcp_types", "pydantic", "jwt", "cryptography", "jinja2", "graphviz")


def test_the_app_is_built_without_the_sdk_or_the_board_libraries(tmp_path: Path) -> None:
    code = f"""
import json, sys
from pathlib import Path
from bee_tracker.config import TrackerConfig
from bee_tracker.serving import build, verifier_for
config = TrackerConfig(home=Path({str(tmp_path / "home")!r}))
app = build(config, verifier_for(config))
print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
"""
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(completed.stdout) == [], completed.stderr


@pytest.fixture
def lite(tmp_path: Path) -> Iterator[SqlStore]:
    opened = open_store(str(tmp_path / "tracker.db"), prefix="t")
    yield opened
    opened.close()


def test_an_mcp_server_that_cannot_be_built_fails_health_and_mcp_with_the_reason(
    lite: SqlStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(store: SqlStore, config: TrackerConfig) -> NoReturn:
        raise ValueError("tracker: catalog and handlers disagree")

    monkeypatch.setattr(server, "build_host", broken)
    with client(lite, tmp_path) as web:
        # An MCP request waits for the build, and gets its failure.
        token = {"authorization": f"Bearer {mint(SECRET, ALICE)}", "host": "127.0.0.1"}
        answer = web.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=token)
        reason = "the MCP endpoint /mcp could not be started (ValueError: tracker: catalog and handlers disagree)"
        assert answer.status_code == 503 and answer.json()["error_description"] == reason
        # From then on the health check says so, for a supervisor to restart the tracker.
        health = web.get("/health")
        assert health.status_code == 503 and health.json()["status"] == "failed"
        assert health.json()["problems"] == [reason]
        assert web.get("/board/signin").status_code == 200  # the board was built all the same


def held_build(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Hold the MCP server's build until the returned event is set."""
    release = threading.Event()
    real = server.build_host

    def held(store: SqlStore, config: TrackerConfig) -> Host:
        assert release.wait(timeout=60), "the test never let the build finish"
        return real(store, config)

    monkeypatch.setattr(server, "build_host", held)
    return release


def test_health_says_starting_until_the_mcp_server_is_built_then_ok(
    lite: SqlStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = held_build(monkeypatch)
    monkeypatch.setattr(server, "HEALTH_WAIT_SECONDS", 0.2)
    with client(lite, tmp_path) as web:
        # A supervisor must not count this replica ready while /mcp would still wait.
        health = web.get("/health")
        assert health.status_code == 503 and health.json()["status"] == "starting"
        assert "the MCP endpoint /mcp" in health.json()["starting"]
        release.set()
        token = {"authorization": f"Bearer {mint(SECRET, ALICE)}", "host": "127.0.0.1"}
        listed = web.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=token)
        assert listed.status_code == 200 and "tools" in listed.json()["result"]
        web.get("/board/signin")  # waits for the board's build too
        assert web.get("/health").json()["status"] == "ok"


def test_health_asked_during_the_build_waits_for_it_and_answers_ok(
    lite: SqlStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replica sharing an address takes connections while it builds: its health waits, as /mcp does."""
    release = held_build(monkeypatch)
    with client(lite, tmp_path) as web:
        threading.Timer(0.5, release.set).start()
        health = web.get("/health")
        assert release.is_set() and health.status_code == 200 and health.json()["status"] == "ok"
