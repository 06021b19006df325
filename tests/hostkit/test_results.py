import json
from typing import Any

import mcp_types as types
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bee_contracts import BeeError, ErrorCode
from bee_hostkit import Budget, with_size
from bee_hostkit.results import guard, piece_bytes, render, result_bytes

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def sdk_size(structured):
    """The size the SDK puts on the wire for the same result object."""
    model = types.CallToolResult.model_validate(render(structured), by_name=False)
    return len(
        model.model_dump_json(
            by_alias=True, exclude_none=True, include={"content", "structured_content", "is_error"}
        ).encode()
    )


@given(st.dictionaries(st.text(max_size=10), json_values, max_size=5))
def test_result_bytes_is_exact_against_the_sdk_serialization(structured):
    assert result_bytes(structured) == sdk_size(structured)


@given(st.lists(json_values, min_size=1, max_size=6))
def test_list_items_add_exactly_their_piece_size_plus_separators(items):
    base = result_bytes({"items": []})
    total = result_bytes({"items": items})
    assert total == base + sum(piece_bytes(i) for i in items) + 2 * (len(items) - 1)


def test_with_size_is_a_fixed_point():
    structured: dict[str, Any] = with_size({"text": "x" * 995})
    assert structured["resultBytes"] == result_bytes(structured)


def test_budget_require_fails_with_sizes():
    budget = Budget(600)
    with pytest.raises(BeeError) as info:
        budget.require({"text": "y" * 1000})
    assert info.value.code is ErrorCode.BUDGET_EXCEEDED
    assert info.value.details is not None
    assert info.value.details["budgetBytes"] == 600 and info.value.details["overByBytes"] > 0


def test_guard_refuses_results_over_256_kib():
    small = {"text": "a"}
    assert guard(small) == result_bytes(small)
    with pytest.raises(BeeError) as info:
        guard({"text": "a" * (140 * 1024)})  # twice 140 KiB with the text copy: over 256 KiB
    assert info.value.code is ErrorCode.RESULT_TOO_LARGE


def test_text_copy_is_the_structured_content():
    wire = render({"a": [1, "é"]})
    assert json.loads(wire["content"][0]["text"]) == wire["structuredContent"]
