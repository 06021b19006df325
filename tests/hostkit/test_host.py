"""The Host in process: admission, deadlines, catalog/handler agreement, error mapping."""

import threading

import anyio
import pytest

from bee_contracts import ErrorCode, ToolSpec
from bee_hostkit import Host, ToolError, current_caller

pytestmark = pytest.mark.anyio

SPEC = ToolSpec(
    host="core",
    name="demo",
    title="Demo",
    description="demo",
    input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": False},
    output_schema={"type": "object"},
    annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
)


def test_catalog_and_handlers_must_agree():
    with pytest.raises(ValueError, match="disagree"):
        Host("h", [SPEC], {})
    with pytest.raises(ValueError, match="disagree"):
        Host("h", [SPEC], {"demo": lambda a, d: {}, "extra": lambda a, d: {}})


async def test_over_the_admission_limit_the_answer_is_busy_at_once():
    release = threading.Event()

    def slow(args, deadline):
        release.wait(10)
        return {"ok": True}

    host = Host("h", [SPEC], {"demo": slow}, max_in_flight=1)
    async with anyio.create_task_group() as tg:
        first: dict = {}

        async def run_first():
            first.update(await host.call("demo", {}))

        tg.start_soon(run_first)
        await anyio.sleep(0.2)
        second = await host.call("demo", {})
        release.set()
    assert second["isError"] is True and second["structuredContent"]["code"] == "busy"
    assert second["structuredContent"]["retryable"] is True
    assert first["isError"] is False
    assert (await host.call("demo", {}))["isError"] is False  # the slot was given back


async def test_a_handler_past_its_deadline_is_answered_without_it_and_writes_are_outcome_unknown():
    gate = threading.Event()
    host = Host("h", [SPEC], {"demo": lambda a, d: gate.wait(10) or {}}, deadlines={"demo": 0.05})
    result = await host.call("demo", {})
    gate.set()
    body = result["structuredContent"]
    assert body["code"] == "deadline_exceeded" and body["outcome_unknown"] is True


async def test_failures_map_to_the_envelope_and_internals_stay_hidden():
    def broken(args, deadline):
        raise RuntimeError("secret internals")

    def refusing(args, deadline):
        raise ToolError(ErrorCode.CONFLICT, "changed", details={"state_revision": 3})

    host = Host("h", [SPEC], {"demo": broken})
    body = (await host.call("demo", {}))["structuredContent"]
    assert body["code"] == "internal" and "secret" not in body["error"] and body["outcome_unknown"] is True
    host = Host("h", [SPEC], {"demo": refusing})
    body = (await host.call("demo", {}))["structuredContent"]
    assert body == {
        "error": "changed",
        "code": "conflict",
        "retryable": False,
        "outcome_unknown": False,
        "details": {"state_revision": 3},
    }


async def test_the_caller_reaches_the_handler_thread():
    host = Host("h", [SPEC], {"demo": lambda a, d: {"caller": current_caller()}})
    assert (await host.call("demo", {}, caller="alice"))["structuredContent"] == {"caller": "alice"}
    assert (await host.call("demo", {}))["structuredContent"] == {"caller": None}
