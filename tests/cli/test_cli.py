import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from bee_cli import make_cli
from bee_cli.commands import register as register_cli
from bee_contracts import BeeError, ErrorCode, version_info
from bee_core.cli import register as register_core


@pytest.fixture
def cli() -> click.Group:
    return make_cli([register_cli, register_core])


def test_version_text_and_json(cli: click.Group) -> None:
    runner = CliRunner()
    text = runner.invoke(cli, ["--version"])
    assert text.exit_code == 0
    info = version_info()
    assert info["version"] in text.output and info["contractDigest"] in text.output
    as_json = runner.invoke(cli, ["--version", "--json"])
    assert json.loads(as_json.output) == info


def test_plugins_contribute_commands_and_absent_ones_add_nothing() -> None:
    bare = make_cli([])
    assert set(bare.commands) == set()

    def plugin(group: click.Group) -> None:
        @group.command()
        def hello() -> None:
            click.echo("hi")

    assert CliRunner().invoke(make_cli([plugin]), ["hello"]).output == "hi\n"


def test_two_packages_adding_the_same_command_is_an_error_at_start_up() -> None:
    def first(group: click.Group) -> None:
        @group.command(name="hello")
        def greet() -> None:
            click.echo("first")

    def second(group: click.Group) -> None:
        @group.command(name="hello")
        def wave() -> None:
            click.echo("second")

    with pytest.raises(RuntimeError, match="both add the command `bee hello`"):
        make_cli([first, second])


def test_a_coded_failure_in_any_command_is_one_line_and_exit_status_1() -> None:
    def plugin(group: click.Group) -> None:
        @group.group()
        def things() -> None:
            """A plugin's group, as the hosts contribute theirs."""

        @things.command("break")
        def broken() -> None:
            raise BeeError(ErrorCode.NOT_FOUND, "no thing named x; `bee things list` shows them")

    result = CliRunner().invoke(make_cli([plugin]), ["things", "break"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output == "Error: no thing named x; `bee things list` shows them\n"


def test_installed_entry_points_provide_the_core_commands() -> None:
    assert {"init", "mcp", "doctor"} <= set(make_cli().commands)


def test_init_creates_the_instance_and_is_idempotent(cli: click.Group, tmp_path: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(cli, ["init", "--checkout", str(tmp_path)])
    assert first.exit_code == 0 and "Created" in first.output
    root = tmp_path / ".bee"
    assert (root / "instance.json").is_file() and (root / "artifacts").is_dir()
    assert (root / ".gitignore").read_text() == "*\n"
    again = runner.invoke(cli, ["init", "--checkout", str(tmp_path)])
    assert again.exit_code == 0 and "Already initialised" in again.output


def test_init_honours_instance_root_and_env(cli: click.Group, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    elsewhere = tmp_path / "state"
    assert runner.invoke(cli, ["init", "--checkout", str(tmp_path), "--instance-root", str(elsewhere)]).exit_code == 0
    assert (elsewhere / "instance.json").is_file()
    monkeypatch.setenv("BEE_INSTANCE_ROOT", str(tmp_path / "from-env"))
    assert runner.invoke(cli, ["init", "--checkout", str(tmp_path)]).exit_code == 0
    assert (tmp_path / "from-env" / "instance.json").is_file()


def test_init_refuses_a_missing_checkout(cli: click.Group, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["init", "--checkout", str(tmp_path / "missing")])
    assert result.exit_code != 0 and "is not a directory" in result.output


def test_serve_refuses_a_missing_checkout_or_a_file(cli: click.Group, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["mcp", "serve", "--checkout", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "Invalid value for '--checkout'" in result.output
    assert "does not exist; pass an existing directory" in result.output
    (tmp_path / "file").write_text("x")
    result = CliRunner().invoke(cli, ["mcp", "serve", "--checkout", str(tmp_path / "file")])
    assert result.exit_code == 2 and "is not a directory" in result.output
