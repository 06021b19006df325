"""The Host in process: the answer to a tools/call, deadlines, catalog/handler agreement, the call object, the error
shape."""

import json
import threading
from typing import Any, NoReturn, cast

import anyio
import pytest

from bee_contracts import BeeError, ErrorCode, ToolSpec
from bee_hostkit import Call, Host
from bee_hostkit.host import Handler

pytestmark = pytest.mark.anyio

SPEC = ToolSpec(
    host="core",
    name="demo",
    title="Demo",
    description="demo",
    input_schema={
        "type": "object",
        "properties": {"n": {"type": "integer"}, "mode": {"type": "string", "default": "fast"}},
        "additionalProperties": False,
    },
    output_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
    annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
)


def error_of(wire: dict[str, Any]) -> dict[str, Any]:
    """The envelope of a failed result: JSON text, and never structuredContent (the TypeScript SDK checks that)."""
    assert wire["isError"] is True
    assert "structuredContent" not in wire
    [content] = wire["content"]
    assert content["type"] == "text"
    envelope: dict[str, Any] = json.loads(content["text"])
    return envelope


def test_catalog_and_handlers_must_agree() -> None:
    with pytest.raises(ValueError, match="disagree"):
        Host("h", [SPEC], {})
    with pytest.raises(ValueError, match="disagree"):
        Host("h", [SPEC], {"demo": lambda call: {}, "extra": lambda call: {}})


async def test_the_handler_gets_one_call_with_typed_arguments_defaults_deadline_and_caller() -> None:
    seen: list[Call[Any]] = []

    def handler(call: Call[Any]) -> dict[str, Any]:
        seen.append(call)
        return {"ok": True}

    host = Host("h", [SPEC], {"demo": handler}, deadlines={"demo": 7.0})
    wire = await host.call("demo", {"n": 2}, caller="alice")
    assert wire["structuredContent"] == {"ok": True} and json.loads(wire["content"][0]["text"]) == {"ok": True}
    [call] = seen
    assert call.tool == "demo" and call.args == {"n": 2, "mode": "fast"} and call.caller == "alice"
    assert 0 < call.deadline.remaining <= 7.0
    await host.call("demo", {})
    assert seen[1].caller is None


async def test_the_answer_reads_the_caller_from_the_scope_and_is_marked_complete_success_or_failure() -> None:
    seen: list[Call[Any]] = []

    def handler(call: Call[Any]) -> dict[str, Any]:
        seen.append(call)
        return {"ok": True}

    host = Host("h", [SPEC], {"demo": handler}, caller_of=lambda scope: scope.get("test.caller"))
    answer = await host.answer("demo", {}, {"test.caller": "carol"})
    assert answer["resultType"] == "complete" and answer["structuredContent"] == {"ok": True}
    assert seen[-1].caller == "carol"
    await host.answer("demo", {}, None)  # a stdio request: no scope, so no caller
    assert seen[-1].caller is None
    failed = await host.answer("demo", {"n": "two"}, {"test.caller": "carol"})
    assert failed["resultType"] == "complete" and error_of(failed)["code"] == "invalid_argument"
    assert len(seen) == 2  # the refused call never reached the handler


async def test_a_handler_past_its_deadline_is_answered_without_it_and_writes_are_outcome_unknown() -> None:
    gate = threading.Event()
    host = Host("h", [SPEC], {"demo": cast(Handler, lambda call: gate.wait(10) or {})}, deadlines={"demo": 0.05})
    result = await host.call("demo", {})
    gate.set()
    body = error_of(result)
    assert body["code"] == "deadline_exceeded" and body["outcome_unknown"] is True


async def test_failures_are_the_envelope_as_text_without_structured_content_and_internals_stay_hidden() -> None:
    def broken(call: Call[Any]) -> NoReturn:
        raise RuntimeError("secret internals")

    def refusing(call: Call[Any]) -> NoReturn:
        raise BeeError(ErrorCode.CONFLICT, "changed", details={"state_revision": 3})

    host = Host("h", [SPEC], {"demo": broken})
    body = error_of(await host.call("demo", {}))
    assert body["code"] == "internal" and "secret" not in body["error"] and body["outcome_unknown"] is True
    host = Host("h", [SPEC], {"demo": refusing})
    body = error_of(await host.call("demo", {}))
    assert body == {
        "error": "changed",
        "code": "conflict",
        "retryable": False,
        "outcome_unknown": False,
        "details": {"state_revision": 3},
    }
    body = error_of(await host.call("demo", {"n": "two"}))
    assert body["code"] == "invalid_argument" and "argument n must be an integer, got 'two'" in body["error"]


async def test_a_coroutine_handler_runs_on_the_loop_and_is_cancelled_at_its_deadline() -> None:
    async def answering(call: Call[Any]) -> dict[str, Any]:
        return {"ok": call.args["mode"] == "fast"}

    async def hanging(call: Call[Any]) -> dict[str, Any]:
        await anyio.sleep(60)
        return {"ok": True}

    host = Host("h", [SPEC], {"demo": answering})
    assert (await host.call("demo", {}))["structuredContent"] == {"ok": True}
    host = Host("h", [SPEC], {"demo": hanging}, deadlines={"demo": 0.05})
    with anyio.fail_after(5):
        body = error_of(await host.call("demo", {}))
    assert body["code"] == "deadline_exceeded"


async def test_execute_is_the_call_path_without_rendering() -> None:
    host = Host("h", [SPEC], {"demo": lambda call: {"ok": True}})
    assert await host.execute("demo", {}) == {"ok": True}
    with pytest.raises(BeeError) as info:
        await host.execute("demo", {"n": "two"})
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert error_of(await host.call("demo", {"n": "two"})) == info.value.body()
