"""The representation handlers in process: counts, exact result sizes, limits and budgets."""

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from bee_contracts import BeeError, ErrorCode
from bee_contracts.shapes.core import RepresentationDecodeResult, RepresentationEncodeArgs, RepresentationEncodeResult
from bee_core.context import CoreContext
from bee_core.handlers.representation_decode import bee_representation_decode
from bee_core.handlers.representation_encode import bee_representation_encode
from bee_core.representation.tokens import count_tokens
from bee_hostkit import Call, Deadline
from bee_hostkit.results import result_bytes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def ctx(tmp_path: Path) -> CoreContext:
    return CoreContext.open(tmp_path)


def encode(ctx: CoreContext, text: str, **extra: Any) -> RepresentationEncodeResult:
    args = {"json": text, "encoding": "auto", "tokenizer": "o200k", "budgetBytes": 262144, **extra}
    return bee_representation_encode(
        ctx, Call("bee_representation_encode", cast(RepresentationEncodeArgs, args), Deadline(30))
    )


def decode(ctx: CoreContext, packet: str, budget: int = 262144) -> RepresentationDecodeResult:
    return bee_representation_decode(
        ctx, Call("bee_representation_decode", {"packet": packet, "budgetBytes": budget}, Deadline(30))
    )


def test_counts_and_exact_result_size(ctx: CoreContext) -> None:
    text = (FIXTURES / "json" / "openapi-3.0-schema.json").read_text()
    result = encode(ctx, text)
    assert result["inputBytes"] == len(text.encode()) and result["inputTokens"] == count_tokens(text)
    assert result["minifiedTokens"] == count_tokens(json.dumps(json.loads(text), separators=(",", ":")))
    assert result["packetBytes"] == len(result["packet"].encode())
    assert result["packetTokens"] == count_tokens(result["packet"]) < result["minifiedTokens"]
    assert result["resultBytes"] == result_bytes(result)
    decoded = decode(ctx, result["packet"])
    assert decoded["resultBytes"] == result_bytes(decoded) and decoded["jsonBytes"] == result["minifiedBytes"]


def test_cl100k_counts_differ_from_o200k(ctx: CoreContext) -> None:
    text = (FIXTURES / "json" / "tz-zones.json").read_text()
    o200k, cl100k = encode(ctx, text), encode(ctx, text, tokenizer="cl100k")
    assert cl100k["inputTokens"] == count_tokens(text, "cl100k") != o200k["inputTokens"]


def fail(call: Callable[..., object], *args: Any, **kwargs: Any) -> BeeError:
    with pytest.raises(BeeError) as info:
        call(*args, **kwargs)
    return info.value


def test_inputs_over_256_kib_are_refused(ctx: CoreContext) -> None:
    wide = '["' + "é" * 140_000 + '"]'  # 140,004 characters, 280,004 bytes
    error = fail(encode, ctx, wide)
    assert error.code is ErrorCode.INVALID_ARGUMENT and "262144" in error.message
    error = fail(decode, ctx, "bee-json-v1 1 00000000\n" + "é" * 140_000)
    assert error.code is ErrorCode.INVALID_ARGUMENT and "262144" in error.message


def test_budgets_cover_the_whole_result(ctx: CoreContext) -> None:
    text = (FIXTURES / "json" / "npm-package-lock.json").read_text()
    assert fail(encode, ctx, text, budgetBytes=4096).code is ErrorCode.BUDGET_EXCEEDED
    packet = encode(ctx, text)["packet"]
    error = fail(decode, ctx, packet, budget=20000)  # declares 18,698 bytes: expands, then the result is too big
    assert error.details is not None
    assert error.code is ErrorCode.BUDGET_EXCEEDED and error.details["resultBytes"] > 20000
    error = fail(decode, ctx, packet, budget=4096)  # declares more than the bound: refused before expanding
    assert error.code is ErrorCode.BUDGET_EXCEEDED and "nothing was expanded" in error.message


@pytest.mark.skipif(
    shutil.which("unshare") is None or subprocess.run(["unshare", "-n", "true"], check=False).returncode != 0,
    reason="needs `unshare -n` (a network namespace) to cut the network",
)
def test_tokenizers_and_word_frequencies_work_without_a_network(tmp_path: Path) -> None:
    probe = (
        "from bee_core.representation.tokens import count_tokens\n"
        "from bee_core.compression.method import compress\n"
        "assert count_tokens('hello world', 'o200k') == 2 and count_tokens('hello world', 'cl100k') == 2\n"
        "text = 'The cache is not used for the requests. It is the case that the jobs are retried.'\n"
        "assert compress(text, 50, count_tokens).output_tokens > 0\n"
        "print('offline ok')\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(tmp_path)}
    completed = subprocess.run(
        ["unshare", "-n", sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert "offline ok" in completed.stdout
