"""Every JSON-RPC request over HTTP gets an answer: a request id the SDK cannot answer under (null, an object, an
array, a float, a boolean) gets -32600 with id null from `bee tracker serve`, in both protocol eras."""

import json
from collections.abc import Callable

import httpx
import pytest

from tests.harness.tracker import TrackerProcess

pytestmark = pytest.mark.e2e

LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()


def authorized(server: TrackerProcess) -> dict[str, str]:
    return {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {server.token('ids@example.com')}",
    }


#: Each kind of id the SDK cannot answer under, and how the error names it.
UNUSABLE = {"null": None, "an object": {"a": 1}, "an array": [1], "the number 1.5": 1.5, "the boolean true": True}


def test_a_request_with_an_unusable_id_gets_32600_with_id_null_in_both_eras(
    tracker_factory: Callable[..., TrackerProcess],
) -> None:
    server = tracker_factory()
    legacy = authorized(server)
    modern = {**legacy, "MCP-Protocol-Version": "2026-07-28"}
    with httpx.Client(timeout=30) as http:
        for era, headers in (("legacy", legacy), ("2026-07-28", modern)):
            for kind, request_id in UNUSABLE.items():
                body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}
                response = http.post(server.url, content=json.dumps(body), headers=headers)
                assert response.status_code == 400, (era, kind, response.text)
                answer = response.json()
                assert answer["id"] is None and answer["error"]["code"] == -32600, (era, kind, answer)
                assert f"the id is {kind}" in answer["error"]["message"], (era, kind, answer)


def test_usable_ids_and_notifications_are_untouched(tracker_factory: Callable[..., TrackerProcess]) -> None:
    server = tracker_factory()
    headers = authorized(server)
    with httpx.Client(timeout=30) as http:
        for request_id in (0, "x", 2**40):
            body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}
            answer = http.post(server.url, content=json.dumps(body), headers=headers)
            assert answer.status_code == 200 and answer.json()["id"] == request_id
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert http.post(server.url, content=json.dumps(note), headers=headers).status_code == 202
        garbage = http.post(server.url, content=b"{not json", headers=headers)
        assert garbage.status_code == 400 and garbage.json()["error"]["code"] == -32700
        oversized = http.post(server.url, content=b" " * (600 * 1024) + LIST, headers=headers)
        assert oversized.status_code == 413 and oversized.json()["error"]["code"] == -32600
