"""The skill tools through a real `bee mcp serve`, both views and both protocol eras, with the official client:
skills from a local directory and from a real running tracker (real tokens), and every bad input refused."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bee_tracker import skills as tracker_skills
from tests.conftest import ERAS, core_client, error_of
from tests.e2e.skills_setup import GIT, NOTES, TOKEN_ENV, bridge, skills_directory
from tests.harness.tracker import TrackerProcess

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

VIEWS = ("direct", "discovery")


async def use(client: Any, view: str, tool: str, arguments: dict[str, Any]) -> Any:
    """Call ``tool`` the way the view offers it: directly, or through bee_tool_invoke."""
    if view == "direct":
        return await client.call_tool(tool, arguments)
    return await client.call_tool("bee_tool_invoke", {"name": tool, "arguments": arguments})


def ok(result: Any) -> dict[str, Any]:
    assert result.is_error is False, result.content
    data: dict[str, Any] = result.structured_content
    assert json.loads(result.content[0].text) == data
    return data


def sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("era", ERAS)
async def test_skills_from_a_directory_and_a_tracker(
    checkout: Path, tmp_path: Path, tracker_factory: Callable[..., TrackerProcess], era: str, view: str
) -> None:
    tracker = tracker_factory(str(tmp_path / "tracker.db"))
    bridge(checkout, skills_directory(tmp_path / "skills"), tracker)
    env = {TOKEN_ENV: tracker.token("alice@example.com")}
    flags = ("--discovery",) if view == "discovery" else ()
    async with core_client(checkout, era, *flags, env=env) as client:
        found = ok(await use(client, view, "bee_skill_search", {"query": "release notes backlog", "limit": 20}))
        assert [m["path"] for m in found["matches"]] == [
            "local/team/release-notes",
            f"team/{tracker_skills.SKILL_NAME}",
        ]
        assert [u["path"] for u in found["unreadable"]] == ["local/broken"]

        got = ok(await use(client, view, "bee_skill_get", {"path": "local/team/release-notes"}))
        assert got["body"] == NOTES and got["sha256"] == sha(NOTES) and got["prerequisites"] == ["local/git-workflow"]
        remote = ok(await use(client, view, "bee_skill_get", {"path": f"team/{tracker_skills.SKILL_NAME}"}))
        assert remote["sha256"] == tracker_skills.bundled()[0].files[0].digest and remote["provider"] == "team"

        chain = ok(await use(client, view, "bee_skill_resolve", {"path": "local/team/release-notes"}))
        assert [(s["path"], s["body"]) for s in chain["skills"]] == [
            ("local/git-workflow", GIT),
            ("local/team/release-notes", NOTES),
        ]

        refusals: list[tuple[str, dict[str, Any], str, str]] = [
            ("bee_skill_get", {"path": "local/nope"}, "not_found", "no skill local/nope"),
            ("bee_skill_get", {"path": "local/../etc"}, "outside_root", "climbs out with '..'"),
            ("bee_skill_get", {"path": "local/broken"}, "invalid_argument", "needs a description"),
            ("bee_skill_resolve", {"path": "team/nope"}, "not_found", "does not serve skill://nope/SKILL.md"),
            ("bee_skill_search", {"query": "x", "limit": 0}, "invalid_argument", "outside the allowed range 1–20"),
            ("bee_skill_search", {"query": "x", "limit": 21}, "invalid_argument", "outside the allowed range 1–20"),
            ("bee_skill_get", {}, "invalid_argument", "missing required argument 'path'"),
        ]
        for tool, arguments, code, text in refusals:
            body = error_of(await use(client, view, tool, arguments))
            assert body["code"] == code and text in body["error"], (tool, arguments, body)

    tracker.stop()
    async with core_client(checkout, era, *flags, env=env) as client:
        body = error_of(await use(client, view, "bee_skill_search", {"query": "backlog"}))
    assert body["code"] == "unavailable" and body["retryable"] is True and "skill provider 'team'" in body["error"]


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("era", ERAS)
async def test_without_a_bridge_each_tool_answers_how_to_configure_one(checkout: Path, era: str, view: str) -> None:
    flags = ("--discovery",) if view == "discovery" else ()
    async with core_client(checkout, era, *flags) as client:
        for tool, arguments in [
            ("bee_skill_search", {"query": "git"}),
            ("bee_skill_get", {"path": "local/git-workflow"}),
            ("bee_skill_resolve", {"path": "local/git-workflow"}),
        ]:
            body = error_of(await use(client, view, tool, arguments))
            assert body["code"] == "bridge_not_configured" and "bee skill bridge add" in body["error"]
            assert body["details"] == {"command": "bee skill bridge add"}
