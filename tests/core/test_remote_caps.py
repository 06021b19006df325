"""Remote answers are bounded while they stream: bee_core.remote's byte cap and time bounds, and what the skills
client checks of what a provider sends, against a hostile provider on 127.0.0.1 (tests/harness/hostile_provider.py).

The same refusals through the real `bee mcp serve`, with its memory measured, are in
tests/e2e/test_hostile_provider.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest

from bee_contracts import BeeError, ErrorCode
from bee_contracts.limits import MAX_FRAME_BYTES, REMOTE_ANSWER_MAX_BYTES, SKILL_BODY_MAX_BYTES
from bee_core import remote
from bee_core.collab import tracker
from bee_core.skills.bridge import Bridge
from bee_core.skills.config import McpConfig
from bee_core.skills.model import Loaded
from bee_core.skills.remote import MAX_MANIFEST_FILES, MAX_SKILLS, McpProvider
from bee_hostkit import Deadline
from tests.core.skills_helpers import skill_md
from tests.harness.hostile_provider import HostileProvider

pytestmark = pytest.mark.e2e

T = TypeVar("T")

GOOD = skill_md("git-workflow", "Branch and commit the way this team does.")
TOKEN = "abc.def.ghi"
#: What a hostile answer may have written before Bee closed the connection: the cap, plus what the kernel's socket
#: buffers on both ends held meanwhile (a few MiB on loopback); far below the hundreds of MB it had to send.
CUT_WITHIN = 32 * 1024 * 1024


def hostile(tmp_path: Path, misbehave: dict[str, Any] | None = None, *skills: dict[str, Any]) -> HostileProvider:
    return HostileProvider(
        {"skills": list(skills) or [{"path": "git-workflow", "body": GOOD}], "misbehave": misbehave or {}}, tmp_path
    )


def guarded(work: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``work(*args)`` run to completion, given up after a minute (a guard, never the bound under test)."""

    async def run() -> T:
        with anyio.fail_after(60):
            return await work(*args)

    return anyio.run(run)


def source_of(server: HostileProvider, within: Deadline | float = 10.0) -> Callable[[Callable[..., Awaitable[T]]], T]:
    """Run ``use(source)`` on an open session with the provider, bounded by ``within``."""
    provider = McpProvider(McpConfig("evil", server.url))

    def run(use: Callable[..., Awaitable[T]]) -> T:
        async def go() -> T:
            async with provider.open(within) as source:
                return await use(source)

        return guarded(go)

    return run


def load(server: HostileProvider, within: Deadline | float = 10.0, skill_path: str = "git-workflow") -> Loaded:
    loaded: Loaded = source_of(server, within)(lambda source: source.load(skill_path))
    return loaded


def refused(work: Any, *args: Any) -> BeeError:
    with pytest.raises(BeeError) as caught:
        work(*args)
    return caught.value


def assert_cut(server: HostileProvider, method: str) -> None:
    """The hostile answer to ``method`` was cut off by Bee long before its end."""
    [answer] = server.misbehaved(method)
    assert answer["cut"] is True and answer["sent"] < CUT_WITHIN, answer


def ready(server: HostileProvider, deadline: Deadline) -> dict[str, Any]:
    """The tracker client's call of a tool, as bee_plan_show makes them (pytest's timeout is its give-up guard)."""
    return tracker.run(server.url, TOKEN, deadline, lambda t: t.call("bee_tracker_ready", {}))


# -- the cap, for every caller -----------------------------------------------------------------------------------


@pytest.mark.parametrize("sse", [False, True], ids=["json", "sse"])
def test_a_tracker_answer_over_the_cap_is_result_too_large_and_the_connection_is_cut(tmp_path: Path, sse: bool) -> None:
    with hostile(tmp_path, {"tools/call": {"how": "huge", "bytes": 150_000_000, "sse": sse}}) as server:
        error = refused(ready, server, Deadline(30))
        assert (error.code, error.retryable) == (ErrorCode.RESULT_TOO_LARGE, False)
        assert error.message == (
            f"the tracker at {server.url} sent an answer of more than {REMOTE_ANSWER_MAX_BYTES} bytes, more than Bee "
            "reads of one; it stopped reading there and nothing was delivered"
        )
        assert error.details == {"tracker": server.url, "limitBytes": REMOTE_ANSWER_MAX_BYTES}
        assert_cut(server, "tools/call")


def test_the_hostile_server_answers_a_tracker_call_it_does_not_misbehave_on(tmp_path: Path) -> None:
    # The refusals above are the cap's, not the server's: the same call, answered correctly, succeeds.
    with hostile(tmp_path) as server:
        assert ready(server, Deadline(30)) == {"ok": True}


@pytest.mark.parametrize(("size", "passes"), [(REMOTE_ANSWER_MAX_BYTES, True), (REMOTE_ANSWER_MAX_BYTES + 1, False)])
def test_the_cap_is_exact_at_its_byte(tmp_path: Path, size: int, passes: bool) -> None:
    async def text_length(server: HostileProvider) -> int:
        async with remote.session(remote.Server(server.url, "the server"), None, within=30.0, mode="2026-07-28") as c:
            result = await c.call_tool("anything", {})
            return len(result.content[0].text)  # type: ignore[union-attr]  # the hostile answer is one text

    with hostile(tmp_path, {"tools/call": {"how": "huge", "bytes": size}}) as server:
        if passes:
            assert guarded(text_length, server) > size - 200  # the whole answer, read and parsed
        else:
            assert refused(guarded, text_length, server).code is ErrorCode.RESULT_TOO_LARGE


def test_a_refusal_with_a_huge_body_is_read_under_the_cap_too(tmp_path: Path) -> None:
    with hostile(tmp_path, {"resources/read": {"how": "refuse", "bytes": 200_000_000}}) as server:
        error = refused(load, server)
        assert error.code is ErrorCode.RESULT_TOO_LARGE and "skill provider 'evil'" in error.message


def test_a_compressed_answer_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    # 50 MB of JSON in about 50 KB of gzip: what arrives says nothing about what it expands to.
    with hostile(tmp_path, {"resources/read": {"how": "gzip", "bytes": 50_000_000}}) as server:
        error = refused(load, server)
        assert error.code is ErrorCode.UNSUPPORTED
        assert "answered with a compressed body (Content-Encoding: gzip)" in error.message
        assert "Accept-Encoding: identity" in error.message


# -- time ----------------------------------------------------------------------------------------------------------


def test_a_tracker_answer_that_drips_forever_ends_at_the_callers_deadline(tmp_path: Path) -> None:
    with hostile(tmp_path, {"tools/call": {"how": "drip", "seconds": 0.5}}) as server:
        error = refused(ready, server, Deadline(2))
        assert (error.code, error.retryable) == (ErrorCode.DEADLINE_EXCEEDED, True)
        assert "did not finish answering within the call's 2-second deadline" in error.message


@pytest.mark.parametrize("sse", [False, True], ids=["json", "sse"])
def test_a_skill_body_that_drips_forever_ends_at_the_provider_timeout(tmp_path: Path, sse: bool) -> None:
    with hostile(tmp_path, {"resources/read": {"how": "drip", "seconds": 0.5, "sse": sse}}) as server:
        error = refused(load, server, 2.0)
        assert (error.code, error.retryable) == (ErrorCode.UNAVAILABLE, True)
        assert "did not answer within 2 seconds" in error.message


def test_a_provider_bounded_by_the_calls_deadline_runs_out_of_it_as_deadline_exceeded(tmp_path: Path) -> None:
    # The provider's own timeout is further away than what is left of the call: the call's deadline is the bound.
    with hostile(tmp_path, {"resources/read": {"how": "drip", "seconds": 0.5}}) as server:
        bridge = Bridge([McpProvider(McpConfig("evil", server.url))], timeout=60)
        error = refused(guarded, bridge.get, "evil/git-workflow", Deadline(2))
        assert (error.code, error.retryable) == (ErrorCode.DEADLINE_EXCEEDED, True)
        # … and when the provider's timeout is the nearer bound, running out of it is the provider's unavailable.
        bridge = Bridge([McpProvider(McpConfig("evil", server.url))], timeout=2)
        error = refused(guarded, bridge.get, "evil/git-workflow", Deadline(30))
        assert error.code is ErrorCode.UNAVAILABLE and "did not answer within 2 seconds" in error.message


# -- what the skills client checks ---------------------------------------------------------------------------------


def test_a_full_size_skill_body_fits_the_cap_even_when_every_byte_is_escaped(tmp_path: Path) -> None:
    # A 256 KiB SKILL.md of quotes doubles in JSON: the cap holds a frame, not just a result, so it is served.
    head = skill_md("git-workflow", "Quotes.", body="")
    body = head + '"' * (SKILL_BODY_MAX_BYTES - len(head.encode()))
    assert len(body.encode()) == SKILL_BODY_MAX_BYTES and 2 * SKILL_BODY_MAX_BYTES <= MAX_FRAME_BYTES
    with hostile(tmp_path, None, {"path": "git-workflow", "body": body}) as server:
        loaded = load(server)
    assert loaded.data == body.encode()


def test_a_skill_whose_bytes_are_not_its_manifests_size_or_digest_is_hash_mismatch(tmp_path: Path) -> None:
    wrong = "sha256:" + hashlib.sha256(b"something else").hexdigest()
    skills: list[dict[str, Any]] = [
        {"path": "git-workflow", "body": GOOD, "size": len(GOOD) + 1},
        {"path": "release-notes", "body": skill_md("release-notes"), "digest": wrong},
        {"path": "unsized", "body": skill_md("unsized"), "size": None, "digest": wrong},
    ]
    with hostile(tmp_path, None, *skills) as server:
        error = refused(load, server)
        assert error.code is ErrorCode.HASH_MISMATCH
        assert f"is {len(GOOD)} bytes, not the {len(GOOD) + 1} its manifest gives; nothing was served" in error.message
        assert error.details == {
            "path": "evil/git-workflow",
            "expectedBytes": len(GOOD) + 1,
            "actualBytes": len(GOOD),
        }
        for skill_path in ("release-notes", "unsized"):  # a manifest without a size is still held to its digest
            error = refused(load, server, 10.0, skill_path)
            assert error.code is ErrorCode.HASH_MISMATCH and "does not match its manifest digest" in error.message
            assert error.details is not None and error.details["expected"] == wrong


def test_a_skill_the_manifest_says_is_too_large_is_never_read(tmp_path: Path) -> None:
    with hostile(tmp_path, None, {"path": "git-workflow", "body": GOOD, "size": SKILL_BODY_MAX_BYTES + 1}) as server:
        error = refused(load, server)
        assert error.code is ErrorCode.RESULT_TOO_LARGE and f"is {SKILL_BODY_MAX_BYTES + 1} bytes" in error.message
        assert "resources/read" not in [answer["method"] for answer in server.answers()]


def test_a_base64_body_over_the_limit_is_measured_before_it_is_decoded(tmp_path: Path) -> None:
    big = skill_md("git-workflow", "Big.", body="x" * (300 * 1024))
    with hostile(tmp_path, None, {"path": "git-workflow", "body": big, "blob": True, "size": None}) as server:
        error = refused(load, server)
    assert error.code is ErrorCode.RESULT_TOO_LARGE and f"is {len(big)} bytes" in error.message
    # A base64 body within the limit is decoded and verified like a text one.
    with hostile(tmp_path, None, {"path": "git-workflow", "body": GOOD, "blob": True}) as server:
        assert load(server).data == GOOD.encode()


def test_a_manifest_of_more_files_than_the_skills_extension_allows_is_unsupported(tmp_path: Path) -> None:
    # About 1,400 files in a 100 KB answer: under the cap, over SEP-2640's 512 per skill.
    with hostile(tmp_path, {"skills/get": {"how": "huge", "bytes": 100_000}}) as server:
        error = refused(load, server, 10.0, "filler")
    assert error.code is ErrorCode.UNSUPPORTED
    assert f"over the Skills extension's limit of {MAX_MANIFEST_FILES} per skill" in error.message


def test_a_listing_takes_at_most_max_skills_entries_and_says_it_stopped(tmp_path: Path) -> None:
    # One page of about 1,400 entries, under the cap: the first MAX_SKILLS are taken, and the listing says so.
    with hostile(tmp_path, {"skills/list": {"how": "huge", "bytes": 500_000}}) as server:
        found = source_of(server)(lambda source: source.list())
    assert len(found.skills) + len(found.unreadable) == MAX_SKILLS + 1
    assert found.unreadable[-1] == ("evil/", f"the listing stopped after 50 pages or {MAX_SKILLS} entries")
