import json
from typing import Any

import mcp_types as types
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bee_contracts import BeeError, ErrorCode
from bee_hostkit import Budget, with_size
from bee_hostkit.results import list_bytes, piece_bytes, render, result_bytes
from bee_hostkit.stdio.transport import encode_message

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def sdk_size(structured: dict[str, Any]) -> int:
    """The size the SDK puts on the wire for the same result object."""
    model = types.CallToolResult.model_validate(render(structured), by_name=False)
    return len(
        model.model_dump_json(
            by_alias=True, exclude_none=True, include={"content", "structured_content", "is_error"}
        ).encode()
    )


@given(st.dictionaries(st.text(max_size=10), json_values, max_size=5))
def test_result_bytes_is_exact_against_the_sdk_serialization(structured: dict[str, Any]) -> None:
    assert result_bytes(structured) == sdk_size(structured)


@given(st.lists(json_values, min_size=1, max_size=6))
def test_list_items_add_exactly_their_piece_size_plus_separators(items: list[Any]) -> None:
    base = result_bytes({"items": []})
    total = result_bytes({"items": items})
    assert total == base + sum(piece_bytes(i) for i in items) + 2 * (len(items) - 1)


def test_with_size_is_a_fixed_point() -> None:
    structured: dict[str, Any] = with_size({"text": "x" * 995})
    assert structured["resultBytes"] == result_bytes(structured)


def test_budget_require_fails_with_sizes() -> None:
    budget = Budget(600)
    with pytest.raises(BeeError) as info:
        budget.require({"text": "y" * 1000})
    assert info.value.code is ErrorCode.BUDGET_EXCEEDED
    assert info.value.details is not None
    assert info.value.details["budgetBytes"] == 600 and info.value.details["overByBytes"] > 0


def test_text_copy_is_the_structured_content() -> None:
    wire = render({"a": [1, "é"]})
    assert json.loads(wire["content"][0]["text"]) == wire["structuredContent"]


wire_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.sampled_from(['"', "\\", "\n", "\x00", "\u2028", "é", "\U0001f600", '\\"'])
    | st.integers(min_value=2**64, max_value=2**80),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=10), wire_values, max_size=5))
def test_the_counted_size_is_the_size_on_the_stdio_wire(structured: dict[str, Any]) -> None:
    """What render counts is what the stdio transport writes: quotes, escapes, floats and huge integers included."""
    frame = encode_message(types.JSONRPCResponse(jsonrpc="2.0", id=7, result=render(structured)))
    envelope = len(b'{"jsonrpc":"2.0","id":7,"result":}')
    assert len(frame) - envelope == result_bytes(structured)
    assert json.loads(frame)["result"]["structuredContent"] == json.loads(json.dumps(structured))


def test_render_refuses_results_over_256_kib_counting_both_copies() -> None:
    assert render({"text": "a" * (120 * 1024)})["isError"] is False
    with pytest.raises(BeeError) as info:
        render({"text": "a" * (140 * 1024)})
    assert info.value.code is ErrorCode.RESULT_TOO_LARGE
    assert info.value.details == {"resultBytes": result_bytes({"text": "a" * (140 * 1024)}), "limitBytes": 262144}


def test_a_container_counts_as_the_sum_of_its_parts() -> None:
    """The identity packets are sized by: swapping a value inside a result changes it by the pieces' difference."""
    symbols = [{"kind": "function", "name": 'q"\\', "startLine": 1, "endLine": 2}] * 3
    item = {"id": "o", "symbols": symbols}
    assert piece_bytes(item) == piece_bytes({"id": "o", "symbols": []}) - piece_bytes([]) + piece_bytes(symbols)
    assert list_bytes([piece_bytes(s) for s in symbols]) == piece_bytes(symbols) - piece_bytes([])
    assert list_bytes([]) == 0
