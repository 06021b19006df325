"""The skill tools and the discovery view through the official TypeScript SDK client (the client inside Claude
Code, Cursor, VS Code and the Inspector), which checks every success against the tool's outputSchema: skills from
a local directory and from a real tracker with a real token, both views."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import catalog_by_name, load_catalog
from bee_tracker import skills as tracker_skills
from tests.conftest import bee_executable
from tests.e2e.skills_setup import NOTES, TOKEN_ENV, bridge, skills_directory
from tests.harness import node
from tests.harness.node import answered, success, tool_error
from tests.harness.tracker import TrackerProcess

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(node.missing_reason() is not None, reason=str(node.missing_reason())),
]

REMOTE = f"team/{tracker_skills.SKILL_NAME}"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("bee_skill_search", {"query": "release notes backlog", "limit": 20}),
    ("bee_skill_get", {"path": "local/team/release-notes"}),
    ("bee_skill_resolve", {"path": "local/team/release-notes"}),
    ("bee_skill_get", {"path": REMOTE}),
    ("bee_skill_get", {"path": "local/../x"}),
    ("bee_skill_get", {"path": "local/broken"}),
    ("bee_skill_search", {"query": "x", "limit": 0}),
]


def check(results: list[dict[str, Any]]) -> None:
    searched, got, chain, remote, escaping, malformed, out_of_range = (answered(r) for r in results)
    assert [m["path"] for m in success(searched)["matches"]] == ["local/team/release-notes", REMOTE]
    assert success(got)["body"] == NOTES
    assert [s["path"] for s in success(chain)["skills"]] == ["local/git-workflow", "local/team/release-notes"]
    assert success(remote)["sha256"] == tracker_skills.bundled()[0].files[0].digest
    assert "climbs out" in tool_error(escaping, "outside_root")["error"]
    assert "needs a description" in tool_error(malformed, "invalid_argument")["error"]
    assert "1–20" in tool_error(out_of_range, "invalid_argument")["error"]


@pytest.mark.parametrize("view", ["direct", "discovery"])
def test_skill_tools_through_the_typescript_sdk_client(
    checkout: Path, tmp_path: Path, tracker_factory: Callable[..., TrackerProcess], view: str
) -> None:
    tracker = tracker_factory(str(tmp_path / "tracker.db"))
    bridge(checkout, skills_directory(tmp_path / "skills"), tracker)
    flags = ["--discovery"] if view == "discovery" else []
    server = node.stdio_server(
        bee_executable(), "mcp", "serve", *flags, cwd=checkout, env={TOKEN_ENV: tracker.token("alice@example.com")}
    )
    calls: list[tuple[str, dict[str, Any]]]
    if view == "direct":
        calls = CALLS
    else:
        calls = [("bee_tool_invoke", {"name": tool, "arguments": arguments}) for tool, arguments in CALLS]
        calls += [("bee_tool_invoke", {"name": "bee_nope"}), ("bee_tool_schema", {"name": "bee_skill_get"})]
    out = node.ts_client(server, calls)
    assert out["tools"] == [spec.to_wire() for spec in load_catalog("core" if view == "direct" else "discovery")]
    check(out["calls"][: len(CALLS)])
    if view == "discovery":
        unknown, schema = (answered(call) for call in out["calls"][len(CALLS) :])
        assert "no tool named 'bee_nope'" in tool_error(unknown, "not_found")["error"]
        assert success(schema) == catalog_by_name("core")["bee_skill_get"].to_wire()
