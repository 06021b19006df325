"""A hostile skill provider against the real `bee mcp serve`: provider answers are bounded while they stream.

The provider (tests/harness/hostile_provider.py, on 127.0.0.1) is configured the way a user does it, with
`bee init` and `bee skill bridge add`, and the host is spoken to by the official MCP client. Each test checks the
error code the agent sees, that the host keeps serving afterwards, that the provider was cut off long before the
end of its answer, and the host process's peak memory (VmHWM): before the cap, a 200 MB body took it to 1.1 GB
and a 150 MB listing to 3.7 GB.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from bee_contracts.limits import REMOTE_ANSWER_MAX_BYTES, SKILL_BODY_MAX_BYTES
from tests.conftest import core_process, error_of
from tests.core.skills_helpers import skill_md
from tests.e2e.skills_setup import bee
from tests.harness.hostile_provider import HostileProvider

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

GOOD = skill_md("git-workflow", "Branch and commit the way this team does.")
#: The host's peak resident memory must stay below this (it starts near 70 MiB; the 200 MB body took it to 1.1 GB).
PEAK_KIB = 200 * 1024
#: What a hostile answer may have written before the host closed the connection: the cap plus what the socket
#: buffers held meanwhile; far below the hundreds of MB it had to send.
CUT_WITHIN = 32 * 1024 * 1024
ERA = "2026-07-28"


def configured(checkout: Path, server: HostileProvider) -> str:
    """`bee init` and `bee skill bridge add evil --mcp URL`, as a user runs them; the add's output."""
    bee("init", cwd=checkout)
    return bee("skill", "bridge", "add", "evil", "--mcp", server.url, cwd=checkout)


def host_pid(checkout: Path) -> int:
    """The `bee mcp serve` this test process started in ``checkout``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except (OSError, IndexError, ValueError):
            continue
        if parent == os.getpid() and b"mcp" in argv and b"serve" in argv and Path(cwd) == checkout.resolve():
            found.append(int(entry.name))
    assert len(found) == 1, found
    return found[0]


def peak_kib(pid: int) -> int:
    """The process's peak resident set size so far (VmHWM), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmHWM for {pid}")


class Host:
    """The running host: its client and its process."""

    def __init__(self, client: Any, pid: int) -> None:
        self.client = client
        self.pid = pid

    async def call(self, tool: str, **arguments: Any) -> Any:
        with anyio.fail_after(120):  # a give-up guard, never the bound under test
            return await self.client.call_tool(tool, arguments)

    async def error(self, tool: str, **arguments: Any) -> dict[str, Any]:
        return error_of(await self.call(tool, **arguments))

    async def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = await self.call(tool, **arguments)
        assert result.is_error is False, result.content
        data: dict[str, Any] = result.structured_content
        return data

    def peak_kib(self) -> int:
        return peak_kib(self.pid)


@asynccontextmanager
async def host(checkout: Path, env: dict[str, str] | None = None) -> AsyncIterator[Host]:
    async with core_process(checkout, ERA, env=env) as client:
        yield Host(client, host_pid(checkout))


def spec(misbehave: dict[str, Any], *skills: dict[str, Any]) -> dict[str, Any]:
    return {"skills": list(skills) or [{"path": "git-workflow", "body": GOOD}], "misbehave": misbehave}


def assert_cut(server: HostileProvider, method: str, count: int = 1) -> None:
    """Each of the ``count`` hostile answers to ``method`` was cut off by the host long before its end."""
    for answer in server.misbehaved(method, count):
        assert answer["cut"] is True and answer["sent"] < CUT_WITHIN, answer


TOO_LARGE = f"sent an answer of more than {REMOTE_ANSWER_MAX_BYTES} bytes, more than Bee reads of one"


@pytest.mark.parametrize("sse", [False, True], ids=["json", "sse"])
async def test_a_200_mb_skill_body_is_result_too_large_with_memory_bounded(
    checkout: Path, tmp_path: Path, sse: bool
) -> None:
    misbehave = {"resources/read": {"how": "huge", "bytes": 200_000_000, "sse": sse}}
    with HostileProvider(spec(misbehave), tmp_path) as server:
        configured(checkout, server)
        async with host(checkout) as running:
            for tool in ("bee_skill_get", "bee_skill_resolve"):
                body = await running.error(tool, path="evil/git-workflow")
                assert (body["code"], body["retryable"]) == ("result_too_large", False), body
                assert f"skill provider 'evil' ({server.url}) {TOO_LARGE}" in body["error"]
                assert body["details"] == {"provider": "evil", "limitBytes": REMOTE_ANSWER_MAX_BYTES}
            # The host keeps serving, the provider included: its listing is not the part that misbehaves.
            found = await running.ok("bee_skill_search", query="git workflow")
            assert [match["path"] for match in found["matches"]] == ["evil/git-workflow"]
            assert running.peak_kib() < PEAK_KIB, running.peak_kib()
        assert_cut(server, "resources/read", 2)


@pytest.mark.parametrize("sse", [False, True], ids=["json", "sse"])
async def test_a_150_mb_listing_is_result_too_large_with_memory_bounded(
    checkout: Path, tmp_path: Path, sse: bool
) -> None:
    misbehave = {"skills/list": {"how": "huge", "bytes": 150_000_000, "sse": sse}}
    with HostileProvider(spec(misbehave), tmp_path) as server:
        # The CLI reads the provider under the same cap: `bridge add` and `bridge list` say why it does not answer.
        assert f"evil: does not answer: skill provider 'evil' ({server.url}) {TOO_LARGE}" in configured(
            checkout, server
        )
        [row] = json.loads(bee("skill", "bridge", "list", "--json", cwd=checkout))
        assert (row["answers"], row["code"]) == (False, "result_too_large")
        async with host(checkout) as running:
            body = await running.error("bee_skill_search", query="git workflow")
            assert body["code"] == "result_too_large" and TOO_LARGE in body["error"], body
            got = await running.ok("bee_skill_get", path="evil/git-workflow")  # skills/get is not the listing
            assert got["body"] == GOOD
            assert running.peak_kib() < PEAK_KIB, running.peak_kib()
        assert_cut(server, "skills/list", 3)  # bridge add, bridge list and the search each stopped reading it


@pytest.mark.parametrize("method", ["skills/list", "resources/read"])
async def test_an_endless_drip_ends_at_the_provider_timeout_and_the_host_keeps_serving(
    checkout: Path, tmp_path: Path, method: str
) -> None:
    misbehave = {method: {"how": "drip", "seconds": 0.5, "sse": method == "skills/list"}}
    with HostileProvider(spec(misbehave), tmp_path) as server:
        configured(checkout, server)
        async with host(checkout, env={"BEE_SKILL_PROVIDER_TIMEOUT_SECONDS": "2"}) as running:
            tool, arguments = (
                ("bee_skill_search", {"query": "git"})
                if method == "skills/list"
                else ("bee_skill_get", {"path": "evil/git-workflow"})
            )
            body = await running.error(tool, **arguments)
            assert (body["code"], body["retryable"]) == ("unavailable", True), body
            assert f"skill provider 'evil' ({server.url}) did not answer within 2 seconds" in body["error"]
            # Then the host answers the next call, which does not touch the provider.
            assert (await running.error("bee_skill_get", path="nowhere/x"))["code"] == "not_found"
            assert running.peak_kib() < PEAK_KIB


async def test_bytes_that_do_not_match_the_manifest_are_never_served(checkout: Path, tmp_path: Path) -> None:
    wrong = "sha256:" + hashlib.sha256(b"something else").hexdigest()
    skills: list[dict[str, Any]] = [
        {"path": "git-workflow", "body": GOOD, "digest": wrong},
        {"path": "release-notes", "body": skill_md("release-notes"), "size": 3},
        {"path": "huge", "body": skill_md("huge"), "size": SKILL_BODY_MAX_BYTES + 1},
        {"path": "fine", "body": skill_md("fine")},
    ]
    with HostileProvider(spec({}, *skills), tmp_path) as server:
        configured(checkout, server)
        async with host(checkout) as running:
            body = await running.error("bee_skill_get", path="evil/git-workflow")
            assert body["code"] == "hash_mismatch" and "does not match its manifest digest" in body["error"]
            assert body["details"]["expected"] == wrong and "Branch and commit" not in json.dumps(body)
            body = await running.error("bee_skill_resolve", path="evil/release-notes")
            assert body["code"] == "hash_mismatch" and "not the 3 its manifest gives" in body["error"]
            body = await running.error("bee_skill_get", path="evil/huge")
            assert body["code"] == "result_too_large" and f"is {SKILL_BODY_MAX_BYTES + 1} bytes" in body["error"]
            found = await running.ok("bee_skill_search", query="fine huge", limit=20)
            assert [match["path"] for match in found["matches"]] == ["evil/fine"]
            assert [item["path"] for item in found["unreadable"]] == ["evil/huge"]  # over the limit, by its size
            assert (await running.ok("bee_skill_get", path="evil/fine"))["body"] == skill_md("fine")
    read = [answer["method"] for answer in server.answers() if answer["method"] == "resources/read"]
    assert len(read) == 3  # git-workflow, release-notes and fine: the oversized skill's body was never asked for
