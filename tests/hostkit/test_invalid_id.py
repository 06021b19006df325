"""invalid_id_error: the one check, shared by the HTTP edge and stdio, for request ids that cannot be answered."""

import json

import pytest

from bee_hostkit.framing import invalid_id_error


@pytest.mark.parametrize(
    ("request_id", "kind"),
    [
        (None, "null"),
        ({"a": 1}, "an object"),
        ([1], "an array"),
        (1.5, "a number"),
        (1.0, "a number"),
        (True, "a boolean"),
    ],
)
def test_unusable_ids_get_32600_with_id_null(request_id, kind):
    frame = invalid_id_error({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"})
    assert frame is not None and frame.endswith(b"\n")
    answer = json.loads(frame)
    assert answer["id"] is None and answer["error"]["code"] == -32600
    assert f"not {kind}" in answer["error"]["message"]


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 0, "method": "ping"},
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},  # a notification has no id at all
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}},  # a response may carry id null
        [{"jsonrpc": "2.0", "id": None, "method": "ping"}],
        "not an object",
        None,
    ],
)
def test_everything_else_passes_through(message):
    assert invalid_id_error(message) is None
