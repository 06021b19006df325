"""bee_plan_show and bee_plan_next through a real `bee mcp serve`, reading plans from a real `bee tracker serve`.

The checkout is joined with `bee collab join` and real tokens; plans are built with the tracker's own tools. Each
test speaks to the core host in both protocol eras. Expiry is the tracker's: a lease renewed to one second, then
read until the tracker itself says it is not live.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from bee_contracts import load_catalog
from bee_core.collab import binding as bindings
from bee_core.instance import Instance
from tests.conftest import ERAS, bee_executable, core_client, error_of, make_checkout
from tests.harness import node
from tests.harness.collab import BOB, Joined, join, sample_plan
from tests.harness.tracker import TrackerProcess

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture
def tracker(tracker_factory: Callable[..., TrackerProcess], tmp_path: Path) -> TrackerProcess:
    return tracker_factory(str(tmp_path / "tracker.db"))


@pytest.fixture
def joined(tmp_path: Path, tracker: TrackerProcess) -> Joined:
    return join(tmp_path, tracker)


async def expire(joined: Joined) -> None:
    """Renew the lease to one second (as `bee collab join` does for a live binding), then wait for the tracker's
    clock to pass it."""
    done = joined.bee("collab", "join", "--tracker", joined.tracker.url, "--space", joined.space, "--ttl", "1")
    assert done.returncode == 0, done.stderr
    with anyio.fail_after(30):
        while (await joined.lease())["live"]:
            await anyio.sleep(0.2)


def expected_steps(ids: dict[str, str]) -> list[dict[str, Any]]:
    def step(name: str, state: str, status: str, owner: str | None, after: list[str]) -> dict[str, Any]:
        return {
            "id": ids[name],
            "title": name.title(),
            "contract": f"{name} is done",
            "state": state,
            "status": status,
            "owner": owner,
            "after": [ids[a] for a in after],
        }

    return [
        step("design", "reported_complete", "closed", BOB, []),
        step("build", "claimed", "in_progress", BOB, ["design"]),
        step("test", "waiting", "open", None, ["build"]),
        step("docs", "ready", "open", None, []),
        step("changelog", "ready", "open", None, []),
        step("polish", "held", "blocked", None, []),
    ]


async def test_plans_are_read_while_the_binding_is_live_and_refused_once_it_expires(joined: Joined) -> None:
    ids = await sample_plan(joined)
    before = await joined.lease()
    written_before = [
        got["activity_revision"] for got in await joined.calls(*(("get", {"id": i}) for i in ids.values()))
    ]
    contract = {"id": ids["docs"], "title": "Docs", "contract": "docs is done"}
    for era in ERAS:
        async with core_client(joined.checkout, era) as client:
            shown = await client.call_tool("bee_plan_show", {"planId": ids["plan"]})
            assert shown.is_error is False, shown.content
            assert shown.structured_content == {
                "planId": ids["plan"],
                "space": "team",
                "title": "Ship search",
                "status": "open",
                "steps": expected_steps(ids),
            }
            assert json.loads(shown.content[0].text) == shown.structured_content

            first = (await client.call_tool("bee_plan_next", {"planId": ids["plan"]})).structured_content
            assert first == {
                "planId": ids["plan"],
                "space": "team",
                "steps": [contract],
                "hasMore": True,
                "omitted": {"ready": 1, "waiting": 1, "claimed": 1, "held": 1, "reported_complete": 1},
            }
            every = (await client.call_tool("bee_plan_next", {"planId": ids["plan"], "limit": 5})).structured_content
            assert every["steps"] == [
                contract,
                {"id": ids["changelog"], "title": "Changelog", "contract": "changelog is done"},
            ]
            assert every["hasMore"] is False and every["omitted"]["ready"] == 0

    # Reading never joined, claimed or renewed anything: the lease and every issue are as they were.
    after = await joined.lease()
    assert (after["renewed_at"], after["expires_at"]) == (before["renewed_at"], before["expires_at"])
    written_after = [
        got["activity_revision"] for got in await joined.calls(*(("get", {"id": i}) for i in ids.values()))
    ]
    assert written_after == written_before

    await expire(joined)
    for era in ERAS:
        async with core_client(joined.checkout, era) as client:
            for tool, arguments in (
                ("bee_plan_show", {"planId": ids["plan"]}),
                ("bee_plan_next", {"planId": ids["plan"]}),
            ):
                body = error_of(await client.call_tool(tool, arguments))
                assert body["code"] == "binding_not_live" and body["retryable"] is False, body
                assert "expired at" in body["error"] and "bee collab join" in body["error"], body
    assert (await joined.lease())["live"] is False  # the failed reads did not revive it


async def test_unknown_plans_plans_of_other_spaces_and_bad_limits_are_clear_errors(joined: Joined) -> None:
    ids = await sample_plan(joined)
    [other, unlabelled] = await joined.calls(
        ("create", {"title": "Theirs", "issue_type": "epic", "labels": ["space:other"]}),
        ("create", {"title": "Nobody's", "issue_type": "epic"}),
    )
    cases = [
        ("bee_plan_show", {"planId": "bd-nope"}, "not_found", "the tracker has no issue bd-nope"),
        ("bee_plan_show", {"planId": other["id"]}, "not_found", "belongs to space 'other', not to this checkout's"),
        ("bee_plan_next", {"planId": unlabelled["id"]}, "not_found", "belongs to no space"),
        ("bee_plan_show", {"planId": ids["docs"]}, "not_found", "is a task, not a plan"),
        ("bee_plan_show", {"planId": ""}, "invalid_argument", "planId"),
        ("bee_plan_next", {"planId": ids["plan"], "limit": 0}, "invalid_argument", "outside the allowed range 1–5"),
        ("bee_plan_next", {"planId": ids["plan"], "limit": 6}, "invalid_argument", "outside the allowed range 1–5"),
        ("bee_plan_next", {"planId": ids["plan"], "limit": 1.5}, "invalid_argument", "must be an integer"),
    ]
    for era in ERAS:
        async with core_client(joined.checkout, era) as client:
            for tool, arguments, code, text in cases:
                body = error_of(await client.call_tool(tool, arguments))
                assert body["code"] == code and text in body["error"], (tool, arguments, body)


async def test_a_missing_or_left_binding_is_not_live(tmp_path: Path, joined: Joined) -> None:
    lonely = make_checkout(tmp_path / "lonely")
    for era in ERAS:
        async with core_client(lonely, era) as client:  # not even `bee init`
            body = error_of(await client.call_tool("bee_plan_show", {"planId": "bd-x"}))
            assert body["code"] == "binding_not_live" and "bee init" in body["error"], body
    ids = await sample_plan(joined)
    await joined.calls(("lease_leave", {"id": joined.binding()["leaseId"]}))  # left behind this checkout's back
    for era in ERAS:
        async with core_client(joined.checkout, era) as client:
            body = error_of(await client.call_tool("bee_plan_next", {"planId": ids["plan"]}))
            assert body["code"] == "binding_not_live" and "was left at" in body["error"], body
    assert joined.bee("collab", "leave").returncode == 0  # the user leaves too: the binding is gone
    async with core_client(joined.checkout, ERAS[0]) as client:
        body = error_of(await client.call_tool("bee_plan_next", {"planId": ids["plan"]}))
        assert body["code"] == "binding_not_live" and "no collaboration binding" in body["error"], body


async def test_an_unreachable_tracker_is_retryable_and_reads_resume_when_it_returns(joined: Joined) -> None:
    ids = await sample_plan(joined)
    joined.tracker.stop()
    for era in ERAS:
        async with core_client(joined.checkout, era) as client:
            body = error_of(await client.call_tool("bee_plan_show", {"planId": ids["plan"]}))
            assert body["code"] == "unavailable" and body["retryable"] is True, body
            assert joined.tracker.url in body["error"], body
    joined.tracker.start()  # same port, same store: the lease is still live by the tracker's clock
    async with core_client(joined.checkout, ERAS[-1]) as client:
        result = await client.call_tool("bee_plan_next", {"planId": ids["plan"]})
        assert result.is_error is False and result.structured_content["steps"][0]["id"] == ids["docs"]


@pytest.fixture
def silent_tracker() -> Iterator[str]:
    """A TCP listener that accepts connections and never answers: a tracker that hangs."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"


async def test_a_silent_tracker_is_a_retryable_error_within_the_deadline(
    checkout: Path, tmp_path: Path, silent_tracker: str
) -> None:
    instance = Instance(checkout / ".bee")
    instance.init()
    token_file = tmp_path / "token"
    token_file.write_text("header.payload.signature\n")
    token_file.chmod(0o600)
    binding = bindings.Binding(
        tracker=silent_tracker,
        space="team",
        lease_id="lease-" + "0" * 32,
        checkout_id="chk-0000000000000000",
        holder="alice@example.com",
        ttl_seconds=600,
        token_file=token_file,
        joined_at="2026-05-01T09:00:00.000000Z",
    )
    bindings.save(instance, binding)
    for era in ERAS:
        async with core_client(checkout, era, env={"BEE_PLAN_DEADLINE_SECONDS": "2"}) as client:
            with anyio.fail_after(30):  # the host answers by itself; a hang fails here
                body = error_of(await client.call_tool("bee_plan_show", {"planId": "bd-x"}))
            assert body["code"] in ("unavailable", "deadline_exceeded") and body["retryable"] is True, body


async def test_a_refused_token_is_unauthorized(joined: Joined) -> None:
    ids = await sample_plan(joined)
    joined.token_file.write_text("not-a-token\n")
    for era in ERAS:
        async with core_client(joined.checkout, era) as client:
            body = error_of(await client.call_tool("bee_plan_show", {"planId": ids["plan"]}))
            assert body["code"] == "unauthorized" and "refused the token" in body["error"], body
            assert "not-a-token" not in json.dumps(body)  # the token is never echoed


@pytest.mark.skipif(node.missing_reason() is not None, reason=str(node.missing_reason()))
async def test_plan_tools_through_the_typescript_sdk_client(joined: Joined) -> None:
    ids = await sample_plan(joined)
    server = node.stdio_server(bee_executable(), "mcp", "serve", cwd=joined.checkout)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("bee_plan_show", {"planId": ids["plan"]}),
        ("bee_plan_next", {"planId": ids["plan"], "limit": 2}),
        ("bee_plan_show", {"planId": "bd-nope"}),
    ]
    out = await anyio.to_thread.run_sync(node.ts_client, server, calls)
    assert out["tools"] == [spec.to_wire() for spec in load_catalog("core")]
    shown, ready, missing = (call["result"] for call in out["calls"])
    assert shown.get("isError") in (None, False) and shown["structuredContent"]["steps"] == expected_steps(ids)
    assert [step["id"] for step in ready["structuredContent"]["steps"]] == [ids["docs"], ids["changelog"]]
    assert missing["isError"] is True and "structuredContent" not in missing
    assert json.loads(missing["content"][0]["text"])["code"] == "not_found"

    await expire(joined)
    out = await anyio.to_thread.run_sync(node.ts_client, server, calls[:1])
    [expired] = (call["result"] for call in out["calls"])
    assert expired["isError"] is True and "structuredContent" not in expired
    body = json.loads(expired["content"][0]["text"])
    assert body["code"] == "binding_not_live" and body["retryable"] is False


async def test_states_and_order_follow_what_the_tracker_holds(joined: Joined) -> None:
    [plan, outside] = await joined.calls(
        ("create", {"title": "Big", "issue_type": "epic", "labels": ["space:team"]}),
        ("create", {"title": "Another team's work"}),
    )
    steps = await joined.calls(
        *(("create", {"title": f"Step {n}", "parent": plan["id"], "acceptance_criteria": f"{n}"}) for n in range(1, 12))
    )
    ids = [step["id"] for step in steps]
    await joined.calls(
        ("link", {"id": ids[0], "target": outside["id"]}),  # waits on an issue outside the plan
        ("update", {"id": ids[1], "defer_until": "2999-01-01T00:00:00Z"}),  # deferred past the tracker's now
    )
    async with core_client(joined.checkout, ERAS[-1]) as client:
        shown = (await client.call_tool("bee_plan_show", {"planId": plan["id"]})).structured_content
        assert [step["id"] for step in shown["steps"]] == ids  # .10 and .11 come after .9, not after .1
        assert [step["state"] for step in shown["steps"][:3]] == ["waiting", "held", "ready"]
        assert shown["steps"][0]["after"] == []  # only steps of the plan order it

        await joined.calls(("update", {"id": plan["id"], "status": "blocked"}))
        held = (await client.call_tool("bee_plan_next", {"planId": plan["id"], "limit": 5})).structured_content
        assert held["steps"] == [] and held["hasMore"] is False
        assert held["omitted"] == {"ready": 0, "waiting": 1, "claimed": 0, "held": 10, "reported_complete": 0}

        await joined.calls(*(("create", {"title": "One too many", "parent": plan["id"]}) for _ in range(90)))
        body = error_of(await client.call_tool("bee_plan_show", {"planId": plan["id"]}))
        assert body["code"] == "invalid_argument" and "more steps than the 100" in body["error"], body

    binding = joined.binding()
    joined.binding_file.write_text(json.dumps({**binding, "checkoutId": "chk-someone-else"}))
    async with core_client(joined.checkout, ERAS[0]) as client:
        body = error_of(await client.call_tool("bee_plan_show", {"planId": plan["id"]}))
        assert body["code"] == "binding_not_live" and "belongs to another binding" in body["error"], body
