"""bee_context_compress and bee_compression_recover through a real host, configured by the real CLI."""

import hashlib
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ERAS, bee_executable, core_client, error_of, expect_tool_errors

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PROSE = (Path(__file__).resolve().parents[1] / "fixtures" / "prose" / "design.md").read_text()


def bee(checkout: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bee_executable()), *args, "--checkout", str(checkout)], capture_output=True, text=True, check=check
    )


@pytest.mark.parametrize("era", ERAS)
async def test_disabled_compression_returns_the_original_and_says_so(checkout: Path, era: str) -> None:
    async with core_client(checkout, era) as client:
        result = await client.call_tool("bee_context_compress", {"text": PROSE, "contentKind": "prose"})
    data = result.structured_content
    assert result.is_error is False
    assert data["text"] == PROSE and data["compressed"] is False and data["enabled"] is False
    assert data["semanticRisk"] is False and data["id"] is None and "disabled" in data["note"]
    assert data["originalSha256"] == "sha256:" + hashlib.sha256(PROSE.encode()).hexdigest()


@pytest.mark.parametrize("era", ERAS)
async def test_enabled_compression_retains_the_original_and_recover_returns_it_exactly(
    checkout: Path, era: str
) -> None:
    bee(checkout, "init")
    assert "Ready" in bee(checkout, "compression", "setup").stdout
    bee(checkout, "compression", "enable")
    async with core_client(checkout, era) as client:
        result = await client.call_tool(
            "bee_context_compress", {"text": PROSE, "contentKind": "prose", "ratePercent": 40}
        )
        data = result.structured_content
        assert result.is_error is False, data
        assert data["compressed"] is True and data["semanticRisk"] is True and data["enabled"] is True
        assert data["outputTokens"] < data["inputTokens"] and len(data["text"]) < len(PROSE)
        again = await client.call_tool(
            "bee_context_compress", {"text": PROSE, "contentKind": "prose", "ratePercent": 40}
        )
        assert again.structured_content == data  # idempotent: same output, same id
        recovered = await client.call_tool("bee_compression_recover", {"id": data["id"]})
        assert recovered.is_error is False
        assert recovered.structured_content["text"] == PROSE
        assert recovered.structured_content["sha256"] == data["originalSha256"]
        too_small = await client.call_tool("bee_compression_recover", {"id": data["id"], "budgetBytes": 512})
        assert error_of(too_small)["code"] == "budget_exceeded"
        original = checkout / ".bee" / "compression" / "originals" / f"{data['id']}.txt"
        original.write_text(PROSE.replace("Bee", "Wasp"))
        tampered = await client.call_tool("bee_compression_recover", {"id": data["id"]})
        assert error_of(tampered)["code"] == "hash_mismatch"
        original.unlink()
        missing = await client.call_tool("bee_compression_recover", {"id": data["id"]})
        assert error_of(missing)["code"] == "not_found"
    bee(checkout, "compression", "disable")
    async with core_client(checkout, era) as client:
        off = await client.call_tool("bee_context_compress", {"text": PROSE, "contentKind": "prose"})
    assert off.structured_content["text"] == PROSE and off.structured_content["enabled"] is False


@pytest.mark.parametrize("era", ERAS)
async def test_every_bad_input_is_a_clear_tool_error(checkout: Path, era: str) -> None:
    bee(checkout, "init")
    bee(checkout, "compression", "enable")
    many_tokens = " ".join(f"w{i}" for i in range(9000))
    calls: list[tuple[str, dict[str, Any], str, str]] = [
        ("bee_context_compress", {"text": "x", "contentKind": "code"}, "unsupported", 'only "prose"'),
        ("bee_context_compress", {"text": "x", "contentKind": "prose", "ratePercent": 5}, "invalid_argument", "10–90"),
        ("bee_context_compress", {"text": "x", "contentKind": "prose", "ratePercent": 95}, "invalid_argument", "10–90"),
        ("bee_context_compress", {"text": "é" * 40000, "contentKind": "prose"}, "invalid_argument", "64 KiB"),
        ("bee_context_compress", {"text": many_tokens, "contentKind": "prose"}, "invalid_argument", "8192"),
        ("bee_context_compress", {"text": "x"}, "invalid_argument", "contentKind"),
        ("bee_compression_recover", {"id": "cmp_" + "0" * 24}, "not_found", "no retained original"),
        # 64 KiB of newlines is 4,096 tokens, but escaped twice (structured + text copy) it is over 256 KiB.
        ("bee_context_compress", {"text": "\n" * 65536, "contentKind": "prose"}, "result_too_large", "nothing"),
        ("bee_compression_recover", {"id": "../etc/passwd"}, "invalid_argument", "pattern"),
    ]
    async with core_client(checkout, era) as client:
        await expect_tool_errors(client, calls)


@pytest.mark.parametrize("era", ERAS)
async def test_recover_without_an_instance_is_not_initialized(tmp_path: Path, era: str) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    async with core_client(bare, era) as client:
        result = await client.call_tool("bee_compression_recover", {"id": "cmp_" + "a" * 24})
    assert error_of(result)["code"] == "not_initialized"
