"""bee_representation_encode/decode through a real `bee mcp serve`, in both protocol eras."""

import json
from pathlib import Path
from typing import Any

import pytest

from bee_core.representation.format import checksum
from tests.conftest import ERAS, core_client, expect_tool_errors, wire_size
from tests.core._json import canonical

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "json"


@pytest.mark.parametrize("era", ERAS)
async def test_encode_then_decode_round_trips_real_documents_with_counts(checkout: Path, era: str) -> None:
    async with core_client(checkout, era) as client:
        for path in sorted(FIXTURES.glob("*.json")):
            text = path.read_text()
            encoded = await client.call_tool("bee_representation_encode", {"json": text, "budgetBytes": 262144})
            assert encoded.is_error is False, encoded.structured_content
            data = encoded.structured_content
            assert json.loads(encoded.content[0].text) == data
            assert data["packet"].startswith("bee-json-v1 ")
            assert data["packetTokens"] <= data["minifiedTokens"] < data["inputTokens"]
            assert data["inputBytes"] == len(text.encode()) and wire_size(encoded) == data["resultBytes"]
            decoded = await client.call_tool(
                "bee_representation_decode", {"packet": data["packet"], "budgetBytes": 262144}
            )
            assert decoded.is_error is False, decoded.structured_content
            assert canonical(decoded.structured_content["json"]) == canonical(text)
            assert decoded.structured_content["jsonBytes"] == data["minifiedBytes"]


@pytest.mark.parametrize("era", ERAS)
async def test_number_spellings_variants_and_cl100k_over_the_wire(checkout: Path, era: str) -> None:
    text = '{"n":[1.0,1e3,-0,1.50,1E+03,123456789012345678901234567890],"rows":[{"a":1,"b":"x"},{"a":2,"b":"x"}]}'
    async with core_client(checkout, era) as client:
        for encoding in ("auto", "columnar", "compact", "json"):
            encoded = await client.call_tool(
                "bee_representation_encode", {"json": text, "encoding": encoding, "tokenizer": "cl100k"}
            )
            data = encoded.structured_content
            assert (data["encoding"], data["tokenizer"]) == (encoding, "cl100k")
            decoded = await client.call_tool("bee_representation_decode", {"packet": data["packet"]})
            assert decoded.structured_content["json"].startswith('{"n":[1.0,1e3,-0,1.50,1E+03,1234567890123456789')


def forged(body: str, expanded: int) -> str:
    return f"bee-json-v1 {expanded} {checksum(body)}\n{body}"


@pytest.mark.parametrize("era", ERAS)
async def test_every_bad_input_is_a_clear_tool_error_with_nothing_partial(checkout: Path, era: str) -> None:
    rows = (FIXTURES / "tz-zones.json").read_text()
    async with core_client(checkout, era) as client:
        good = (await client.call_tool("bee_representation_encode", {"json": rows})).structured_content["packet"]
        bomb = "[@a=" + "x" * 1000 + "\n" + "\n" * 20000 + "]"
        calls: list[tuple[str, dict[str, Any], str, str]] = [
            ("bee_representation_encode", {"json": "not json"}, "invalid_argument", "not valid JSON"),
            ("bee_representation_encode", {"json": "[NaN]"}, "invalid_argument", "NaN"),
            ("bee_representation_encode", {"json": rows, "budgetBytes": 512}, "budget_exceeded", "budgetBytes is 512"),
            ("bee_representation_encode", {"json": "[1]", "encoding": "zip"}, "invalid_argument", "use one of"),
            ("bee_representation_encode", {"json": "[1]", "budgetBytes": 100}, "invalid_argument", "outside"),
            ("bee_representation_encode", {"json": "[" * 300 + "]" * 300}, "invalid_argument", "256"),
            ("bee_representation_decode", {"packet": "bee-json-v9 2 00000000\n[]"}, "unsupported", "bee-json-v9"),
            ("bee_representation_decode", {"packet": '{"a":1}'}, "invalid_argument", "not a bee-json-v1 packet"),
            ("bee_representation_decode", {"packet": good[: len(good) - 40]}, "hash_mismatch", "truncated"),
            ("bee_representation_decode", {"packet": good.replace("Europe", "Europa")}, "hash_mismatch", "altered"),
            ("bee_representation_decode", {"packet": forged("[]", 10**12)}, "budget_exceeded", "nothing was expanded"),
            ("bee_representation_decode", {"packet": forged(bomb, 200)}, "invalid_argument", "past its declared"),
            ("bee_representation_decode", {"packet": forged("[1 ,2]", 5)}, "invalid_argument", "malformed"),
            ("bee_representation_decode", {"packet": good, "budgetBytes": 1024}, "budget_exceeded", "nothing"),
        ]
        await expect_tool_errors(client, calls)
        ok = await client.call_tool("bee_representation_decode", {"packet": good, "budgetBytes": 262144})
        assert ok.is_error is False
