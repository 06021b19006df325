"""Which command lines the front end serves through a warm host, and what it costs to get there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import click
import pytest

from bee_cli.frontend import target, wait_seconds
from bee_cli.main import make_cli
from bee_contracts import HOSTS, hosts
from bee_contracts.hosts import HostEntry, installed_hosts
from bee_contracts.serving import SERVE_OPTIONS
from bee_contracts.warm import environment_digest, folder_id


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "repo").mkdir()
    return (tmp_path / "repo").resolve()


def test_the_core_command_lines_an_editor_writes_are_served_warm(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    env = {"HOME": "/home/a"}
    assert target(["mcp", "serve"], env) == {
        "view": "core",
        "checkout": str(repo),
        "place": folder_id(str(repo)),
        "instance": str(repo / ".bee"),
        "logLevel": "warning",
        "environment": environment_digest(env),
    }
    found = target(
        ["mcp", "serve", f"--checkout={repo}", "--instance-root", "inst", "--discovery", "--log-level", "debug"], env
    )
    assert found is not None
    assert (found["view"], found["instance"], found["logLevel"]) == ("discovery", str(repo / "inst"), "debug")
    assert target(["mcp", "serve"], {"BEE_LOG_LEVEL": "info"})["logLevel"] == "info"  # type: ignore[index]


def test_the_design_command_lines_are_served_warm_with_an_instance_like_cores(repo: Path) -> None:
    found = target(["design", "mcp", "--stdio", "--checkout", str(repo)], {})
    assert found is not None and (found["view"], found["checkout"]) == ("design", str(repo))
    assert found["instance"] == str(repo / ".bee")
    # What editor configurations written before --checkout say, --root, is the same option.
    assert target(["design", "mcp", "--stdio", "--root", str(repo)], {}) == found
    assert target(["design", "mcp", f"--root={repo}"], {}) == found
    chosen = target(["design", "mcp", "--checkout", str(repo), "--instance-root", str(repo / "inst")], {})
    assert chosen is not None and chosen["instance"] == str(repo / "inst")
    from_env = target(["design", "mcp", "--checkout", str(repo)], {"BEE_INSTANCE_ROOT": str(repo / "env")})
    assert from_env is not None and from_env["instance"] == str(repo / "env")


@pytest.mark.parametrize(
    "args",
    [
        ["mcp", "serve", "--help"],
        ["mcp", "serve", "--bogus"],
        ["mcp", "serve", "--checkout"],
        ["mcp", "serve", "--discovery", "--discovery"],
        ["mcp", "serve", "--log-level", "loud"],
        ["mcp", "serve", "extra"],
        ["mcp", "list"],
        ["init"],
        [],
        ["design", "mcp", "--stdio"],
        ["design", "mcp", "--stdio", "--root", "relative"],
        ["design", "mcp", "--stdio", "--root", "/no/such/root"],
        ["design", "mcp", "--stdio", "--checkout", "relative"],
        ["design", "mcp", "--stdio", "--checkout", ""],
        ["design", "mcp", "--checkout", "/", "--root", "/"],
        ["design", "mcp", "--checkout", "/", "--discovery"],
        ["mcp", "serve", "--stdio"],
        ["mcp", "serve", "--root", "."],
        ["mcp", "serve", "--instance-root", ""],
    ],
)
def test_anything_else_goes_the_click_way(args: list[str], repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    assert target(args, {}) is None


def test_a_checkout_the_host_would_refuse_goes_the_click_way_so_its_error_is_the_hosts(repo: Path) -> None:
    (repo / "file").write_text("x")
    assert target(["mcp", "serve", "--checkout", str(repo / "missing")], {}) is None
    assert target(["mcp", "serve", "--checkout", str(repo / "file")], {}) is None
    assert target(["mcp", "serve", "--checkout", str(repo), "--instance-root", str(repo / "file")], {}) is None


def test_a_dot_bee_linking_out_of_the_checkout_goes_the_click_way_which_refuses_it(repo: Path, tmp_path: Path) -> None:
    # Resolved by the front end and handed to a warm host as --instance-root, the link would be followed.
    elsewhere = tmp_path / "other" / ".bee"
    elsewhere.mkdir(parents=True)
    (repo / ".bee").symlink_to(elsewhere)
    assert target(["mcp", "serve", "--checkout", str(repo)], {}) is None
    chosen = target(["mcp", "serve", "--checkout", str(repo), "--instance-root", str(elsewhere)], {})
    assert chosen is not None and chosen["instance"] == str(elsewhere.resolve())  # chosen on purpose: served
    assert target(["mcp", "serve", "--checkout", str(repo)], {"BEE_INSTANCE_ROOT": str(elsewhere)}) is not None
    (repo / ".bee").unlink()
    (repo / "state").mkdir()
    (repo / ".bee").symlink_to(repo / "state")  # a link inside the checkout is followed, as the host does
    inside = target(["mcp", "serve", "--checkout", str(repo)], {})
    assert inside is not None and inside["instance"] == str(repo / "state")


def test_the_command_line_refuses_a_dot_bee_linking_out_of_the_checkout_whatever_the_mode(
    repo: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "other" / ".bee"
    elsewhere.mkdir(parents=True)
    (repo / ".bee").symlink_to(elsewhere)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "BEE_WARM": "1", "XDG_RUNTIME_DIR": str(runtime)}
    exe = Path(sys.executable).parent / "bee"
    completed = subprocess.run(
        [str(exe), "mcp", "serve", "--checkout", str(repo)],
        input=b"",
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode != 0
    assert b"outside the checkout" in completed.stderr, completed.stderr
    assert not (runtime / "bee").exists()  # no warm host was asked for


ECHO = HostEntry(
    "echo",
    "stdio",
    ("echo", "serve", "--checkout", "{checkout}"),
    "mcp",
    options=(*SERVE_OPTIONS, ("--dir", "checkout")),
    flags=("--quiet",),
    views=(("echo-compact", ("--compact",)),),
)


def test_the_grammar_and_the_view_names_come_from_the_host_registry(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A host the front end has never heard of, and no other: its command line is served, and nothing else is.
    monkeypatch.setattr(sys.modules[__name__], "ECHO_ENTRY", ECHO, raising=False)
    point = EntryPoint(name="echo", value=f"{__name__}:ECHO_ENTRY", group=hosts.ENTRY_POINT_GROUP)
    monkeypatch.setattr(hosts, "entry_points", lambda group: [point])
    found = target(["echo", "serve", "--dir", str(repo), "--quiet", "--compact"], {})
    assert found is not None and (found["view"], found["checkout"]) == ("echo-compact", str(repo))
    assert target(["echo", "serve", "--checkout", str(repo)], {})["view"] == "echo"  # type: ignore[index]
    assert target(["echo", "serve", "--discovery"], {}) is None
    assert target(["mcp", "serve", "--checkout", str(repo)], {}) is None  # not installed here
    monkeypatch.setattr(hosts, "entry_points", lambda group: [])
    assert target(["echo", "serve", "--checkout", str(repo)], {}) is None


def test_a_registry_that_cannot_be_read_goes_the_click_way(monkeypatch: pytest.MonkeyPatch) -> None:
    point = EntryPoint(name="broken", value="bee_no_such_package.registry:HOST", group=hosts.ENTRY_POINT_GROUP)
    monkeypatch.setattr(hosts, "entry_points", lambda group: [point])
    assert target(["mcp", "serve"], {}) is None


def _click_grammar(command: click.Command) -> tuple[set[tuple[str, str]], set[str]]:
    valued: set[tuple[str, str]] = set()
    flags: set[str] = set()
    for param in command.params:
        if not isinstance(param, click.Option) or param.hidden or param.name == "help":
            continue
        if param.is_flag:
            flags.update(param.opts)
        else:
            valued.update((spelling, str(param.name)) for spelling in param.opts)
    return valued, flags


@pytest.mark.parametrize("name", ["core", "design"])
def test_what_a_host_declares_to_the_front_end_is_what_its_command_accepts(name: str) -> None:
    entry = {entry.name: entry for entry in installed_hosts()}[name]
    command: click.Command = make_cli()
    context = click.Context(command)
    for word in entry.command:
        assert isinstance(command, click.Group)
        found = command.get_command(context, word)
        assert found is not None
        command = found
    valued, flags = _click_grammar(command)
    assert valued == set(entry.options)
    assert flags == {*entry.flags, *(flag for _, selecting in entry.views for flag in selecting)}
    assert {setting for _, setting in entry.options} == {setting for _, setting in SERVE_OPTIONS}
    assert {view for view, _ in entry.every_view()} <= set(HOSTS)  # each view is named after its catalog


def test_the_wait_is_bounded_and_a_bad_value_keeps_the_default() -> None:
    assert wait_seconds({}) == 10.0
    assert wait_seconds({"BEE_WARM_WAIT_SECONDS": "2.5"}) == 2.5
    for bad in ("0", "-1", "soon", "inf", "nan"):
        assert wait_seconds({"BEE_WARM_WAIT_SECONDS": bad}) == 10.0


@pytest.mark.parametrize(
    ("args", "hosts"),
    [(["mcp", "serve", "--discovery"], ["core"]), (["design", "mcp", "--root", "/"], ["core", "design"])],
)
def test_the_front_end_imports_only_the_standard_library(repo: Path, args: list[str], hosts: list[str]) -> None:
    # What the console script imports before it relays: no click, no SDK, no pydantic, not even typing; and to read
    # the command line, the host registry: the registry modules up to the host it names (in name order), nothing more.
    code = (
        "import sys, json; import bee_cli.main, bee_cli.frontend, bee_cli.attach, bee_cli.relay; "
        "imported = sorted(sys.modules); "
        f"assert bee_cli.frontend.target({args!r}, {{}}) is not None; "
        "print(json.dumps([imported, sorted(sys.modules)]))"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo)
    imported, targeted = json.loads(ran.stdout)
    heavy = {"click", "mcp", "pydantic", "anyio", "typing", "dataclasses", "hashlib", "asyncio", "pathlib"}
    heavy |= {"importlib.metadata", "email", "zipfile"}
    assert heavy.isdisjoint(targeted), heavy & set(targeted)
    assert {name.split(".")[0] for name in imported if name.startswith("bee_")} == {"bee_cli", "bee_contracts"}
    registries = {f"bee_{host}{part}" for host in hosts for part in ("", "._version", ".registry")}
    ours = {name for name in targeted if name.startswith("bee_") and not name.startswith(("bee_cli", "bee_contracts"))}
    assert ours == registries


def test_bee_warm_0_serves_cold_without_a_warm_supervisor(repo: Path, tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "BEE_WARM": "0", "XDG_RUNTIME_DIR": str(runtime)}
    exe = Path(sys.executable).parent / "bee"
    completed = subprocess.run(
        [str(exe), "mcp", "serve", "--checkout", str(repo)],
        input=b"",
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert not (runtime / "bee").exists()  # the warm path was never looked at
