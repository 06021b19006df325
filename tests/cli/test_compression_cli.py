"""`bee compression setup|enable|disable|status` through the click entry points."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bee_cli import make_cli
from bee_core.cli import register as register_core


@pytest.fixture
def run(tmp_path: Path) -> Callable[..., Result]:
    cli = make_cli([register_core])

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, [*args, "--checkout", str(tmp_path)])

    return invoke


def test_setup_says_what_is_missing_without_an_instance(run: Callable[..., Result]) -> None:
    result = run("compression", "setup")
    assert result.exit_code == 1
    assert "[missing] instance" in result.output and "bee init" in result.output
    assert "[ok] tokenizer" in result.output and "[ok] word frequencies" in result.output
    refused = run("compression", "enable")
    assert refused.exit_code == 1 and "not enabled" in refused.output


def test_setup_enable_status_disable(run: Callable[..., Result], tmp_path: Path) -> None:
    assert run("init").exit_code == 0
    setup = run("compression", "setup", "--json")
    assert setup.exit_code == 0 and json.loads(setup.output)["ready"] is True
    assert not (tmp_path / ".bee" / "compression" / "settings.json").exists()  # setup only checks
    assert "enabled" in run("compression", "enable").output
    status = json.loads(run("compression", "status", "--json").output)
    assert status["enabled"] is True and status["method"] == "extractive-wordfreq-v1"
    assert status["retainedOriginals"] == 0
    assert "disabled" in run("compression", "disable").output
    assert "Compression: disabled" in run("compression", "status").output


def test_disable_and_status_without_an_instance(run: Callable[..., Result]) -> None:
    assert "already off" in run("compression", "disable").output
    assert "not initialised" in run("compression", "status").output


def test_status_reports_a_damaged_settings_file(run: Callable[..., Result], tmp_path: Path) -> None:
    run("init")
    run("compression", "enable")
    (tmp_path / ".bee" / "compression" / "settings.json").write_text("[]")
    result = run("compression", "status")
    assert result.exit_code == 1 and "not a compression settings object" in result.output
    assert "disabled" in run("compression", "disable").output  # disable repairs it
