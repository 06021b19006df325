"""`bee mcp serve` as a subprocess, spoken to by the official MCP client in both protocol eras."""

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from bee_contracts import load_catalog, version_info
from bee_contracts.wire import CONTRACT_META_KEY
from tests.conftest import ERAS, core_client, core_process, error_of, wire_size

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]
#: The tests through a real process run cold and warm (the in-process ones have no transport to differ).
both_modes = pytest.mark.usefixtures("host_mode")


def packet_args(*selections: dict[str, Any], budget: float = 32768) -> dict[str, Any]:
    return {"manifestJson": json.dumps({"selections": list(selections)}), "budgetBytes": budget}


@pytest.mark.parametrize("era", ERAS)
@both_modes
async def test_tools_list_is_the_contract_catalog_and_identity_is_stamped(checkout: Path, era: str) -> None:
    async with core_process(checkout, era) as client:
        listed = await client.list_tools()
        served = [tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in listed.tools]
        assert served == [spec.to_wire() for spec in load_catalog("core")]
        assert listed.meta[CONTRACT_META_KEY] == version_info()
        expected_protocol = "2025-11-25" if era == "legacy" else "2026-07-28"
        assert client.protocol_version == expected_protocol
        if era == "legacy":
            assert client.server_info.version == version_info()["version"]
            assert version_info()["contractDigest"] in client.server_info.description


@pytest.mark.parametrize("era", ERAS)
async def test_packet_delivers_index_outline_and_body_within_budget(checkout: Path, era: str) -> None:
    source = (checkout / "src/a.go").read_bytes()
    async with core_client(checkout, era) as client:
        result = await client.call_tool(
            "bee_context_packet",
            packet_args(
                {"id": "idx", "path": "src/a.go", "representation": "index"},
                {"id": "out", "path": "src/a.rs", "representation": "outline", "dependsOn": ["idx"]},
                {"id": "fn", "path": "src/a.go", "representation": "body", "symbol": "main"},
                budget=8192,
            ),
        )
    assert result.is_error is False
    data = result.structured_content
    assert json.loads(result.content[0].text) == data
    assert data["status"] == "complete"
    assert [item["id"] for item in data["items"]] == ["idx", "out", "fn"]
    assert data["items"][0]["sha256"] == "sha256:" + hashlib.sha256(source).hexdigest()
    assert data["items"][2]["text"].startswith("func main()")
    assert wire_size(result) == data["resultBytes"] <= 8192


@pytest.mark.parametrize("era", ERAS)
async def test_needs_refinement_over_the_wire(checkout: Path, era: str) -> None:
    async with core_client(checkout, era) as client:
        result = await client.call_tool(
            "bee_context_packet", packet_args({"id": "all", "path": "src/a.ts", "representation": "body"}, budget=600)
        )
    data = result.structured_content
    assert result.is_error is False and data["status"] == "needs_refinement" and data["items"] == []
    assert data["omitted"][0]["id"] == "all" and data["overByBytes"] > 0
    assert wire_size(result) <= 600


BAD_CALLS = [
    ({"manifestJson": "{oops"}, "invalid_argument", "not valid JSON"),
    (packet_args({"id": "a", "path": "src/a.py", "representation": "full"}), "invalid_argument", "use one of"),
    (
        packet_args({"id": "a", "path": "src/a.py", "representation": "index"}, budget=100),
        "invalid_argument",
        "budgetBytes is 100",
    ),
    (
        packet_args({"id": "a", "path": "src/a.py", "representation": "index"}, budget=300000),
        "invalid_argument",
        "outside the allowed range",
    ),
    ({"manifestJson": "{}", "extra": True}, "invalid_argument", "unknown argument 'extra'"),
    ({}, "invalid_argument", "missing required argument 'manifestJson'"),
    (packet_args({"id": "a", "path": "../etc/passwd", "representation": "index"}), "outside_root", "climbs out"),
    (packet_args({"id": "a", "path": "src/nope.py", "representation": "index"}), "not_found", "no file"),
    (packet_args({"id": "a", "path": "src/a.py", "representation": "body", "symbol": "zzz"}), "not_found", "no symbol"),
    (
        packet_args({"id": "a", "path": "src/a.py", "representation": "body", "range": {"start": 1, "end": 500}}),
        "invalid_argument",
        "has 11 lines",
    ),
    (
        packet_args({"id": "a", "path": "src/a.py", "representation": "index", "hash": "f" * 64}),
        "hash_mismatch",
        "pinned",
    ),
    # Bee's own state is never served (the tracker's signing key lives there).
    (
        packet_args({"id": "a", "path": ".bee/tracker/signing-key", "representation": "body"}),
        "outside_root",
        "lies in .bee: repository internals (.git) and Bee's own state (.bee) are never served",
    ),
    (packet_args({"id": "a", "path": "src/pipe", "representation": "body"}), "invalid_argument", "is a FIFO"),
    # Input the schema admits but no handler can use: invalid_argument, never internal.
    ({"manifestJson": "[" * 100_000}, "invalid_argument", "manifestJson nests too deeply to read"),
    (
        packet_args({"id": "a", "path": "src/a.py", "representation": "body", "range": {"start": 1.0, "end": 2}}),
        "invalid_argument",
        "field selections.0.range.start must be an integer, got 1.0",
    ),
    (
        {"manifestJson": '{"selections": [], "n": ' + "9" * 5000 + "}"},
        "invalid_argument",
        "manifestJson: field n is 999999999999… (5000 characters), a number too large to hold exactly",
    ),
    (
        packet_args({"id": "a", "path": "src/a.py", "representation": "index"}, budget=2**53),
        "invalid_argument",
        "argument budgetBytes is 9007199254740992, outside ±9007199254740991",
    ),
    (
        packet_args({"id": "a", "path": "src/a.py", "representation": "index"}, budget=4096.0),
        "invalid_argument",
        "argument budgetBytes must be an integer, got 4096.0",
    ),
]


#: Numbers past what JSON readers hold, which only the wire carries: stdio reads them as too large to hold exactly.
WIRE_NUMBERS = [
    (
        packet_args({"id": "a", "path": "src/a.py", "representation": "index"}, budget=10**5000 - 1),
        "invalid_argument",
        "argument budgetBytes is 999999999999… (5000 characters), a number too large to hold exactly",
    ),
]


@pytest.mark.parametrize("era", ERAS)
@both_modes
async def test_a_number_too_large_to_hold_is_read_off_the_wire_as_such(checkout: Path, era: str) -> None:
    async with core_process(checkout, era) as client:
        for arguments, code, text in WIRE_NUMBERS:
            body = error_of(await client.call_tool("bee_context_packet", arguments))
            assert (body["code"], text in body["error"]) == (code, True), body


@pytest.mark.parametrize("era", ERAS)
async def test_every_bad_input_is_a_clear_tool_error_and_the_host_keeps_serving(checkout: Path, era: str) -> None:
    key = checkout / ".bee" / "tracker" / "signing-key"
    key.parent.mkdir(parents=True)
    key.write_text("not for agents\n")
    os.mkfifo(checkout / "src" / "pipe")
    async with core_client(checkout, era) as client:
        for arguments, code, text in BAD_CALLS:
            body = error_of(await client.call_tool("bee_context_packet", arguments))
            assert body["code"] == code, (arguments, body)
            assert text in body["error"], (arguments, body)
        ok = await client.call_tool(
            "bee_context_packet", packet_args({"id": "a", "path": "src/a.py", "representation": "index"})
        )
        assert ok.is_error is False


@pytest.mark.parametrize("era", ERAS)
async def test_unknown_tool_is_a_protocol_error(checkout: Path, era: str) -> None:
    async with core_client(checkout, era) as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("bee_no_such_tool", {})
        assert info.value.error.code == -32602
        assert "bee_context_packet" in info.value.error.message


@pytest.mark.parametrize("era", ERAS)
@both_modes
async def test_request_over_the_frame_limit_gets_32600_with_its_id_and_the_host_keeps_serving(
    checkout: Path, era: str
) -> None:
    async with core_process(checkout, era) as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("bee_context_packet", {"manifestJson": "x" * (600 * 1024)})
        assert info.value.error.code == -32600
        assert info.value.error.data["limitBytes"] == 512 * 1024
        ok = await client.call_tool(
            "bee_context_packet", packet_args({"id": "a", "path": "README.md", "representation": "outline"})
        )
        assert ok.is_error is False and ok.structured_content["items"][0]["outlineSource"] == "headings"


@pytest.mark.parametrize("era", ERAS)
async def test_deadline_exceeded_delivers_nothing(checkout: Path, era: str) -> None:
    async with core_client(checkout, era, env={"BEE_PACKET_DEADLINE_SECONDS": "0"}) as client:
        result = await client.call_tool(
            "bee_context_packet", packet_args({"id": "a", "path": "src/a.py", "representation": "body"})
        )
    assert result.is_error is True
    assert error_of(result)["code"] == "deadline_exceeded"
    assert error_of(result)["retryable"] is True


@pytest.mark.parametrize("era", ERAS)
async def test_an_instance_root_inside_the_checkout_is_never_served(checkout: Path, era: str) -> None:
    instance = checkout / "var" / "bee-instance"
    (instance / "tracker").mkdir(parents=True)
    (instance / "tracker" / "signing-key").write_text("not for agents\n")
    os.symlink("var/bee-instance", checkout / "state")
    async with core_client(checkout, era, env={**os.environ, "BEE_INSTANCE_ROOT": str(instance)}) as client:
        for path in ("var/bee-instance/tracker/signing-key", "state/tracker/signing-key"):
            result = await client.call_tool(
                "bee_context_packet", packet_args({"id": "k", "path": path, "representation": "body"})
            )
            body = error_of(result)
            assert body["code"] == "outside_root" and "instance state" in body["error"], path
