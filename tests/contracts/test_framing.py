import json

import pytest

from bee_contracts.framing import Frame, FrameSplitter, Oversized, invalid_id_error, peek_id, recover_id
from bee_contracts.wire import INVALID_REQUEST, error_frame


def frames(limit: int, *chunks: bytes) -> list[Frame | Oversized]:
    splitter = FrameSplitter(limit)
    out: list[Frame | Oversized] = []
    for chunk in chunks:
        out.extend(splitter.feed(chunk))
    out.extend(splitter.finish())
    return out


def test_splits_on_newlines_across_chunks() -> None:
    assert frames(100, b'{"a":1}\n{"b"', b":2}\n") == [Frame(b'{"a":1}'), Frame(b'{"b":2}')]


def test_blank_lines_and_crlf_are_tolerated() -> None:
    assert frames(100, b'\n\r\n{"a":1}\r\n') == [Frame(b'{"a":1}')]


def test_unterminated_last_frame_is_delivered_at_end() -> None:
    assert frames(100, b'{"a":1}') == [Frame(b'{"a":1}')]


def test_frame_at_the_limit_passes_and_one_byte_more_is_oversized() -> None:
    at_limit = b"x" * 100
    assert frames(100, at_limit + b"\n") == [Frame(at_limit)]
    [report] = frames(100, at_limit + b"y\n")
    assert isinstance(report, Oversized) and report.size == 101


def test_oversized_frame_is_skipped_and_the_next_frame_survives() -> None:
    big = b'{"jsonrpc":"2.0","id":7,"method":"x","params":{"p":"' + b"z" * 500 + b'"}}'
    out = frames(64, big[:100], big[100:300], big[300:] + b'\n{"ok":1}\n')
    assert isinstance(out[0], Oversized) and out[0].size == len(big)
    assert out[1] == Frame(b'{"ok":1}')
    assert recover_id(out[0].head) == 7


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":12,"method":"tools/call"', 12),
        (b'{"jsonrpc":"2.0","id":"abc","method":"x"', "abc"),
        (b'{"method":"x","params":{"id":99,"x":"', None),  # nested id is not the request id
        (b'{"method":"x","params":{"manifestJson":"{\\"id\\":5}"},"id":3}', 3),  # escaped id in a string
        (b'{"jsonrpc":"2.0","method":"x","params":{"a":"' + b"q" * 50, None),  # cut before any id
        (b'{"id": true}', None),
        (b"not json at all", None),
    ],
)
def test_recover_id(head: bytes, expected: str | int | None) -> None:
    assert recover_id(head) == expected


def test_error_frame_is_a_jsonrpc_error_line() -> None:
    line = error_frame(5, -32600, "too big", {"limitBytes": 1})
    assert line.endswith(b"\n")
    assert json.loads(line) == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": -32600, "message": "too big", "data": {"limitBytes": 1}},
    }


def test_peek_id() -> None:
    assert peek_id(b'{"id": 4, "foo": 1}') == 4
    assert peek_id(b"[1,2]") is None
    assert peek_id(b"{") is None


@pytest.mark.parametrize("bad_id", [None, 1.0, -2.5, True, False, {}, {"a": 1}, [], [1]])
def test_invalid_id_error_answers_a_request_whose_id_is_not_a_string_or_an_integer(bad_id: object) -> None:
    frame = invalid_id_error({"jsonrpc": "2.0", "id": bad_id, "method": "tools/list"})
    assert frame is not None and frame.endswith(b"\n")
    answer = json.loads(frame)
    assert answer["id"] is None and answer["error"]["code"] == INVALID_REQUEST
    assert "must be a string or an integer" in answer["error"]["message"]


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 0, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": "", "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2**70, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},  # a notification has no id at all
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}},  # responses are never answered
        [{"jsonrpc": "2.0", "id": None, "method": "tools/list"}],
        "not a message",
    ],
)
def test_invalid_id_error_passes_everything_else(message: object) -> None:
    assert invalid_id_error(message) is None


def test_recover_id_survives_an_id_nested_deeper_than_the_parser_goes() -> None:
    assert recover_id(b'{"jsonrpc":"2.0","id":' + b"[" * 60_000) is None
