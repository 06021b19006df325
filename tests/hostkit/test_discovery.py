"""The discovery view in process: three tools over a host's catalog, invoking through the host's own call path."""

import threading
from typing import Any, cast

import pytest

from bee_contracts import BeeError, ErrorCode, ToolSpec, load_catalog
from bee_hostkit import Host, discovery_host
from bee_hostkit.call import Call
from bee_hostkit.discovery import summary
from bee_hostkit.host import Handler
from tests.hostkit.test_host import SPEC, error_of

pytestmark = pytest.mark.anyio

OTHER = ToolSpec(
    host="core",
    name="bee_other_search",
    title="Other search",
    description="Search other things by word. It has limits.",
    input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    output_schema={"type": "object"},
    annotations={"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
)


def demo(call: Call[Any]) -> dict[str, Any]:
    if call.args.get("n") == 13:
        raise BeeError(ErrorCode.CONFLICT, "unlucky", details={"n": 13})
    if call.args.get("n") == 666:
        raise RuntimeError("internals")
    return {"ok": True, "mode": call.args["mode"]}


@pytest.fixture
def inner() -> Host:
    return Host("h", [OTHER, SPEC], {"demo": demo, "bee_other_search": lambda call: {"q": call.args["q"]}})


async def test_the_view_lists_the_discovery_catalog_and_keeps_the_host_identity(inner: Host) -> None:
    view = discovery_host(inner, instructions="three tools")
    assert [tool.name for tool in view.list_tools()] == [spec.name for spec in load_catalog("discovery")]
    assert view.name == inner.name and view.instructions == "three tools"


async def test_search_ranks_by_words_and_lists_everything_without_a_query(inner: Host) -> None:
    view = discovery_host(inner)
    found = (await view.call("bee_tool_search", {"query": "search other"}))["structuredContent"]
    assert found == {
        "tools": [
            {
                "name": "bee_other_search",
                "title": "Other search",
                "summary": "Search other things by word.",
                "score": 1.0,
            }
        ],
        "total": 1,
    }
    listed = (await view.call("bee_tool_search", {}))["structuredContent"]
    assert [tool["name"] for tool in listed["tools"]] == ["bee_other_search", "demo"] and listed["total"] == 2
    assert "score" not in listed["tools"][0]
    assert (await view.call("bee_tool_search", {"limit": 1}))["structuredContent"]["total"] == 2


async def test_schema_is_the_tool_exactly_as_a_direct_listing_gives_it(inner: Host) -> None:
    view = discovery_host(inner)
    assert (await view.call("bee_tool_schema", {"name": "demo"}))["structuredContent"] == SPEC.to_wire()
    body = error_of(await view.call("bee_tool_schema", {"name": "nope"}))
    assert body["code"] == "not_found" and "bee_tool_search" in body["error"]


@pytest.mark.parametrize("arguments", [{}, {"n": 2, "mode": "slow"}, {"n": 13}, {"n": 666}, {"n": "two"}, {"x": 1}])
async def test_invoke_answers_exactly_as_a_direct_call_errors_included(inner: Host, arguments: dict[str, Any]) -> None:
    view = discovery_host(inner)
    direct = await inner.call("demo", arguments)
    invoked = await view.call("bee_tool_invoke", {"name": "demo", "arguments": arguments})
    assert invoked == direct


async def test_invoking_an_unknown_tool_or_without_a_name_is_a_clear_error(inner: Host) -> None:
    view = discovery_host(inner)
    body = error_of(await view.call("bee_tool_invoke", {"name": "bee_nope", "arguments": {}}))
    assert body["code"] == "not_found" and "'bee_nope'" in body["error"]
    body = error_of(await view.call("bee_tool_invoke", {"arguments": {}}))
    assert body["code"] == "invalid_argument" and "name" in body["error"]


async def test_the_invoked_tool_keeps_its_own_deadline(inner: Host) -> None:
    gate = threading.Event()
    slow = Host("h", [SPEC], {"demo": cast(Handler, lambda call: gate.wait(10) or {})}, deadlines={"demo": 0.05})
    view = discovery_host(slow)
    invoked = await view.call("bee_tool_invoke", {"name": "demo"})
    gate.set()
    assert "within its 0.05-second deadline" in error_of(invoked)["error"]


def test_a_summary_is_the_first_sentence() -> None:
    assert summary("Find things. Then more.") == "Find things."
    assert summary("Version 1.0 reads files") == "Version 1.0 reads files"
