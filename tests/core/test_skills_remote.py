"""The skill tools over MCP skill servers, in process: a real `bee tracker serve` with real tokens, and a
third-party skills server that misbehaves on request (tests/harness/skills_server.py)."""

import hashlib
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import ErrorCode
from bee_core.skills.bridge import ENV_PROVIDER_TIMEOUT
from bee_core.skills.config import McpConfig
from bee_tracker import skills as tracker_skills
from tests.core.skills_helpers import bridged_checkout, call, failure, skill_md
from tests.harness.skills_server import SkillsServer
from tests.harness.tracker import TrackerProcess

pytestmark = pytest.mark.e2e

TRACKER_SKILL = f"team/{tracker_skills.SKILL_NAME}"


@pytest.fixture
def tracker(tracker_factory: Callable[..., TrackerProcess], tmp_path: Path) -> TrackerProcess:
    return tracker_factory(str(tmp_path / "tracker.db"))


def test_the_trackers_skill_is_searched_read_and_verified(
    tracker: TrackerProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAM_TOKEN", tracker.token("alice@example.com"))
    ctx = bridged_checkout(tmp_path, McpConfig("team", tracker.url, token_env="TEAM_TOKEN"))
    found = call(ctx, "search", query="shared backlog claim")
    assert [m["path"] for m in found["matches"]] == [TRACKER_SKILL] and found["unreadable"] == []
    [served] = tracker_skills.bundled()[0].files
    got = call(ctx, "get", path=TRACKER_SKILL)
    assert got["body"].encode() == served.data and got["sha256"] == served.digest
    assert got["provider"] == "team" and got["prerequisites"] == []
    assert call(ctx, "resolve", path=TRACKER_SKILL)["skills"] == [got]
    error = failure(ctx, "get", path="team/nope")
    assert error.code is ErrorCode.NOT_FOUND and "does not serve skill://nope/SKILL.md" in error.message


def test_a_token_file_works_and_refused_or_missing_tokens_are_unauthorized(
    tracker: TrackerProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(tracker.token("alice@example.com") + "\n")
    token_file.chmod(0o600)  # a token file is read only while it is private
    ctx = bridged_checkout(tmp_path, McpConfig("team", tracker.url, token_file=str(token_file)))
    assert call(ctx, "get", path=TRACKER_SKILL)["name"] == tracker_skills.SKILL_NAME
    token_file.write_text("not-a-jwt")
    error = failure(ctx, "get", path=TRACKER_SKILL)
    assert (
        error.code is ErrorCode.UNAUTHORIZED
        and "refused the token from" in error.message
        and "HTTP 401" in error.message
    )
    token_file.unlink()
    error = failure(ctx, "search", query="backlog")
    assert error.code is ErrorCode.UNAUTHORIZED and "cannot read its token file" in error.message

    ctx = bridged_checkout(tmp_path, McpConfig("team", tracker.url, token_env="UNSET_TOKEN_VARIABLE"))
    monkeypatch.delenv("UNSET_TOKEN_VARIABLE", raising=False)
    error = failure(ctx, "get", path=TRACKER_SKILL)
    assert error.code is ErrorCode.UNAUTHORIZED and "$UNSET_TOKEN_VARIABLE, which is not set" in error.message


def test_a_stopped_tracker_is_a_retryable_error_naming_the_provider(
    tracker: TrackerProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAM_TOKEN", tracker.token("alice@example.com"))
    ctx = bridged_checkout(tmp_path, McpConfig("team", tracker.url, token_env="TEAM_TOKEN"))
    tracker.stop()
    for tool, args in [("search", {"query": "backlog"}), ("get", {"path": TRACKER_SKILL})]:
        error = failure(ctx, tool, **args)
        assert error.code is ErrorCode.UNAVAILABLE and error.retryable is True
        assert "skill provider 'team'" in error.message and tracker.url in error.message


def test_a_provider_that_never_answers_is_unavailable_after_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as silent:  # accepts connections (the kernel's backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        monkeypatch.setenv(ENV_PROVIDER_TIMEOUT, "1")
        ctx = bridged_checkout(tmp_path, McpConfig("slow", url))
        started = time.monotonic()
        error = failure(ctx, "search", query="anything")
        assert time.monotonic() - started < 15  # bounded by the timeout, never a hang
    assert error.code is ErrorCode.UNAVAILABLE and error.retryable is True
    assert "skill provider 'slow'" in error.message and "did not answer" in error.message


GOOD = skill_md("git-workflow", "Branch and commit the way this team does.")


def serve(tmp_path: Path, *skills: dict[str, Any], **options: Any) -> SkillsServer:
    return SkillsServer({"skills": list(skills), **options}, tmp_path)


def test_content_that_fails_its_manifest_digest_is_never_served(tmp_path: Path) -> None:
    wrong = "sha256:" + hashlib.sha256(b"something else").hexdigest()
    with serve(tmp_path, {"path": "git-workflow", "body": GOOD, "digest": wrong}) as server:
        ctx = bridged_checkout(tmp_path, McpConfig("third", server.url))
        for tool in ("get", "resolve"):
            error = failure(ctx, tool, path="third/git-workflow")
            assert error.code is ErrorCode.HASH_MISMATCH and "does not match its manifest digest" in error.message
            assert error.details is not None
            assert error.details["expected"] == wrong and "body" not in error.details
        # The listing itself needs no body, so search still finds it; reading it is what is refused.
        assert [m["path"] for m in call(ctx, "search", query="git")["matches"]] == ["third/git-workflow"]


def test_frontmatter_that_differs_from_the_listing_is_never_served(tmp_path: Path) -> None:
    listed = {"name": "git-workflow", "description": "Something harmless."}
    with serve(tmp_path, {"path": "git-workflow", "body": GOOD, "frontmatter": listed}) as server:
        ctx = bridged_checkout(tmp_path, McpConfig("third", server.url))
        error = failure(ctx, "get", path="third/git-workflow")
        assert error.code is ErrorCode.HASH_MISMATCH and "differs from the frontmatter its listing" in error.message


def test_skills_without_a_manifest_or_with_malformed_frontmatter_are_unreadable(tmp_path: Path) -> None:
    bad = {"path": "odd", "body": skill_md("odd"), "frontmatter": {"name": "odd"}}
    with serve(tmp_path, {"path": "git-workflow", "body": GOOD, "manifest": False}, bad) as server:
        ctx = bridged_checkout(tmp_path, McpConfig("third", server.url))
        found = call(ctx, "search", query="git odd")
        assert found["matches"] == []
        assert {u["path"]: u["error"] for u in found["unreadable"]}.keys() == {"third/git-workflow", "third/odd"}
        error = failure(ctx, "get", path="third/git-workflow")
        assert error.code is ErrorCode.UNSUPPORTED and "without a manifest of digests" in error.message
        error = failure(ctx, "get", path="third/odd")
        assert error.code is ErrorCode.INVALID_ARGUMENT and "needs a description" in error.message


def test_paged_listings_are_read_whole_and_prerequisites_resolve_over_mcp(tmp_path: Path) -> None:
    notes = skill_md("release-notes", "Write release notes.", prerequisites=["git-workflow"])
    with serve(
        tmp_path,
        {"path": "git-workflow", "body": GOOD},
        {"path": "team/release-notes", "body": notes},
        {"path": "deploy", "body": skill_md("deploy", prerequisites=["team/release-notes"])},
        pageSize=1,
    ) as server:
        ctx = bridged_checkout(tmp_path, McpConfig("third", server.url))
        assert call(ctx, "search", query="release deploy git", limit=20)["total"] == 3
        chain = call(ctx, "resolve", path="third/deploy")
        assert [s["path"] for s in chain["skills"]] == [
            "third/git-workflow",
            "third/team/release-notes",
            "third/deploy",
        ]


def test_a_server_without_the_skills_extension_is_unsupported(tmp_path: Path) -> None:
    with serve(tmp_path, {"path": "git-workflow", "body": GOOD}, declare=False) as server:
        ctx = bridged_checkout(tmp_path, McpConfig("third", server.url))
        error = failure(ctx, "search", query="git")
        assert error.code is ErrorCode.UNSUPPORTED and "does not declare the Skills extension" in error.message
