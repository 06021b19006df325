"""The three artifact tools through a real `bee mcp serve`, in both protocol eras, over what the CLI ingested."""

import base64
import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import load_catalog
from tests.conftest import ERAS, bee_executable, core_client, error_of

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ROWS = [{"name": f"test_{i}", "status": "failed" if i % 3 == 0 else "passed", "ms": i * 1.5} for i in range(30)]
ROWS[0]["big"] = 123456789012345678901234567890


def bee(checkout: Path, *args: str, data: bytes | None = None) -> bytes:
    done = subprocess.run(
        [str(bee_executable()), *args], cwd=checkout, input=data, capture_output=True, check=True, timeout=120
    )
    return done.stdout


def ingest(checkout: Path, name: str, data: bytes) -> dict[str, Any]:
    """`bee artifact add - --name NAME --json`, the way a user retains output."""
    added: dict[str, Any] = json.loads(bee(checkout, "artifact", "add", "-", "--name", name, "--json", data=data))
    return added


@pytest.fixture(scope="module")
def binary_data() -> bytes:
    return os.urandom(3 * 1024 * 1024 + 12345)


@pytest.fixture
def artifacts(checkout: Path, binary_data: bytes) -> dict[str, dict[str, Any]]:
    bee(checkout, "init")
    log = b"".join(b"%06d INFO step %d ok\n" % (i, i) for i in range(2000)) + b"000999 ERROR disk full\n"
    return {
        "log": ingest(checkout, "build.log", log),
        "bin": ingest(checkout, "core.dump", binary_data),
        "json": ingest(checkout, "results.json", json.dumps(ROWS).encode()),
        "text": ingest(checkout, "notes.txt", "é ünïcode line\n".encode() * 10),
    }


async def call(client: Any, tool: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, arguments)
    assert json.loads(result.content[0].text) == result.structured_content
    return result


async def read_all(client: Any, artifact: str) -> tuple[bytes, dict[str, Any], int]:
    pieces: list[bytes] = []
    offset: int | None = 0
    calls = 0
    while offset is not None:
        page = (await call(client, "bee_artifact_read", {"id": artifact, "offsetBytes": offset})).structured_content
        assert page["offsetBytes"] == offset
        pieces.append(base64.b64decode(page["base64"]))
        offset, calls = page["nextOffsetBytes"], calls + 1
    return b"".join(pieces), page, calls


def test_the_three_tools_are_in_the_core_catalog_read_only() -> None:
    specs = {spec.name: spec for spec in load_catalog("core")}
    for name in ("bee_artifact_search", "bee_artifact_query", "bee_artifact_read"):
        assert specs[name].annotations == {
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        }


@pytest.mark.parametrize("era", ERAS)
async def test_read_reassembles_binary_and_text_exactly(
    checkout: Path, artifacts: dict[str, dict[str, Any]], binary_data: bytes, era: str
) -> None:
    async with core_client(checkout, era) as client:
        data, last, calls = await read_all(client, artifacts["bin"]["id"])
        assert calls == len(binary_data) // 65536 + 1
        assert hashlib.sha256(data).hexdigest() == last["sourceSha256"].removeprefix("sha256:")
        assert data == binary_data and last["sourceBytes"] == len(binary_data)
        text, _, _ = await read_all(client, artifacts["text"]["id"])
        assert text == "é ünïcode line\n".encode() * 10
        small = await call(
            client, "bee_artifact_read", {"id": artifacts["log"]["id"], "offsetBytes": 7, "lengthBytes": 4}
        )
        assert base64.b64decode(small.structured_content["base64"]) == b"INFO"


@pytest.mark.parametrize("era", ERAS)
async def test_search_and_query_over_the_wire(checkout: Path, artifacts: dict[str, dict[str, Any]], era: str) -> None:
    async with core_client(checkout, era) as client:
        found = (await call(client, "bee_artifact_search", {"text": "ERROR"})).structured_content
        assert (found["artifactsSearched"], found["damagedSkipped"]) == (3, 0)  # the binary one is not searched
        assert found["totalMatches"] == 1 and found["counts"] == [
            {"id": artifacts["log"]["id"], "name": "build.log", "matches": 1}
        ]
        [match] = found["matches"]
        assert (match["lineNumber"], match["line"]) == (2001, "000999 ERROR disk full")
        page = (
            await call(client, "bee_artifact_search", {"text": "INFO", "offset": 1990, "limit": 5})
        ).structured_content
        assert page["totalMatches"] == 2000 and page["nextOffset"] == 1995
        assert [m["lineNumber"] for m in page["matches"]] == [1991, 1992, 1993, 1994, 1995]
        only = await call(client, "bee_artifact_search", {"text": "ü", "ids": [artifacts["text"]["id"]], "limit": 1})
        assert only.structured_content["totalMatches"] == 10

        query = {
            "where": {"path": "status", "op": "eq", "value": "failed"},
            "select": ["name", "ms", "big"],
            "orderBy": [{"path": "ms", "direction": "desc"}],
            "limit": 3,
        }
        rows = await call(client, "bee_artifact_query", {"id": artifacts["json"]["id"], "queryJson": json.dumps(query)})
        data = rows.structured_content
        assert (data["totalRows"], data["matchedRows"], data["returned"], data["nextOffset"]) == (30, 10, 3, 3)
        assert [row["value"]["name"] for row in data["rows"]] == ["test_27", "test_24", "test_21"]
        first = await call(
            client,
            "bee_artifact_query",
            {"id": artifacts["json"]["id"], "queryJson": json.dumps({"select": ["big"], "limit": 1})},
        )
        assert first.structured_content["rows"][0]["value"]["big"] == 123456789012345678901234567890


def big_query() -> str:
    return json.dumps({"where": {"path": "name", "op": "in", "value": ["x" * 100] * 700}})


@pytest.mark.parametrize("era", ERAS)
async def test_every_bad_input_is_a_clear_tool_error(
    checkout: Path, artifacts: dict[str, dict[str, Any]], era: str
) -> None:
    log, binary, table, text = (artifacts[k]["id"] for k in ("log", "bin", "json", "text"))
    unknown = "art-0123456789abcdef"
    bad_calls = [
        ("bee_artifact_read", {"id": unknown}, "not_found", "no artifact"),
        ("bee_artifact_query", {"id": unknown, "queryJson": "{}"}, "not_found", "no artifact"),
        ("bee_artifact_search", {"text": "x", "ids": [unknown]}, "not_found", "no artifact"),
        ("bee_artifact_read", {"id": "nope"}, "invalid_argument", "does not match the pattern"),
        ("bee_artifact_read", {"id": log, "offsetBytes": 10**8}, "invalid_argument", "past the end"),
        ("bee_artifact_read", {"id": log, "lengthBytes": 0}, "invalid_argument", "outside the allowed range 1–65536"),
        ("bee_artifact_read", {"id": log, "lengthBytes": 65537}, "invalid_argument", "outside the allowed range"),
        ("bee_artifact_search", {"text": ""}, "invalid_argument", "argument text has length 0"),
        ("bee_artifact_search", {"text": "a\nb"}, "invalid_argument", "line break"),
        ("bee_artifact_search", {"text": "x", "ids": [binary]}, "unsupported", "binary"),
        ("bee_artifact_query", {"id": table, "queryJson": big_query()}, "invalid_argument", "65536-byte limit"),
        (
            "bee_artifact_query",
            {"id": table, "queryJson": json.dumps({"where": {"path": "a", "op": "like", "value": "x"}})},
            "invalid_argument",
            "use one of eq, ne",
        ),
        ("bee_artifact_query", {"id": text, "queryJson": "{}"}, "unsupported", "not JSON or JSONL"),
        ("bee_artifact_query", {"id": binary, "queryJson": "{}"}, "unsupported", "bee_artifact_read"),
        ("bee_artifact_search", {"text": "INFO", "limit": 200, "budgetBytes": 4096}, "budget_exceeded", "Lower limit"),
        (
            "bee_artifact_query",
            {"id": table, "queryJson": "{}", "budgetBytes": 512},
            "budget_exceeded",
            "nothing partial",
        ),
    ]
    async with core_client(checkout, era) as client:
        for tool, arguments, code, text_in_message in bad_calls:
            body = error_of(await client.call_tool(tool, arguments))
            assert body["code"] == code, (tool, arguments, body)
            assert text_in_message in body["error"], (tool, arguments, body)
        ok = await call(client, "bee_artifact_read", {"id": log, "lengthBytes": 1})
        assert ok.is_error is False


@pytest.mark.parametrize("era", ERAS)
async def test_counts_that_do_not_fit_the_budget(checkout: Path, era: str) -> None:
    bee(checkout, "init")
    for i in range(12):
        ingest(checkout, f"a-rather-long-artifact-name-to-fill-the-counts-{i}.log", b"shared line %d\n" % i)
    async with core_client(checkout, era) as client:
        result = await client.call_tool("bee_artifact_search", {"text": "shared", "budgetBytes": 512})
        assert error_of(result)["code"] == "budget_exceeded"
        assert "even the counts" in error_of(result)["error"]


@pytest.mark.parametrize("era", ERAS)
async def test_an_artifact_changed_behind_bees_back_is_never_served(
    checkout: Path, artifacts: dict[str, dict[str, Any]], era: str
) -> None:
    stored = checkout / ".bee" / "artifacts" / "blobs" / artifacts["log"]["sourceSha256"].removeprefix("sha256:")
    async with core_client(checkout, era) as client:
        assert (await call(client, "bee_artifact_search", {"text": "ERROR"})).is_error is False
        os.chmod(stored, 0o644)
        with open(stored, "r+b") as handle:  # same size, one byte changed
            handle.seek(10)
            handle.write(b"X")
        for tool, arguments in [
            ("bee_artifact_read", {"id": artifacts["log"]["id"], "lengthBytes": 16}),
            ("bee_artifact_search", {"text": "ERROR"}),
        ]:
            result = await client.call_tool(tool, arguments)
            assert error_of(result)["code"] == "hash_mismatch", tool
            assert "bee artifact add" in error_of(result)["error"]
        untouched = await call(client, "bee_artifact_search", {"text": "ü", "ids": [artifacts["text"]["id"]]})
        assert untouched.is_error is False


@pytest.mark.parametrize("era", ERAS)
async def test_tools_need_an_initialised_instance(checkout: Path, era: str) -> None:
    async with core_client(checkout, era) as client:
        for tool, arguments in [
            ("bee_artifact_search", {"text": "x"}),
            ("bee_artifact_query", {"id": "art-0123456789abcdef", "queryJson": "{}"}),
            ("bee_artifact_read", {"id": "art-0123456789abcdef"}),
        ]:
            result = await client.call_tool(tool, arguments)
            assert error_of(result)["code"] == "not_initialized", tool
            assert "bee init" in error_of(result)["error"]


@pytest.mark.parametrize("era", ERAS)
async def test_deadline_exceeded_delivers_nothing(
    checkout: Path, artifacts: dict[str, dict[str, Any]], era: str
) -> None:
    async with core_client(checkout, era, env={**os.environ, "BEE_ARTIFACT_DEADLINE_SECONDS": "0"}) as client:
        for tool, arguments in [
            ("bee_artifact_search", {"text": "INFO"}),
            ("bee_artifact_query", {"id": artifacts["json"]["id"], "queryJson": "{}"}),
        ]:
            result = await client.call_tool(tool, arguments)
            assert error_of(result)["code"] == "deadline_exceeded", tool
