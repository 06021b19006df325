"""Bad input to `bee supervise`: each refusal says what to change, and leaves nothing half-started.

"Nothing half-started" is checked directly: no status was ever published (no process started), the state folder's
lock is free again, and every address the refused run had already bound can be bound again.
"""

import json
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bee_supervisor.lock import running_pid
from tests.harness.postgres import free_port
from tests.harness.supervisor import BEE, SupervisorProcess, fake

pytestmark = pytest.mark.e2e


def supervise(root: Path, config: str, *extra: str) -> subprocess.CompletedProcess[str]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "svc.toml").write_text(config)
    return subprocess.run(
        [str(BEE), "supervise", "--config", "svc.toml", "--state", "state", *extra],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def sleeper(name: str, port: int | None = None) -> str:
    if port is None:
        return f"[services.{name}]\ncommand = {fake('sleep')}\n"
    return (
        f'[services.{name}]\ncommand = {fake("http", "--fd", "{listen_fd}")}\nlisten = "127.0.0.1:{port}"\n'
        f'[services.{name}.health]\ncheck = "process"\n'
    )


def bindable(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def assert_nothing_started(root: Path, *ports: int) -> None:
    assert not (root / "state" / "status.json").exists()
    assert running_pid(root / "state") is None
    for port in ports:
        assert bindable(port), port


def test_a_malformed_service_file_names_the_line_and_key(tmp_path: Path) -> None:
    completed = supervise(tmp_path, sleeper("a") + "[services.a.restart]\nstart_retries = 'many'\n")
    assert completed.returncode == 1
    assert "svc.toml:4: services.a.restart.start_retries: expected a whole number from 0 to 1000" in completed.stderr
    assert_nothing_started(tmp_path)


def test_an_unknown_service_is_refused_naming_the_known_ones(tmp_path: Path) -> None:
    completed = supervise(tmp_path, sleeper("a") + sleeper("b"), "--service", "a", "--service", "c")
    assert completed.returncode == 1
    assert "no service 'c' in svc.toml (it defines: a, b)" in completed.stderr
    assert_nothing_started(tmp_path)


def test_a_port_in_use_is_refused_and_the_addresses_already_bound_are_released(tmp_path: Path) -> None:
    first, taken = free_port(), free_port()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", taken))
        holder.listen()
        completed = supervise(tmp_path, sleeper("first", first) + sleeper("second", taken))
    assert completed.returncode == 1
    assert f"service second: 127.0.0.1:{taken} is already in use (svc.toml:8, services.second.listen)" in (
        completed.stderr
    )
    assert_nothing_started(tmp_path, first, taken)


def test_a_missing_executable_is_refused_before_anything_starts(tmp_path: Path) -> None:
    port = free_port()
    config = sleeper("web", port) + '[services.job]\ncommand = ["bee-no-such-program", "--flag"]\n'
    completed = supervise(tmp_path, config)
    assert completed.returncode == 1
    assert "service job: cannot run 'bee-no-such-program': no such executable (svc.toml:7, services.job.command" in (
        completed.stderr
    )
    assert_nothing_started(tmp_path, port)


def test_a_missing_version_command_program_is_refused(tmp_path: Path) -> None:
    config = f'[services.job]\ncommand = {fake("stdio")}\nversion_command = ["./nope", "--version"]\ncontract = true\n'
    completed = supervise(tmp_path, config + '[services.job.health]\ncheck = "mcp"\n')
    assert completed.returncode == 1
    assert "cannot run './nope'" in completed.stderr and "services.job.version_command" in completed.stderr
    assert_nothing_started(tmp_path)


def test_a_missing_working_directory_is_refused(tmp_path: Path) -> None:
    completed = supervise(tmp_path, sleeper("job") + 'directory = "gone"\n')
    assert completed.returncode == 1
    assert f"the working directory {tmp_path / 'gone'} does not exist (svc.toml:3, services.job.directory)" in (
        completed.stderr
    )
    assert_nothing_started(tmp_path)


def test_an_unwritable_log_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    port = free_port()
    completed = supervise(tmp_path, '[supervisor]\nlogs = "a-file/logs"\n' + sleeper("web", port))
    assert completed.returncode == 1
    assert f"cannot write logs to {tmp_path / 'a-file' / 'logs'}: Not a directory" in completed.stderr
    assert_nothing_started(tmp_path, port)


def test_a_second_supervisor_on_the_same_state_folder_is_refused_naming_the_first(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    first = supervisor_factory(sleeper("job"), name="first")
    first.wait_state("job", "running")
    completed = subprocess.run(
        first.argv(),
        cwd=first.root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 1
    assert first.process is not None
    assert f"another supervisor (pid {first.process.pid}) is already running on the state folder" in completed.stderr
    assert first.process.poll() is None and first.replica("job")["state"] == "running"
    assert running_pid(first.state) == first.process.pid


def test_a_command_that_cannot_execute_is_a_failed_start(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    script = tmp_path / "not-executable.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    script.write_bytes(b"\x7fELF-not-really")  # executable bit, but no program the kernel can run
    config = (
        f"[services.job]\ncommand = {json.dumps([str(script)])}\n"
        "[services.job.restart]\nstart_retries = 1\nbackoff = 0.05\n"
    )
    supervisor = supervisor_factory(config)
    fatal = supervisor.wait_state("job", "fatal")
    assert "exit status 127" in fatal["reason"]
    assert "could not start" in supervisor.log("job-0.log")
    assert supervisor.process is not None
    assert supervisor.process.poll() is None
