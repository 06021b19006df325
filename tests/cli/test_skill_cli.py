"""`bee skill bridge add|remove|list|trust` through the click entry points."""

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from bee_cli import make_cli
from bee_contracts.userconfig import UserSettings
from bee_core.cli import register as register_core
from tests.core.skills_helpers import skill_md, write_skill


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    target = tmp_path / "checkout"
    target.mkdir()
    return target


@pytest.fixture
def run(checkout: Path) -> Callable[..., Result]:
    cli = make_cli([register_core])

    def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
        return CliRunner().invoke(cli, [*args, "--checkout", str(checkout)], env=env)

    return invoke


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "git-workflow", skill_md("git-workflow"))
    write_skill(root, "broken", "no frontmatter\n")
    return root


def bridge_file(checkout: Path) -> Path:
    """Where the bridge configuration lives: the user's settings for the checkout's instance."""
    return UserSettings(checkout / ".bee").path("bridge.json")


def shipped_file(checkout: Path) -> Path:
    """Where a checkout that committed its .bee ships one (and where an older Bee wrote its own)."""
    return checkout / ".bee" / "skills" / "bridge.json"


def ship(checkout: Path, *providers: dict[str, Any]) -> None:
    shipped_file(checkout).parent.mkdir(parents=True, exist_ok=True)
    shipped_file(checkout).write_text(json.dumps({"version": 1, "providers": list(providers)}))


def test_add_needs_an_instance(run: Callable[..., Result], skills: Path) -> None:
    result = run("skill", "bridge", "add", "local", "--dir", str(skills))
    assert result.exit_code == 1 and "run `bee init` first" in result.output


def test_add_list_and_remove_a_directory_and_an_mcp_server(
    run: Callable[..., Result], checkout: Path, skills: Path, tmp_path: Path
) -> None:
    assert run("init").exit_code == 0
    added = run("skill", "bridge", "add", "local", "--dir", str(skills))
    assert added.exit_code == 0, added.output
    assert "Added skill provider 'local' (directory)" in added.output
    assert "local: answers: 1 skills, 1 unreadable" in added.output
    token_file = tmp_path / "token"
    token_file.write_text("t\n")
    token_file.chmod(0o600)
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


def test_the_token_is_never_stored_only_where_to_read_it(run: Callable[..., Result], checkout: Path) -> None:
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
def test_bad_additions_are_refused_and_change_nothing(
    run: Callable[..., Result], checkout: Path, skills: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    assert run("init").exit_code == 0
    filled = [a.format(skills=skills, missing=tmp_path / "missing") for a in args]
    result = run("skill", "bridge", "add", *filled)
    assert result.exit_code == 2 and message in result.output, result.output
    assert not bridge_file(checkout).exists()


def test_a_name_is_added_once(run: Callable[..., Result], skills: Path) -> None:
    assert run("init").exit_code == 0
    assert run("skill", "bridge", "add", "local", "--dir", str(skills)).exit_code == 0
    again = run("skill", "bridge", "add", "local", "--dir", str(skills))
    assert again.exit_code == 2 and "a provider named 'local' exists" in again.output


def test_list_without_providers_says_how_to_add_one(run: Callable[..., Result]) -> None:
    assert run("init").exit_code == 0
    assert "Add one with `bee skill bridge add NAME --dir PATH`" in run("skill", "bridge", "list").output


def test_a_damaged_bridge_file_is_reported(run: Callable[..., Result], checkout: Path) -> None:
    assert run("init").exit_code == 0
    UserSettings(checkout / ".bee").write("bridge.json", b'{"version": 1, "providers": [{"name": "x", "kind": "ftp"}]}')
    result = run("skill", "bridge", "list")
    assert result.exit_code == 1 and "provider kind 'ftp' is not 'directory' or 'mcp'" in result.output


def test_the_configuration_is_the_users_own_and_list_says_where_it_is(
    run: Callable[..., Result], checkout: Path, skills: Path, bee_user: dict[str, str]
) -> None:
    assert run("init").exit_code == 0
    added = run("skill", "bridge", "add", "local", "--dir", str(skills))
    assert added.exit_code == 0 and f"to {bridge_file(checkout)}" in added.output
    assert bridge_file(checkout).is_relative_to(bee_user["XDG_CONFIG_HOME"])
    assert not shipped_file(checkout).exists()  # nothing of it is written into the checkout
    assert oct(bridge_file(checkout).stat().st_mode & 0o777) == "0o600"
    assert oct(bridge_file(checkout).parent.stat().st_mode & 0o777) == "0o700"
    record = json.loads((bridge_file(checkout).parent / "instance.json").read_text())
    assert record["instance"] == os.path.realpath(checkout / ".bee")  # which checkout the folder serves
    listed = run("skill", "bridge", "list")
    assert f"Skill providers of {(checkout / '.bee').resolve()} (from {bridge_file(checkout)}):" in listed.output


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o660])
def test_a_token_file_others_may_read_is_refused_when_added(
    run: Callable[..., Result], checkout: Path, tmp_path: Path, mode: int
) -> None:
    assert run("init").exit_code == 0
    token_file = tmp_path / "token"
    token_file.write_text("t\n")
    token_file.chmod(mode)
    added = run("skill", "bridge", "add", "team", "--mcp", "http://127.0.0.1:9/mcp", "--token-file", str(token_file))
    assert added.exit_code == 2 and f"mode {mode:04o}); chmod 600 {token_file}" in added.output, added.output
    assert not bridge_file(checkout).exists()


def test_a_shipped_bridge_is_ignored_and_every_command_notes_it_once(
    run: Callable[..., Result], checkout: Path, skills: Path
) -> None:
    assert run("init").exit_code == 0
    ship(checkout, {"name": "team", "kind": "mcp", "url": "http://127.0.0.1:9/mcp", "tokenEnv": "GITHUB_TOKEN"})
    note = (
        f"note: this checkout ships a skill bridge configuration (skill servers and their tokens) in "
        f"{shipped_file(checkout)}; Bee ignores it. To adopt it on purpose after reading it, run "
        "`bee skill bridge trust`"
    )
    listed = run("skill", "bridge", "list")
    assert listed.exit_code == 0 and listed.stderr.count(note) == 1 and "No skill providers" in listed.stdout
    assert json.loads(run("skill", "bridge", "list", "--json").stdout) == []
    removed = run("skill", "bridge", "remove", "team")
    assert removed.exit_code == 1 and removed.stderr.count(note) == 1 and "configured: none" in removed.stderr
    added = run("skill", "bridge", "add", "local", "--dir", str(skills))
    assert added.exit_code == 0 and added.stderr.count(note) == 1
    assert [p["name"] for p in json.loads(bridge_file(checkout).read_text())["providers"]] == ["local"]


def test_trust_shows_what_it_adopts_and_adopts_only_on_confirmation(
    run: Callable[..., Result], checkout: Path, skills: Path, tmp_path: Path
) -> None:
    assert run("init").exit_code == 0
    token_file = tmp_path / "token"
    token_file.write_text("t\n")
    token_file.chmod(0o600)
    ship(
        checkout,
        {"name": "team", "kind": "mcp", "url": "http://127.0.0.1:9/mcp", "tokenEnv": "GITHUB_TOKEN"},
        {"name": "files", "kind": "mcp", "url": "https://skills.example/mcp", "tokenFile": str(token_file)},
        {"name": "open", "kind": "mcp", "url": "https://open.example/mcp"},
        {"name": "local", "kind": "directory", "path": str(skills)},
    )
    cli = make_cli([register_core])
    declined = CliRunner().invoke(cli, ["skill", "bridge", "trust", "--checkout", str(checkout)], input="n\n")
    assert declined.exit_code == 1 and "Aborted" in declined.output
    for line in (
        f"{shipped_file(checkout)} asks Bee to use these skill providers for this checkout:",
        "  team: the MCP server at http://127.0.0.1:9/mcp; sends the token in $GITHUB_TOKEN",
        f"  files: the MCP server at https://skills.example/mcp; sends the token read from the file {token_file}",
        "  open: the MCP server at https://open.example/mcp; sends no token",
        f"  local: the skills directory {skills}",
        f"Adopt 4 provider(s) into {bridge_file(checkout)}? [y/N]",
    ):
        assert line in declined.output, declined.output
    assert not bridge_file(checkout).exists()
    assert "ships a skill bridge" in run("skill", "bridge", "list").stderr  # still ignored, still noted

    adopted = CliRunner().invoke(cli, ["skill", "bridge", "trust", "--checkout", str(checkout)], input="y\n")
    assert adopted.exit_code == 0 and "Adopted: team, files, open, local." in adopted.output
    assert [p["name"] for p in json.loads(bridge_file(checkout).read_text())["providers"]] == [
        "team",
        "files",
        "open",
        "local",
    ]
    listed = run("skill", "bridge", "list")
    assert listed.stderr == ""  # adopted as it is: no note
    assert "local  directory" in listed.stdout

    ship(checkout, {"name": "team", "kind": "mcp", "url": "http://127.0.0.1:10/mcp"})  # the checkout changes it
    assert "ships a skill bridge" in run("skill", "bridge", "list").stderr  # so it is noted again
    clash = run("skill", "bridge", "trust", "--yes")
    assert clash.exit_code == 1 and "names providers you configured differently (team); nothing was adopted" in (
        clash.stderr
    )


def test_trust_with_yes_adopts_without_asking_and_adds_to_what_is_there(
    run: Callable[..., Result], checkout: Path, skills: Path, tmp_path: Path
) -> None:
    assert run("init").exit_code == 0
    assert run("skill", "bridge", "add", "mine", "--dir", str(skills)).exit_code == 0
    ship(
        checkout,
        {"name": "mine", "kind": "directory", "path": str(skills.resolve())},
        {"name": "more", "kind": "directory", "path": str(skills)},
    )
    adopted = run("skill", "bridge", "trust", "--yes")
    assert (
        adopted.exit_code == 0
        and "mine: the skills directory" in adopted.stdout
        and "(already yours)" in adopted.stdout
    )
    assert "Adopted: more." in adopted.stdout
    assert [p["name"] for p in json.loads(bridge_file(checkout).read_text())["providers"]] == ["mine", "more"]
    again = run("skill", "bridge", "trust", "--yes")
    assert again.exit_code == 0 and "Adopted: none (every one is configured already)" in again.stdout


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"version": 1, "providers": [{"name": "t", "kind": "mcp", "url": "u", "token": "secret"}]}', "holds a token"),
        ("{oops", "cannot be read as JSON"),
        (
            '{"version": 1, "providers": [{"name": "t", "kind": "mcp", "url": "http://x/mcp", "tokenFile": "rel"}]}',
            "needs an absolute tokenFile",
        ),
    ],
)
def test_a_shipped_file_that_is_not_a_bridge_cannot_be_adopted(
    run: Callable[..., Result], checkout: Path, content: str, problem: str
) -> None:
    assert run("init").exit_code == 0
    shipped_file(checkout).parent.mkdir(parents=True)
    shipped_file(checkout).write_text(content)
    refused = run("skill", "bridge", "trust", "--yes")
    assert refused.exit_code == 1 and "cannot be adopted" in refused.stderr and problem in refused.stderr
    assert "secret" not in refused.output and not bridge_file(checkout).exists()


def test_a_shipped_symlink_or_fifo_is_noted_but_never_opened(
    run: Callable[..., Result], checkout: Path, tmp_path: Path
) -> None:
    assert run("init").exit_code == 0
    shipped_file(checkout).parent.mkdir(parents=True)
    secret = tmp_path / "secret.json"
    secret.write_text('{"version": 1, "providers": []}')
    shipped_file(checkout).symlink_to(secret)
    assert "ships a skill bridge" in run("skill", "bridge", "list").stderr
    refused = run("skill", "bridge", "trust", "--yes")
    assert refused.exit_code == 1 and "cannot be adopted: it is a symlink" in refused.stderr
    shipped_file(checkout).unlink()
    os.mkfifo(shipped_file(checkout))  # would block a reader that waited for a writer
    refused = run("skill", "bridge", "trust", "--yes")
    assert refused.exit_code == 1 and "cannot be adopted: it is not a regular file" in refused.stderr


def test_trust_without_a_shipped_bridge_says_so(run: Callable[..., Result], checkout: Path) -> None:
    assert run("init").exit_code == 0
    said = run("skill", "bridge", "trust")
    assert said.exit_code == 0 and "This checkout ships no skill bridge configuration" in said.stdout


def test_a_dot_bee_that_links_to_another_checkouts_instance_is_not_followed(
    run: Callable[..., Result], checkout: Path, skills: Path, tmp_path: Path
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    cli = make_cli([register_core])
    assert CliRunner().invoke(cli, ["init", "--checkout", str(mine)]).exit_code == 0
    assert (
        CliRunner()
        .invoke(cli, ["skill", "bridge", "add", "mine", "--dir", str(skills), "--checkout", str(mine)])
        .exit_code
        == 0
    )
    (checkout / ".bee").symlink_to(mine / ".bee")  # committed by the repository: the user's other instance
    listed = run("skill", "bridge", "list")
    assert listed.exit_code == 1 and "mine" not in listed.stdout
    assert f"{checkout / '.bee'} is a symlink to {(mine / '.bee').resolve()}, outside the checkout" in listed.stderr
    assert f"pass --instance-root {(mine / '.bee').resolve()}" in listed.stderr
    chosen = run("skill", "bridge", "list", "--instance-root", str(mine / ".bee"))  # on purpose, it is the user's
    assert chosen.exit_code == 0 and "mine  directory" in chosen.stdout
    (checkout / ".bee").unlink()
    (checkout / "state").mkdir()
    (checkout / ".bee").symlink_to(checkout / "state")  # a link inside the checkout is followed
    assert run("init").exit_code == 0 and (checkout / "state" / "instance.json").is_file()
