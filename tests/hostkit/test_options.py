"""The stdio hosts' serve options, defined once: taken from a host's registry entry, handed over as one object, and
the checkout refused the way the command line should be."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from bee_contracts.hosts import HostEntry
from bee_contracts.layout import Checkout
from bee_contracts.serving import SERVE_OPTIONS
from bee_hostkit.options import ServeOptions, serve_options

LOOSE = HostEntry("loose", "stdio", ("loose", "serve"), "mcp", options=SERVE_OPTIONS)
STRICT = HostEntry(
    "strict",
    "stdio",
    ("strict", "serve"),
    "mcp",
    options=(*SERVE_OPTIONS, ("--root", "checkout")),
    absolute_checkout=True,
)


def command(entry: HostEntry, seen: list[tuple[ServeOptions, Checkout]]) -> click.Command:
    @click.command()
    @serve_options(entry, "The checkout.")
    @click.option("--flag", is_flag=True)
    def serve(options: ServeOptions, flag: bool) -> None:
        assert flag is False
        seen.append((options, options.start()))

    return serve


def test_the_options_arrive_as_one_object_and_select_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[ServeOptions, Checkout]] = []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BEE_LOG_LEVEL", "error")
    result = CliRunner().invoke(command(LOOSE, seen), [])
    assert result.exit_code == 0, result.output
    [(options, checkout)] = seen
    assert (options.checkout, options.instance_root, options.log_level) == (".", None, "error")
    assert (options.warm_fd, options.warm_check_fd) == (None, None)
    assert checkout == Checkout(str(tmp_path.resolve()), str(tmp_path.resolve() / ".bee"))
    argv = ["--checkout", str(tmp_path), "--instance-root", str(tmp_path / "i"), "--log-level", "debug"]
    assert CliRunner().invoke(command(LOOSE, seen), [*argv, "--warm-fd", "7"]).exit_code == 0
    assert (seen[-1][0].log_level, seen[-1][0].warm_fd, seen[-1][1].instance) == ("debug", 7, str(tmp_path / "i"))


def test_a_host_that_wants_an_absolute_checkout_takes_every_spelling_and_requires_one(tmp_path: Path) -> None:
    seen: list[tuple[ServeOptions, Checkout]] = []
    assert CliRunner().invoke(command(STRICT, seen), ["--root", str(tmp_path)]).exit_code == 0
    assert seen[-1][1].path == str(tmp_path.resolve())
    missing = CliRunner().invoke(command(STRICT, seen), [])
    assert missing.exit_code == 2 and "Missing option '--checkout' / '--root'" in missing.output
    relative = CliRunner().invoke(command(STRICT, seen), ["--checkout", "relative"])
    assert relative.exit_code == 2 and "Invalid value for '--checkout' / '--root'" in relative.output
    assert "is relative; pass an absolute path" in relative.output
    assert CliRunner().invoke(command(LOOSE, seen), ["--root", str(tmp_path)]).exit_code == 2  # not its spelling


def test_a_log_level_that_is_not_one_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BEE_LOG_LEVEL", "loud")
    result = CliRunner().invoke(command(LOOSE, []), ["--checkout", str(tmp_path)])
    assert result.exit_code == 2 and "Invalid value for '--log-level'" in result.output


def test_a_dot_bee_linking_out_is_the_hosts_error_not_a_usage_error(tmp_path: Path) -> None:
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".bee").symlink_to(elsewhere)
    result = CliRunner().invoke(command(LOOSE, []), ["--checkout", str(repo)])
    assert result.exit_code == 1 and getattr(result.exception, "code", None) == "outside_root"
