"""`bee skill bridge add|remove|list` through the click entry points."""

import json

import pytest
from click.testing import CliRunner

from bee_cli import make_cli
from bee_core.cli import register as register_core
from tests.core.skills_helpers import skill_md, write_skill


@pytest.fixture
def checkout(tmp_path):
    target = tmp_path / "checkout"
    target.mkdir()
    return target


@pytest.fixture
def run(checkout):
    cli = make_cli([register_core])

    def invoke(*args, env=None):
        return CliRunner().invoke(cli, [*args, "--checkout", str(checkout)], env=env)

    return invoke


@pytest.fixture
def skills(tmp_path):
    root = tmp_path / "skills"
    write_skill(root, "git-workflow", skill_md("git-workflow"))
    write_skill(root, "broken", "no frontmatter\n")
    return root


def bridge_file(checkout):
    return checkout / ".bee" / "skills" / "bridge.json"


def test_add_needs_an_instance(run, skills):
    result = run("skill", "bridge", "add", "local", "--dir", str(skills))
    assert result.exit_code == 1 and "run `bee init` first" in result.output


def test_add_list_and_remove_a_directory_and_an_mcp_server(run, checkout, skills, tmp_path):
    assert run("init").exit_code == 0
    added = run("skill", "bridge", "add", "local", "--dir", str(skills))
    assert added.exit_code == 0, added.output
    assert "Added skill provider 'local' (directory)" in added.output
    assert "local: answers: 1 skills, 1 unreadable" in added.output
    token_file = tmp_path / "token"
    token_file.write_text("t\n")
    added = run("skill", "bridge", "add", "team", "--mcp", "http://127.0.0.1:9/mcp", "--token-file", str(token_file))
    assert added.exit_code == 0, added.output
    assert "team: does not answer: skill provider 'team'" in added.output  # added all the same

    document = json.loads(bridge_file(checkout).read_text())
    assert document == {
        "version": 1,
        "providers": [
            {"name": "local", "kind": "directory", "path": str(skills.resolve())},
            {"name": "team", "kind": "mcp", "url": "http://127.0.0.1:9/mcp", "tokenFile": str(token_file.resolve())},
        ],
    }
    listed = run("skill", "bridge", "list")
    assert listed.exit_code == 0
    assert f"local  directory  {skills.resolve()}" in listed.output and "answers: 1 skills" in listed.output
    assert f"(token from {token_file.resolve()})" in listed.output and "does not answer" in listed.output
    rows = json.loads(run("skill", "bridge", "list", "--json").output)
    assert [(r["name"], r["answers"]) for r in rows] == [("local", True), ("team", False)]
    assert rows[1]["code"] == "unavailable" and rows[0]["skills"] == 1

    assert run("skill", "bridge", "remove", "team").exit_code == 0
    assert [p["name"] for p in json.loads(bridge_file(checkout).read_text())["providers"]] == ["local"]
    missing = run("skill", "bridge", "remove", "team")
    assert missing.exit_code == 1 and "no skill provider named 'team' (configured: local)" in missing.output


def test_the_token_is_never_stored_only_where_to_read_it(run, checkout):
    assert run("init").exit_code == 0
    added = run(
        "skill",
        "bridge",
        "add",
        "team",
        "--mcp",
        "http://127.0.0.1:9/mcp",
        "--token-env",
        "TEAM_TOKEN",
        env={"TEAM_TOKEN": "secret-token-value"},
    )
    assert added.exit_code == 0, added.output
    assert "secret-token-value" not in bridge_file(checkout).read_text()
    assert json.loads(bridge_file(checkout).read_text())["providers"][0]["tokenEnv"] == "TEAM_TOKEN"
    assert "token from $TEAM_TOKEN" in run("skill", "bridge", "list").output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["Local", "--dir", "{skills}"], "provider name 'Local' must be"),
        (["local"], "give exactly one of --dir PATH and --mcp URL"),
        (["local", "--dir", "{skills}", "--mcp", "http://x/mcp"], "give exactly one"),
        (["local", "--dir", "{skills}", "--token-env", "X"], "are for --mcp providers"),
        (["team", "--mcp", "ftp://x/mcp"], "is not an http:// or https:// URL"),
        (["team", "--mcp", "http://x/mcp", "--token-env", "NOT A NAME"], "is not an environment variable name"),
        (["local", "--dir", "{missing}"], "does not exist"),
    ],
)
def test_bad_additions_are_refused_and_change_nothing(run, checkout, skills, tmp_path, args, message):
    assert run("init").exit_code == 0
    filled = [a.format(skills=skills, missing=tmp_path / "missing") for a in args]
    result = run("skill", "bridge", "add", *filled)
    assert result.exit_code == 2 and message in result.output, result.output
    assert not bridge_file(checkout).exists()


def test_a_name_is_added_once(run, skills):
    assert run("init").exit_code == 0
    assert run("skill", "bridge", "add", "local", "--dir", str(skills)).exit_code == 0
    again = run("skill", "bridge", "add", "local", "--dir", str(skills))
    assert again.exit_code == 2 and "a provider named 'local' exists" in again.output


def test_list_without_providers_says_how_to_add_one(run):
    assert run("init").exit_code == 0
    assert "Add one with `bee skill bridge add NAME --dir PATH`" in run("skill", "bridge", "list").output


def test_a_damaged_bridge_file_is_reported(run, checkout):
    assert run("init").exit_code == 0
    bridge_file(checkout).parent.mkdir(parents=True)
    bridge_file(checkout).write_text('{"version": 1, "providers": [{"name": "x", "kind": "ftp"}]}')
    result = run("skill", "bridge", "list")
    assert result.exit_code == 1 and "provider kind 'ftp' is not 'directory' or 'mcp'" in result.output
