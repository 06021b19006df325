"""`bee mcp serve --discovery`: three tools over the core catalog, and every core tool answering the same through
them as directly — successes and errors, in both protocol eras, through the official Python client and the
TypeScript SDK client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from bee_contracts import load_catalog, version_info
from bee_contracts.wire import CONTRACT_META_KEY
from tests.conftest import ERAS, bee_executable, core_client, error_of
from tests.e2e.skills_setup import bee, bridge, skills_directory
from tests.harness import node
from tests.harness.collab import Joined, join, sample_plan

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PROSE = (
    "The release went out on Tuesday after the migration finished. Most teams noticed nothing at all. "
    "The billing service, however, needed a restart because its cache held stale prices for an hour. "
    "We will add a cache flush to the release checklist so that this cannot happen again next time."
)


@pytest.fixture
def prepared(tmp_path: Path, tracker_factory: Any) -> Joined:
    """A checkout joined to a tracker space, with a skill bridge, two artifacts and compression enabled."""
    joined = join(tmp_path, tracker_factory(str(tmp_path / "tracker.db")), name="work")
    bridge(joined.checkout, skills_directory(tmp_path / "skills"))
    (tmp_path / "log.txt").write_text("line one\nERROR disk full\n")
    (tmp_path / "rows.json").write_text('[{"a": 1}, {"a": 2}]')
    for name in ("log.txt", "rows.json"):
        bee("artifact", "add", str(tmp_path / name), "--name", name, cwd=joined.checkout)
    bee("compression", "enable", cwd=joined.checkout)
    return joined


def artifact_ids(checkout: Path) -> dict[str, str]:
    listed = json.loads(bee("artifact", "list", "--json", cwd=checkout))
    return {entry["name"]: entry["id"] for entry in listed["artifacts"]}


def cases(ids: dict[str, str]) -> list[tuple[str, dict[str, Any], str]]:
    """Calls of every core tool with the outcome each must have ("ok" or an error code): successes, validation
    errors and refusals, plus an unknown argument for each tool in the catalog, so a tool added later is compared
    too."""
    packet = {"selections": [{"id": "a", "path": "src/a.py", "representation": "outline"}]}
    missing = {"selections": [{"id": "a", "path": "src/nope.py", "representation": "index"}]}
    rows_query = '{"where": {"path": "a", "op": "gt", "value": 1}}'
    specific: list[tuple[str, dict[str, Any], str]] = [
        ("bee_artifact_query", {"id": ids["rows.json"], "queryJson": rows_query}, "ok"),
        ("bee_artifact_query", {"id": ids["log.txt"], "queryJson": "{}"}, "unsupported"),
        ("bee_artifact_query", {"id": "art-0000000000000000", "queryJson": "{}"}, "not_found"),
        ("bee_artifact_read", {"id": ids["log.txt"], "lengthBytes": 8}, "ok"),
        ("bee_artifact_read", {"id": ids["log.txt"], "lengthBytes": 0}, "invalid_argument"),
        ("bee_artifact_search", {"text": "ERROR"}, "ok"),
        ("bee_artifact_search", {"text": "ERROR", "budgetBytes": 512}, "budget_exceeded"),
        ("bee_compression_recover", {"id": "cmp_" + "0" * 24}, "not_found"),
        ("bee_context_compress", {"text": PROSE, "contentKind": "prose", "ratePercent": 50}, "ok"),
        ("bee_context_compress", {"text": PROSE, "contentKind": "code"}, "unsupported"),
        ("bee_context_packet", {"manifestJson": json.dumps(packet), "budgetBytes": 8192}, "ok"),
        ("bee_context_packet", {"manifestJson": json.dumps(missing)}, "not_found"),
        ("bee_context_packet", {"manifestJson": "{oops"}, "invalid_argument"),
        ("bee_representation_encode", {"json": '{"a": [1.0, 1e3]}'}, "ok"),
        ("bee_representation_encode", {"json": "NaN"}, "invalid_argument"),
        ("bee_representation_decode", {"packet": "not a packet"}, "invalid_argument"),
        ("bee_skill_search", {"query": "release notes"}, "ok"),
        ("bee_skill_search", {"query": "git", "limit": 99}, "invalid_argument"),
        ("bee_skill_get", {"path": "local/git-workflow"}, "ok"),
        ("bee_skill_get", {"path": "local/../x"}, "outside_root"),
        ("bee_skill_get", {"path": "local/broken"}, "invalid_argument"),
        ("bee_skill_resolve", {"path": "local/team/release-notes"}, "ok"),
        ("bee_skill_resolve", {"path": "nope/x"}, "not_found"),
        ("bee_plan_show", {"planId": ids["plan"]}, "ok"),
        ("bee_plan_show", {"planId": "bd-nope"}, "not_found"),
        ("bee_plan_next", {"planId": ids["plan"], "limit": 2}, "ok"),
        ("bee_plan_next", {"planId": ids["plan"], "limit": 9}, "invalid_argument"),
    ]
    generic = [(spec.name, {"unexpected": 1}, "invalid_argument") for spec in load_catalog("core")]
    return specific + generic


def wire(result: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True, exclude={"meta"})
    return dumped


@pytest.mark.parametrize("era", ERAS)
async def test_every_core_tool_answers_the_same_directly_and_through_invoke(prepared: Joined, era: str) -> None:
    checkout = prepared.checkout
    calls = cases({**artifact_ids(checkout), "plan": (await sample_plan(prepared))["plan"]})
    assert {tool for tool, _, _ in calls} == {spec.name for spec in load_catalog("core")}
    async with core_client(checkout, era) as direct, core_client(checkout, era, "--discovery") as discovery:
        for tool, arguments, outcome in calls:
            result = await direct.call_tool(tool, arguments)
            assert (error_of(result)["code"] if result.is_error else "ok") == outcome, (tool, arguments, result)
            invoked = await discovery.call_tool("bee_tool_invoke", {"name": tool, "arguments": arguments})
            assert wire(invoked) == wire(result), (tool, arguments)


@pytest.mark.skipif(node.missing_reason() is not None, reason=str(node.missing_reason()))
async def test_every_core_tool_answers_the_typescript_client_the_same_directly_and_through_invoke(
    prepared: Joined,
) -> None:
    # The client inside Claude Code, Cursor and VS Code: every outcome readable in both modes, and identical.
    checkout = prepared.checkout
    calls = cases({**artifact_ids(checkout), "plan": (await sample_plan(prepared))["plan"]})
    direct_server = node.stdio_server(bee_executable(), "mcp", "serve", cwd=checkout)
    view_server = node.stdio_server(bee_executable(), "mcp", "serve", "--discovery", cwd=checkout)
    direct = await anyio.to_thread.run_sync(node.ts_client, direct_server, [(t, a) for t, a, _ in calls])
    invoke = [("bee_tool_invoke", {"name": tool, "arguments": arguments}) for tool, arguments, _ in calls]
    through_view = await anyio.to_thread.run_sync(node.ts_client, view_server, invoke)
    assert direct["tools"] == [spec.to_wire() for spec in load_catalog("core")]
    assert through_view["tools"] == [spec.to_wire() for spec in load_catalog("discovery")]
    for (tool, arguments, outcome), one, other in zip(calls, direct["calls"], through_view["calls"], strict=True):
        result = node.answered(one)
        if outcome == "ok":
            node.success(result)
        else:
            node.tool_error(result, outcome)
        assert node.answered(other) == result, (tool, arguments)


@pytest.mark.parametrize("era", ERAS)
async def test_the_view_lists_three_tools_with_the_same_identity(checkout: Path, era: str) -> None:
    async with core_client(checkout, era, "--discovery") as client:
        listed = await client.list_tools()
        served = [tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in listed.tools]
        assert served == [spec.to_wire() for spec in load_catalog("discovery")]
        assert listed.meta[CONTRACT_META_KEY] == version_info()
        if era == "legacy":  # a client pinned to 2026-07-28 adopts the version without reading the instructions
            assert "bee_tool_search" in client.instructions

        found = (
            await client.call_tool("bee_tool_search", {"query": "search retained artifacts logs"})
        ).structured_content
        assert found["tools"][0]["name"] == "bee_artifact_search"
        everything = (await client.call_tool("bee_tool_search", {"limit": 50})).structured_content
        assert [t["name"] for t in everything["tools"]] == [spec.name for spec in load_catalog("core")]
        for spec in load_catalog("core"):
            schema = await client.call_tool("bee_tool_schema", {"name": spec.name})
            assert schema.structured_content == spec.to_wire()


@pytest.mark.parametrize("era", ERAS)
async def test_unknown_tools_and_invalid_arguments_through_the_view_are_clear_errors(checkout: Path, era: str) -> None:
    async with core_client(checkout, era, "--discovery") as client:
        body = error_of(await client.call_tool("bee_tool_invoke", {"name": "bee_nope", "arguments": {}}))
        assert body["code"] == "not_found" and "no tool named 'bee_nope'" in body["error"]
        body = error_of(await client.call_tool("bee_tool_schema", {"name": "bee_nope"}))
        assert body["code"] == "not_found"
        body = error_of(await client.call_tool("bee_tool_invoke", {"name": "bee_skill_search", "arguments": {}}))
        assert body["code"] == "invalid_argument" and "missing required argument 'query'" in body["error"]
        body = error_of(await client.call_tool("bee_tool_invoke", {"name": "bee_skill_search", "arguments": "x"}))
        assert body["code"] == "invalid_argument" and "arguments" in body["error"]
        body = error_of(await client.call_tool("bee_tool_search", {"limit": 0}))
        assert body["code"] == "invalid_argument"
        with pytest.raises(MCPError) as info:  # the core tools themselves are not listed, so not callable directly
            await client.call_tool("bee_skill_search", {"query": "x"})
        assert info.value.error.code == -32602
