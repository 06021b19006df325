"""Bee's hosts through MCP clients Bee did not write: the official TypeScript SDK client and the MCP Inspector CLI.

Claude Code, Cursor, VS Code and the Inspector validate ``structuredContent`` against the tool's success
``outputSchema`` even when ``isError`` is true. An error envelope there reaches the user as "MCP error -32602:
Structured content does not match the tool's output schema" instead of the error. So a failed call must be
``isError: true`` with the envelope ``{error, code, retryable, outcome_unknown, details?}`` as JSON in its text
and no ``structuredContent``; these tests hold every host to that, as those clients see it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import load_catalog
from tests.conftest import bee_executable, make_checkout
from tests.harness import node
from tests.harness.node import answered, success, tool_error
from tests.harness.tracker import TrackerProcess

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(node.missing_reason() is not None, reason=str(node.missing_reason())),
]

ALICE, BOB = "alice@example.com", "bob@example.com"

#: The Inspector's exit code when the tool answered with ``isError: true`` (1 means the client itself threw).
INSPECTOR_TOOL_ERROR = 5


def manifest(*selections: dict[str, Any], budget: int = 32768) -> dict[str, Any]:
    return {"manifestJson": json.dumps({"selections": list(selections)}), "budgetBytes": budget}


# -- core: `bee mcp serve` over stdio ------------------------------------------------------------------------------


@pytest.fixture
def initialised_checkout(tmp_path: Path) -> Path:
    checkout = make_checkout(tmp_path / "checkout")
    subprocess.run([str(bee_executable()), "init", "--checkout", str(checkout)], check=True, capture_output=True)
    return checkout


@pytest.mark.usefixtures("host_mode")  # cold, and through a warm host
def test_core_over_stdio_through_the_typescript_sdk_client(initialised_checkout: Path) -> None:
    server = node.stdio_server(bee_executable(), "mcp", "serve", cwd=initialised_checkout)
    out = node.ts_client(
        server,
        [
            ("bee_context_packet", manifest({"id": "a", "path": "src/a.py", "representation": "index"})),
            ("bee_context_packet", manifest({"id": "a", "path": "src/nope.py", "representation": "index"})),
            ("bee_context_packet", manifest({"id": "a", "path": "src/a.py", "representation": "full"})),
            ("bee_context_packet", manifest({"id": "a", "path": "../etc/passwd", "representation": "index"})),
        ],
    )
    assert out["serverVersion"]["name"] == "bee-core"
    assert out["tools"] == [spec.to_wire() for spec in load_catalog("core")]
    ok, missing, invalid, outside = (answered(call) for call in out["calls"])
    packet = success(ok)
    assert packet["status"] == "complete" and packet["items"][0]["id"] == "a"
    assert "no file" in tool_error(missing, "not_found")["error"]
    assert "use one of" in tool_error(invalid, "invalid_argument")["error"]
    assert "climbs out" in tool_error(outside, "outside_root")["error"]


@pytest.mark.usefixtures("host_mode")  # cold, and through a warm host
def test_core_over_stdio_through_the_inspector_cli(initialised_checkout: Path) -> None:
    serve = [str(bee_executable()), "mcp", "serve"]
    listed = node.inspector(serve, "--method", "tools/list", cwd=initialised_checkout)
    assert listed.returncode == 0, listed.stderr
    assert [tool["name"] for tool in listed.result["tools"]] == [spec.name for spec in load_catalog("core")]

    arguments = manifest({"id": "a", "path": "src/nope.py", "representation": "index"})
    called = node.inspector(
        serve,
        *("--method", "tools/call", "--tool-name", "bee_context_packet"),
        *("--tool-args-json", json.dumps(arguments)),
        cwd=initialised_checkout,
    )
    assert called.returncode == INSPECTOR_TOOL_ERROR, (called.error, called.stderr)
    assert called.error is not None and called.error["code"] == "tool_is_error"
    assert "no file" in tool_error(called.result, "not_found")["error"]


# -- tracker: `bee tracker serve` over Streamable HTTP with real tokens ---------------------------------------------


@pytest.fixture
def tracker(tracker_factory: Callable[..., TrackerProcess], tmp_path: Path) -> TrackerProcess:
    return tracker_factory(str(tmp_path / "tracker.db"))


def as_actor(server: TrackerProcess, actor: str, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """One TS client session as ``actor`` making ``calls``; returns each CallToolResult."""
    out = node.ts_client(node.http_server(server.url, server.token(actor)), calls)
    assert out["tools"] == [spec.to_wire() for spec in load_catalog("tracker")]
    return [answered(call) for call in out["calls"]]


def test_tracker_over_http_through_the_typescript_sdk_client(tracker: TrackerProcess) -> None:
    first, prerequisite = (
        success(result)["data"]
        for result in as_actor(tracker, ALICE, [("create", {"title": "ship it"}), ("create", {"title": "build it"})])
    )
    task, blocker, stale = first["id"], prerequisite["id"], prerequisite["state_revision"]
    setup = [
        ("update", {"id": blocker, "priority": 0, "expected_revision": stale}),
        ("link", {"id": task, "target": blocker}),
        ("claim", {"id": task}),
    ]
    failing = [
        ("get", {"id": "bd-nope"}),
        ("update", {"id": blocker, "priority": 4, "expected_revision": stale}),
        ("complete", {"id": task, "summary": "done"}),
    ]
    alice = as_actor(tracker, ALICE, setup + failing)
    for result in alice[: len(setup)]:
        success(result)
    missing, conflict, blocked = alice[len(setup) :]
    [forbidden] = as_actor(tracker, BOB, [("release", {"id": task, "reason": "mine now"})])

    tool_error(missing, "not_found")
    assert tool_error(conflict, "conflict")["details"]["state_revision"] == stale + 1
    assert blocker in json.dumps(tool_error(blocked, "blocked"))
    assert ALICE in tool_error(forbidden, "forbidden")["error"]


def test_tracker_over_http_through_the_inspector_cli(tracker: TrackerProcess) -> None:
    [created] = as_actor(tracker, ALICE, [("create", {"title": "mine"})])
    task = success(created)["data"]["id"]
    [claimed] = as_actor(tracker, ALICE, [("claim", {"id": task})])
    success(claimed)

    called = node.inspector(
        [],
        *("--transport", "http", "--server-url", tracker.url),
        *("--method", "tools/call", "--tool-name", "release", "--tool-arg", f"id={task}", "reason=mine"),
        headers={"Authorization": f"Bearer {tracker.token(BOB)}"},
    )
    assert called.returncode == INSPECTOR_TOOL_ERROR, (called.error, called.stderr)
    assert called.error is not None and called.error["code"] == "tool_is_error"
    assert ALICE in tool_error(called.result, "forbidden")["error"]


# -- the files `bee setup-mcp` writes, read by the Inspector ----------------------------------------------------------

#: The editors whose file the Inspector's ``--config`` reads (an ``mcpServers`` object): where it is written, and
#: whether the Inspector reads its HTTP entry too (Cursor's format documents no ``type``; Cursor infers HTTP from
#: ``url``, the Inspector takes an entry without ``type`` for stdio).
INSPECTOR_READS = {"claude": (".mcp.json", True), "cursor": (".cursor/mcp.json", False)}


@pytest.mark.parametrize("tool", sorted(INSPECTOR_READS))
def test_the_written_editor_file_drives_the_inspector_with_config_and_server(
    tool: str, initialised_checkout: Path, tmp_path: Path, tracker_factory: Callable[..., TrackerProcess]
) -> None:
    tracker = tracker_factory()
    command = [str(bee_executable()), "setup-mcp", "--tool", tool, "--project", str(initialised_checkout)]
    setup = subprocess.run(
        [*command, "--tracker-url", tracker.url, "--tracker-auth", "token"],  # a tracker of pasted tokens
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert setup.returncode == 0, setup.stderr
    file, reads_http = INSPECTOR_READS[tool]
    written = initialised_checkout / file
    servers = json.loads(written.read_text())["mcpServers"]
    stdio = sorted(name for name, entry in servers.items() if "command" in entry)
    assert "bee-core" in stdio
    for name in stdio:
        host = name.removeprefix("bee-")
        # The entry as written, in the cold mode every test runs (the Inspector gives it -e variables on top).
        cold = {"BEE_WARM": "0"}
        listed = node.inspector([], "--config", str(written), "--server", name, "--method", "tools/list", env=cold)
        assert listed.returncode == 0, (name, listed.stderr)
        assert [t["name"] for t in listed.result["tools"]] == [spec.name for spec in load_catalog(host)]

    if not reads_http:
        return
    # The Inspector sends ${BEE_TRACKER_TOKEN} as written (it expands no environment references), so the tracker
    # refuses the entry as it stands; the documented form gives the header on the command line instead.
    refused = node.inspector([], "--config", str(written), "--server", "bee-tracker", "--method", "tools/list")
    assert refused.returncode != 0
    token = tracker.token(ALICE)
    listed = node.inspector(
        [],
        "--config",
        str(written),
        "--server",
        "bee-tracker",
        "--method",
        "tools/list",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert listed.returncode == 0, listed.stderr
    assert [t["name"] for t in listed.result["tools"]] == [spec.name for spec in load_catalog("tracker")]
