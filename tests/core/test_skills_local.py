"""The skill tools over local Agent Skills directories, in process: search, get, resolve, and every refusal."""

import hashlib
import json
from pathlib import Path

import pytest

from bee_contracts import ErrorCode
from bee_contracts.limits import SKILL_BODY_MAX_BYTES, SKILL_CHAIN_MAX
from bee_contracts.userconfig import UserSettings
from bee_core.context import CoreContext
from bee_core.skills.config import DirectoryConfig
from tests.core.skills_helpers import bridged_checkout, call, failure, skill_md, write_skill


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "git-workflow", skill_md("git-workflow", "Branch and commit the way this team does."))
    write_skill(
        root,
        "team/release-notes",
        skill_md("release-notes", "Write release notes from merged pull requests.", prerequisites=["git-workflow"]),
    )
    write_skill(
        root, "deploy", skill_md("deploy", "Ship a release.", prerequisites=["team/release-notes", "git-workflow"])
    )
    return root


@pytest.fixture
def ctx(tmp_path: Path, skills: Path) -> CoreContext:
    return bridged_checkout(tmp_path, DirectoryConfig("local", str(skills)))


def test_search_ranks_name_matches_first_and_discloses_the_total(ctx: CoreContext) -> None:
    found = call(ctx, "search", query="release notes", limit=1)
    assert found["total"] == 2 and found["unreadable"] == []
    [best] = found["matches"]
    assert best == {
        "path": "local/team/release-notes",
        "name": "release-notes",
        "description": "Write release notes from merged pull requests.",
        "provider": "local",
        "score": 1.0,
    }
    everything = call(ctx, "search", query="release notes", limit=20)["matches"]
    assert [m["path"] for m in everything] == ["local/team/release-notes", "local/deploy"]
    assert everything[1]["score"] < 1.0
    assert call(ctx, "search", query="kubernetes")["matches"] == []


def test_search_lists_unreadable_skills_instead_of_failing(ctx: CoreContext, skills: Path) -> None:
    write_skill(skills, "broken", "---\nname: [oops\n---\n")
    found = call(ctx, "search", query="release")
    assert [m["path"] for m in found["matches"]] == ["local/team/release-notes", "local/deploy"]
    [unreadable] = found["unreadable"]
    assert unreadable["path"] == "local/broken" and "not valid YAML" in unreadable["error"]


def test_search_needs_words_to_search_by(ctx: CoreContext) -> None:
    error = failure(ctx, "search", query="the of a")
    assert error.code is ErrorCode.INVALID_ARGUMENT and "no words to search by" in error.message


def test_get_returns_one_complete_body_and_names_its_prerequisites_unread(ctx: CoreContext, skills: Path) -> None:
    raw = (skills / "team/release-notes/SKILL.md").read_bytes()
    got = call(ctx, "get", path="local/team/release-notes")
    assert got == {
        "path": "local/team/release-notes",
        "name": "release-notes",
        "description": "Write release notes from merged pull requests.",
        "provider": "local",
        "prerequisites": ["local/git-workflow"],
        "body": raw.decode(),
        "sha256": "sha256:" + hashlib.sha256(raw).hexdigest(),
        "bytes": len(raw),
    }
    assert call(ctx, "get", path="local/team/release-notes/SKILL.md") == got  # the file's own path works too


def test_resolve_returns_dependencies_first_each_once(ctx: CoreContext) -> None:
    chain = call(ctx, "resolve", path="local/deploy")
    assert chain["path"] == "local/deploy"
    assert [s["path"] for s in chain["skills"]] == ["local/git-workflow", "local/team/release-notes", "local/deploy"]
    assert all(s["body"].startswith("---\nname: ") for s in chain["skills"])
    assert call(ctx, "resolve", path="local/git-workflow")["skills"] == [call(ctx, "get", path="local/git-workflow")]


@pytest.mark.parametrize(
    ("path", "code", "text"),
    [
        ("local/nope", ErrorCode.NOT_FOUND, "no skill local/nope"),
        ("elsewhere/git-workflow", ErrorCode.NOT_FOUND, "no skill provider 'elsewhere' is configured"),
        ("git-workflow", ErrorCode.INVALID_ARGUMENT, "names no provider"),
        ("local/../skills/git-workflow", ErrorCode.OUTSIDE_ROOT, "climbs out with '..'"),
        ("local//etc", ErrorCode.OUTSIDE_ROOT, "empty or '.' segment"),
        ("local/./git-workflow", ErrorCode.OUTSIDE_ROOT, "empty or '.' segment"),
        ("local/a\\b", ErrorCode.OUTSIDE_ROOT, "use letters, digits"),
    ],
)
@pytest.mark.parametrize("tool", ["get", "resolve"])
def test_bad_paths_are_clear_errors(ctx: CoreContext, tool: str, path: str, code: ErrorCode, text: str) -> None:
    error = failure(ctx, tool, path=path)
    assert error.code is code and text in error.message, error.message


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("# no frontmatter\n", "must start with a '---' line"),
        ("---\nname: x\n", "is not closed by a '---' line"),
        ("---\nname: [oops\n---\n", "is not valid YAML"),
        ("---\n- a list\n---\n", "is not a mapping of fields"),
        ("---\nname: &n skill\ndescription: *n\n---\n", "aliases (*name) are not allowed"),
        ("---\nname: !!binary aGk=\ndescription: d\n---\n", "holds a bytes at name"),
        ("---\nname: Skill\ndescription: d\n---\n", "lower-case letters"),
        ("---\nname: other\ndescription: d\n---\n", "not the name of its directory"),
        ("---\nname: skill\n---\n", "needs a description"),
        ("---\nname: skill\ndescription: d\nprerequisites: {a: 1}\n---\n", "prerequisites that are not"),
    ],
)
def test_malformed_frontmatter_is_a_clear_error(ctx: CoreContext, skills: Path, text: str, problem: str) -> None:
    write_skill(skills, "skill", text)
    error = failure(ctx, "get", path="local/skill")
    assert error.code is ErrorCode.INVALID_ARGUMENT and problem in error.message, error.message
    assert "skill local/skill: the SKILL.md frontmatter" in error.message and error.details == {"path": "local/skill"}


def test_a_body_that_is_not_utf8_is_refused(ctx: CoreContext, skills: Path) -> None:
    write_skill(skills, "skill", skill_md("skill").encode() + b"\xff\xfe")
    error = failure(ctx, "get", path="local/skill")
    assert error.code is ErrorCode.INVALID_ARGUMENT and "not UTF-8" in error.message


def test_dates_in_frontmatter_are_text_and_extra_fields_pass(ctx: CoreContext, skills: Path) -> None:
    write_skill(skills, "dated", "---\nname: dated\ndescription: d\nmetadata: {updated: 2024-05-01}\n---\n")
    assert call(ctx, "get", path="local/dated")["name"] == "dated"


def test_a_body_over_the_limit_fails_unread(ctx: CoreContext, skills: Path) -> None:
    write_skill(skills, "huge", skill_md("huge", body="x" * SKILL_BODY_MAX_BYTES))
    error = failure(ctx, "get", path="local/huge")
    assert error.details is not None
    assert error.code is ErrorCode.RESULT_TOO_LARGE and error.details["limitBytes"] == SKILL_BODY_MAX_BYTES
    assert "local/huge" in [u["path"] for u in call(ctx, "search", query="huge")["unreadable"]]


def test_symlinks_out_of_the_skill_directory_are_refused(ctx: CoreContext, skills: Path, tmp_path: Path) -> None:
    (skills / "borrowed").mkdir()
    (skills / "borrowed" / "SKILL.md").symlink_to(skills / "git-workflow" / "SKILL.md")
    (tmp_path / "outside" / "escaped").mkdir(parents=True)
    write_skill(tmp_path / "outside", "escaped", skill_md("escaped"))
    (skills / "escaped").symlink_to(tmp_path / "outside" / "escaped")
    for path in ("local/borrowed", "local/escaped"):
        error = failure(ctx, "get", path=path)
        assert error.code is ErrorCode.OUTSIDE_ROOT and "leads out of the skill directory" in error.message
    # A symlinked skill directory is never listed either.
    assert [u["path"] for u in call(ctx, "search", query="borrowed")["unreadable"]] == ["local/borrowed"]
    assert call(ctx, "search", query="escaped")["matches"] == []


def test_a_prerequisite_cycle_is_spelled_out(ctx: CoreContext, skills: Path) -> None:
    write_skill(skills, "a", skill_md("a", prerequisites=["b"]))
    write_skill(skills, "b", skill_md("b", prerequisites=["c"]))
    write_skill(skills, "c", skill_md("c", prerequisites=["b"]))
    error = failure(ctx, "resolve", path="local/a")
    assert error.code is ErrorCode.INVALID_ARGUMENT
    assert "form a cycle: local/b -> local/c -> local/b" in error.message
    assert call(ctx, "get", path="local/a")["prerequisites"] == ["local/b"]  # get does not resolve


def test_a_missing_prerequisite_names_the_skill_that_declares_it(ctx: CoreContext, skills: Path) -> None:
    write_skill(skills, "a", skill_md("a", prerequisites=["git-workflow", "gone"]))
    error = failure(ctx, "resolve", path="local/a")
    assert error.code is ErrorCode.NOT_FOUND
    assert "skill local/a declares the prerequisite 'gone'" in error.message
    assert error.details == {"path": "local/a", "prerequisite": "local/gone"}


def test_a_prerequisite_that_escapes_the_provider_is_refused(ctx: CoreContext, skills: Path) -> None:
    write_skill(skills, "a", skill_md("a", prerequisites=["../elsewhere"]))
    for tool in ("get", "resolve"):
        error = failure(ctx, tool, path="local/a")
        assert error.code is ErrorCode.OUTSIDE_ROOT and "'../elsewhere' climbs out" in error.message


def test_a_chain_longer_than_the_limit_fails(ctx: CoreContext, skills: Path) -> None:
    for i in range(SKILL_CHAIN_MAX + 1):
        write_skill(skills, f"s{i}", skill_md(f"s{i}", prerequisites=[f"s{i + 1}"] if i < SKILL_CHAIN_MAX else []))
    error = failure(ctx, "resolve", path="local/s0")
    assert error.code is ErrorCode.INVALID_ARGUMENT and f"beyond {SKILL_CHAIN_MAX} skills" in error.message
    assert len(call(ctx, "resolve", path="local/s1")["skills"]) == SKILL_CHAIN_MAX


def test_a_chain_whose_bodies_cannot_fit_one_result_fails(ctx: CoreContext, skills: Path) -> None:
    big = "y" * (SKILL_BODY_MAX_BYTES // 2)
    write_skill(skills, "p1", skill_md("p1", body=big))
    write_skill(skills, "p2", skill_md("p2", body=big))
    write_skill(skills, "top", skill_md("top", prerequisites=["p1", "p2"]))
    error = failure(ctx, "resolve", path="local/top")
    assert error.code is ErrorCode.RESULT_TOO_LARGE


@pytest.mark.parametrize("tool", ["search", "get", "resolve"])
def test_without_a_bridge_each_tool_says_how_to_configure_one(tmp_path: Path, tool: str) -> None:
    ctx = bridged_checkout(tmp_path)
    error = failure(ctx, tool, **({"query": "x"} if tool == "search" else {"path": "local/x"}))
    assert error.code is ErrorCode.BRIDGE_NOT_CONFIGURED
    assert "`bee skill bridge add NAME --dir PATH`" in error.message and error.details == {
        "command": "bee skill bridge add"
    }
    (tmp_path / "checkout" / ".bee" / "instance.json").unlink()
    assert "run `bee init`" in failure(ctx, tool, **({"query": "x"} if tool == "search" else {"path": "l/x"})).message


def test_a_damaged_bridge_file_is_internal_and_not_retryable(ctx: CoreContext) -> None:
    settings = UserSettings(ctx.instance.root)
    for content in ("{oops", json.dumps({"version": 9}), json.dumps({"version": 1, "providers": [{"token": "t"}]})):
        settings.write("bridge.json", content.encode())
        error = failure(ctx, "search", query="release")
        assert error.code is ErrorCode.INTERNAL and error.retryable is False
        assert "skill bridge configuration is damaged" in error.message
    assert "tokens are never stored" in error.message


def test_a_missing_provider_directory_is_named(tmp_path: Path) -> None:
    ctx = bridged_checkout(tmp_path, DirectoryConfig("gone", str(tmp_path / "nowhere")))
    error = failure(ctx, "search", query="release")
    assert error.code is ErrorCode.UNAVAILABLE and "'gone'" in error.message and error.retryable is False


def test_several_providers_keep_their_skills_apart(tmp_path: Path, skills: Path) -> None:
    other = tmp_path / "other"
    write_skill(other, "git-workflow", skill_md("git-workflow", "Another team's git workflow."))
    ctx = bridged_checkout(tmp_path, DirectoryConfig("local", str(skills)), DirectoryConfig("other", str(other)))
    found = call(ctx, "search", query="git workflow")["matches"]
    assert [m["path"] for m in found] == ["local/git-workflow", "other/git-workflow"]
    assert call(ctx, "get", path="other/git-workflow")["description"] == "Another team's git workflow."


@pytest.mark.parametrize("tool", ["search", "get", "resolve"])
def test_a_bridge_the_checkout_ships_is_ignored_and_each_tool_says_how_to_adopt_it(
    tmp_path: Path, skills: Path, tool: str
) -> None:
    ctx = bridged_checkout(tmp_path)
    shipped = ctx.instance.path("skills", "bridge.json")
    shipped.parent.mkdir()
    shipped.write_text(json.dumps({"version": 1, "providers": [DirectoryConfig("local", str(skills)).to_json()]}))
    error = failure(ctx, tool, **({"query": "release"} if tool == "search" else {"path": "local/deploy"}))
    assert error.code is ErrorCode.BRIDGE_NOT_CONFIGURED
    assert error.message.endswith(
        f"; this checkout ships a skill bridge configuration (skill servers and their tokens) in {shipped}; Bee "
        "ignores it. To adopt it on purpose after reading it, run `bee skill bridge trust`"
    )
    assert error.details == {
        "command": "bee skill bridge add",
        "shipped": str(shipped),
        "adopt": "bee skill bridge trust",
    }


def test_a_bridge_configuration_others_may_write_is_refused_naming_the_fix(ctx: CoreContext) -> None:
    path = UserSettings(ctx.instance.root).path("bridge.json")
    path.chmod(0o664)
    error = failure(ctx, "search", query="release")
    assert error.code is ErrorCode.FORBIDDEN and error.retryable is False
    assert f"Bee refuses its per-user settings {path}: group or others may write it (mode 0664)" in error.message
    assert error.message.endswith(f"chmod 600 {path}")
    path.chmod(0o600)
    assert call(ctx, "search", query="release")["total"] == 2
