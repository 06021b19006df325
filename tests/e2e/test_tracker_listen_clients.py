"""The tracker's resources through clients nobody here wrote: the pinned TypeScript SDK client (1.32.2, which speaks
2025-11-25 only and so cannot listen) and the MCP Inspector CLI (2.12.0, whose ``--cli`` methods include
``resources/read`` but no subscribing). Both read every kind of resource; listening is the official Python client's
(tests/e2e/test_tracker_listen.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.harness import node
from tests.harness.node import answered, success
from tests.harness.tracker import TrackerFactory, TrackerProcess

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(node.missing_reason() is not None, reason=str(node.missing_reason())),
]

ALICE = "alice@example.com"


def _created(server: TrackerProcess, title: str) -> str:
    out = node.ts_client(node.http_server(server.url, server.token(ALICE)), [("create", {"title": title})])
    data: dict[str, Any] = success(answered(out["calls"][0]))["data"]
    return str(data["id"])


def test_the_typescript_sdk_client_reads_the_resources(tracker_factory: TrackerFactory) -> None:
    server = tracker_factory()
    issue_id = _created(server, "read me")
    uris = [
        f"bee://tracker/issues/{issue_id}",
        "bee://tracker/ready?priority=2&limit=5",
        "bee://tracker/claims/alice%40example.com",
        "bee://tracker/nowhere",
    ]
    out = node.ts_client(node.http_server(server.url, server.token(ALICE)), [], list_tools=False, reads=uris)
    issue, ready, held, nowhere = out["reads"]
    assert json.loads(issue["result"]["contents"][0]["text"])["data"]["issue"]["id"] == issue_id
    assert [row["id"] for row in json.loads(ready["result"]["contents"][0]["text"])["data"]["issues"]] == [issue_id]
    assert json.loads(held["result"]["contents"][0]["text"])["data"] == {"actor": ALICE, "claims": []}
    assert nowhere["thrown"]["code"] == -32602 and "serves no resource" in nowhere["thrown"]["message"]


def test_the_inspector_reads_a_resource(tracker_factory: TrackerFactory) -> None:
    server = tracker_factory()
    issue_id = _created(server, "inspect me")
    run = node.inspector(
        [],
        *("--transport", "http", "--server-url", server.url),
        *("--method", "resources/read", "--uri", f"bee://tracker/issues/{issue_id}"),
        headers={"Authorization": f"Bearer {server.token(ALICE)}"},
    )
    assert run.returncode == 0, (run.error, run.stderr)
    assert json.loads(run.result["contents"][0]["text"])["data"]["issue"]["title"] == "inspect me"
