"""Which command lines the front end serves through a warm host, and what it costs to get there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bee_cli.frontend import target, wait_seconds
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
    assert (found["view"], found["instance"], found["logLevel"]) == ("core-discovery", str(repo / "inst"), "debug")
    assert target(["mcp", "serve"], {"BEE_LOG_LEVEL": "info"})["logLevel"] == "info"  # type: ignore[index]


def test_the_design_command_line_is_served_warm(repo: Path) -> None:
    found = target(["design", "mcp", "--stdio", "--root", str(repo)], {})
    assert found is not None and (found["view"], found["checkout"], found["instance"]) == ("design", str(repo), "")
    assert target(["design", "mcp", "--root", str(repo)], {}) is not None


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


def test_the_wait_is_bounded_and_a_bad_value_keeps_the_default() -> None:
    assert wait_seconds({}) == 10.0
    assert wait_seconds({"BEE_WARM_WAIT_SECONDS": "2.5"}) == 2.5
    for bad in ("0", "-1", "soon", "inf", "nan"):
        assert wait_seconds({"BEE_WARM_WAIT_SECONDS": bad}) == 10.0


def test_the_front_end_imports_only_the_standard_library() -> None:
    # What the console script imports before it relays: no click, no SDK, no pydantic, not even typing.
    code = (
        "import sys, json; import bee_cli.main, bee_cli.frontend, bee_cli.attach, bee_cli.relay; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    heavy = {"click", "mcp", "pydantic", "anyio", "typing", "dataclasses", "hashlib", "asyncio"}
    assert heavy.isdisjoint(loaded), heavy & set(loaded)
    ours = {name.split(".")[0] for name in loaded if name.startswith("bee_")}
    assert ours == {"bee_cli", "bee_contracts"}


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
