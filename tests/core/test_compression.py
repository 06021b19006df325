"""The compression method, the retention store, the settings and both handlers, in process."""

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from bee_contracts import BeeError, ErrorCode
from bee_contracts.shapes.core import CompressionRecoverArgs, ContextCompressResult
from bee_core.compression.method import METHOD, compress
from bee_core.compression.settings import load_settings, save_settings
from bee_core.compression.store import RetentionStore
from bee_core.context import CoreContext
from bee_core.handlers.compression_recover import bee_compression_recover
from bee_core.handlers.context_compress import bee_context_compress
from bee_core.representation.tokens import count_tokens
from bee_hostkit import Call, Deadline

PROSE = Path(__file__).resolve().parents[1] / "fixtures" / "prose"
DESIGN = (PROSE / "design.md").read_text()
GPL = (PROSE / "GPL-3.txt").read_text()

SAMPLE = """# Release notes

The service now retries failed uploads up to 3 times, waiting 250 ms between attempts. It does not retry
when the server answers 4xx, because the request itself is wrong. Set `UPLOAD_RETRIES=0` to turn this off.

The configuration file moved from ~/.svc/config.toml to /etc/svc/config.toml, and the old location is still
read for compatibility. Maria Lopez and the platform team reviewed the change in PR #4821.

```python
def upload(path, retries=3):
    return client.put(path, retries=retries)
```

Users said "the progress bar froze at 99%" on slow links; that was a display bug in render_progress(), not
a stalled upload. See https://example.org/issues/4821 for the full discussion of the fix that was shipped.
"""


@pytest.mark.parametrize("rate", [10, 25, 50, 75, 90])
def test_output_shrinks_towards_the_rate_and_is_deterministic(rate: int) -> None:
    result = compress(DESIGN, rate, count_tokens)
    assert result.input_tokens == count_tokens(DESIGN)
    assert result.output_tokens == count_tokens(result.text) < result.input_tokens
    assert result.output_tokens <= result.input_tokens * (rate / 100) * 1.25 + 50
    assert compress(DESIGN, rate, count_tokens) == result


def test_protected_text_is_never_altered() -> None:
    result = compress(SAMPLE, 50, count_tokens)
    protected = [
        "`UPLOAD_RETRIES=0`",
        '"the progress bar froze at 99%"',
        "https://example.org/issues/4821",
        "def upload(path, retries=3):\n    return client.put(path, retries=retries)",
        "render_progress(),",
        "~/.svc/config.toml",
    ]
    for piece in protected:
        if piece.split()[0] in result.text:
            assert piece in result.text or piece not in SAMPLE, piece
    for number in re.findall(r"\d+", result.text):
        assert number in SAMPLE


def test_pruning_removes_predictable_words_but_keeps_negations_and_first_words() -> None:
    text = (
        "The cache is not used for the requests that are sent by the worker to the queue. "
        "It is the case that none of the jobs in the queue are retried by the scheduler."
    )
    result = compress(text, 85, count_tokens)
    assert result.output_tokens < result.input_tokens
    assert "not" in result.text and "none" in result.text
    assert result.text.startswith("The cache") and "It " in result.text
    assert set(result.text.split()) <= set(text.split())


def test_code_blocks_are_kept_whole_or_left_out_whole() -> None:
    block = "```python\ndef upload(path, retries=3):\n    return client.put(path, retries=retries)\n```"
    for rate in (10, 50, 90):
        text = compress(SAMPLE, rate, count_tokens).text
        assert block in text or "def upload" not in text


def test_a_text_with_nothing_to_remove_comes_back_as_is() -> None:
    assert compress("Done.", 10, count_tokens).text == "Done."


@pytest.fixture
def ctx(tmp_path: Path) -> CoreContext:
    checkout = tmp_path / "co"
    checkout.mkdir()
    context = CoreContext.open(checkout)
    context.instance.init()
    return context


def call_compress(ctx: CoreContext, text: str = DESIGN, kind: str = "prose", rate: int = 50) -> ContextCompressResult:
    return bee_context_compress(
        ctx, Call("bee_context_compress", {"text": text, "contentKind": kind, "ratePercent": rate}, Deadline(30))
    )


def fail(call: Callable[..., object], *args: Any) -> BeeError:
    with pytest.raises(BeeError) as info:
        call(*args)
    return info.value


def test_disabled_by_default_and_without_an_instance(ctx: CoreContext, tmp_path: Path) -> None:
    result = call_compress(ctx)
    assert result["text"] == DESIGN and result["enabled"] is False and result["compressed"] is False
    bare = tmp_path / "bare"
    bare.mkdir()
    no_instance = call_compress(CoreContext.open(bare))
    assert no_instance["text"] == DESIGN and "bee init" in no_instance["note"]
    assert not (bare / ".bee").exists()  # nothing was written


def test_enabled_compression_retains_then_recovers_the_exact_original(ctx: CoreContext) -> None:
    save_settings(ctx.instance, enabled=True, method=METHOD)
    result = call_compress(ctx, rate=30)
    assert result["id"] is not None
    assert result["compressed"] is True and result["semanticRisk"] is True and result["id"].startswith("cmp_")
    assert result["outputTokens"] == count_tokens(result["text"]) and result["outputBytes"] == len(
        result["text"].encode()
    )
    recovered = bee_compression_recover(
        ctx, Call("bee_compression_recover", {"id": result["id"], "budgetBytes": 262144}, Deadline(30))
    )
    assert recovered["text"] == DESIGN and recovered["method"] == METHOD
    assert recovered["sha256"] == "sha256:" + hashlib.sha256(DESIGN.encode()).hexdigest() == result["originalSha256"]
    files = sorted(p.name for p in ctx.instance.path("compression", "originals").iterdir())
    assert files == [f"{result['id']}.json", f"{result['id']}.txt"]  # no temporary files left behind
    assert RetentionStore(ctx.instance).usage() == (1, len(DESIGN.encode()))


def test_recover_refuses_tampered_or_missing_originals(ctx: CoreContext) -> None:
    record = RetentionStore(ctx.instance).retain("The original text.", METHOD)
    text_path = ctx.instance.path("compression", "originals", f"{record.id}.txt")
    meta_path = ctx.instance.path("compression", "originals", f"{record.id}.json")
    args = {"id": record.id, "budgetBytes": 65536}
    text_path.write_text("The original text!")
    assert (
        fail(bee_compression_recover, ctx, Call("bee_compression_recover", args, Deadline(30))).code
        is ErrorCode.HASH_MISMATCH
    )
    RetentionStore(ctx.instance).retain("The original text.", METHOD)  # a damaged copy is rewritten whole
    assert (
        bee_compression_recover(ctx, Call("bee_compression_recover", cast(CompressionRecoverArgs, args), Deadline(30)))[
            "text"
        ]
        == "The original text."
    )
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "sha256": "sha256:" + "0" * 64}))
    assert (
        fail(bee_compression_recover, ctx, Call("bee_compression_recover", args, Deadline(30))).code
        is ErrorCode.HASH_MISMATCH
    )
    meta_path.write_text("{broken")
    assert (
        fail(bee_compression_recover, ctx, Call("bee_compression_recover", args, Deadline(30))).code
        is ErrorCode.HASH_MISMATCH
    )
    meta_path.unlink()
    assert (
        fail(bee_compression_recover, ctx, Call("bee_compression_recover", args, Deadline(30))).code
        is ErrorCode.NOT_FOUND
    )


def test_recover_budget_and_missing_instance(ctx: CoreContext, tmp_path: Path) -> None:
    record = RetentionStore(ctx.instance).retain(GPL[:5000], METHOD)
    error = fail(
        bee_compression_recover,
        ctx,
        Call("bee_compression_recover", {"id": record.id, "budgetBytes": 1024}, Deadline(30)),
    )
    assert error.code is ErrorCode.BUDGET_EXCEEDED
    bare = tmp_path / "bare"
    bare.mkdir()
    error = fail(
        bee_compression_recover,
        CoreContext.open(bare),
        Call("bee_compression_recover", {"id": record.id, "budgetBytes": 65536}, Deadline(30)),
    )
    assert error.code is ErrorCode.NOT_INITIALIZED


def test_bad_inputs(ctx: CoreContext) -> None:
    save_settings(ctx.instance, enabled=True, method=METHOD)
    assert fail(call_compress, ctx, "x", "json").code is ErrorCode.UNSUPPORTED
    assert fail(call_compress, ctx, "é" * 33000).code is ErrorCode.INVALID_ARGUMENT
    error = fail(call_compress, ctx, "alpha " * 8200)
    assert error.code is ErrorCode.INVALID_ARGUMENT and "8192" in error.message
    call_compress(ctx, "alpha " * 8000)  # 8,001 tokens: within the limit


def test_damaged_settings_are_reported_not_guessed(ctx: CoreContext) -> None:
    save_settings(ctx.instance, enabled=True, method=METHOD)
    ctx.instance.path("compression", "settings.json").write_text('{"enabled": "yes"}')
    with pytest.raises(ValueError, match="not a compression settings object"):
        load_settings(ctx.instance)
    assert fail(call_compress, ctx).code is ErrorCode.INTERNAL
