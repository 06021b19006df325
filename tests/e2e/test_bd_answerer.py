"""`bee bd` through the warm answerer, as a shell runs it: the same bytes and exit codes as a command in its own
process, each command in its client's environment, folder and umask, its client's signals passed on and its client's
death ending it, nothing of the checkout imported, and the answerer replaced when the installation changes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, bee_executable
from tests.e2e.test_warm_trust import plant, sprung

EXPORT = FIXTURES / "beads" / "steveyegge__vc.jsonl"


@pytest.fixture(scope="module")
def runtime() -> Iterator[Path]:
    """A private runtime folder (short: a socket's path is at most 107 bytes); its answerer exits once it is gone."""
    folder = Path(tempfile.mkdtemp(prefix="ba", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("bd") / "vc.db")
    subprocess.run(
        [str(bee_executable()), "tracker", "import", "--store", path, str(EXPORT)], check=True, capture_output=True
    )
    return path


def warm_env(runtime: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "BEE_WARM": "1", "XDG_RUNTIME_DIR": str(runtime), "BEE_ANSWER_IDLE_SECONDS": "60", **extra}


def bd(
    *args: str, env: dict[str, str], cwd: Path | str | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bee_executable()), "bd", *args],
        env=env,
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def answerer_folder(runtime: Path) -> Path:
    (folder,) = (runtime / "bee").glob("warm-*")
    return folder


def served(runtime: Path) -> int:
    """How many commands the answerer's children have run (its log)."""
    logs = list((runtime / "bee").glob("warm-*/answer-*.log"))
    return sum(len(log.read_text().splitlines()) for log in logs)


def started(runtime: Path, env: dict[str, str], store: str) -> None:
    """Make sure an answerer runs and answers (the first command of a runtime folder starts it and runs cold)."""
    bd("--store", store, "ready", "-n", "1", "--json", env=env)
    deadline = time.monotonic() + 60
    before = served(runtime)
    while served(runtime) == before:
        assert time.monotonic() < deadline, "no warm answer within 60 s"
        bd("--store", store, "ready", "-n", "1", "--json", env=env)
        time.sleep(0.1)


def test_warm_answers_are_the_cold_answers_byte_for_byte(runtime: Path, store: str) -> None:
    env = warm_env(runtime)
    started(runtime, env, store)
    first = json.loads(bd("--store", store, "ready", "--json", env=env).stdout)[0]["id"]
    commands = [
        ["ready", "--json"],
        ["ready"],
        ["ready", "-n", "3", "--json"],
        ["list", "--json"],
        ["list", "--all", "-n", "0"],
        ["show", first, "--json"],
        ["show", first],
        ["search", "executor", "--json"],
        ["blocked", "--json"],
        ["stats", "--json"],
        ["prime"],
        ["show", "nope-1", "--json"],  # exit 1, bd's JSON error
        ["show", "nope-1"],  # exit 1, on stderr
        ["ready", "--sort", "hybrid"],  # exit 2: what Bee does not do, by name
        ["sync"],  # exit 2
        ["ready", "--no-such-flag"],  # click's usage error, exit 2
        ["--help"],
    ]
    before = served(runtime)
    for args in commands:
        warm = bd("--store", store, *args, env=env)
        cold = bd("--store", store, *args, env={**env, "BEE_WARM": "0"})
        assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr), args
    assert served(runtime) - before == len(commands)  # every warm one was the answerer's


def test_each_command_has_its_own_clients_environment_folder_and_umask(runtime: Path, tmp_path: Path) -> None:
    env = warm_env(runtime)
    folder = tmp_path / "checkout"
    folder.mkdir()
    started(runtime, env, str(folder / "warm.db"))
    before = served(runtime)
    # The store path is relative: it resolves against the client's folder. Its mode comes from the client's umask.
    old = os.umask(0o077)
    try:
        results = {}

        def create(actor: str) -> None:
            results[actor] = bd(
                "--store", "team.db", "create", f"By {actor}", "--json", env={**env, "BEADS_ACTOR": actor}, cwd=folder
            )

        threads = [threading.Thread(target=create, args=(f"agent-{n}@example.com",)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        os.umask(old)
    assert (folder / "team.db").stat().st_mode & 0o777 == 0o600
    for actor, result in results.items():
        assert result.returncode == 0, result.stderr
        made = json.loads(result.stdout)
        assert made["title"] == f"By {actor}" and made["created_by"] == actor
    # A variable of one command is not the next one's: bd's envelope only where it is asked for.
    enveloped = json.loads(
        bd("--store", "team.db", "list", "--json", env={**env, "BD_JSON_ENVELOPE": "1"}, cwd=folder).stdout
    )
    plain = json.loads(bd("--store", "team.db", "list", "--json", env=env, cwd=folder).stdout)
    assert isinstance(enveloped, dict) and enveloped["schema_version"] == 1 and isinstance(plain, list)
    assert served(runtime) - before == 10


def _running(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    """`bee bd ARGS` reading its stdin from a pipe this test holds open."""
    return subprocess.Popen(
        [str(bee_executable()), "bd", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _waiting_on_stdin(runtime: Path, before: int) -> None:
    """Give the command time to start and block on its stdin (it has not finished: nothing logged)."""
    time.sleep(1.0)
    assert served(runtime) == before


def test_a_client_killed_midway_ends_its_command_with_nothing_written(runtime: Path, tmp_path: Path) -> None:
    env = warm_env(runtime)
    started(runtime, env, str(tmp_path / "warm.db"))
    before = served(runtime)
    client = _running(["--store", "team.db", "create", "Never", "--body-file", "-"], env, tmp_path)
    _waiting_on_stdin(runtime, before)
    client.kill()
    client.wait(timeout=30)
    for stream in (client.stdout, client.stderr):
        assert stream is not None
        stream.close()
    time.sleep(0.5)  # the child sees its client gone, and is stopped, before it reads a byte
    assert client.stdin is not None
    try:
        client.stdin.write("a description")
        client.stdin.close()
    except BrokenPipeError:
        pass  # nothing reads it any more: that is the point
    time.sleep(0.5)
    listed = bd("--store", "team.db", "list", "--json", env=env, cwd=tmp_path)
    assert listed.returncode in (0, 1) and "Never" not in listed.stdout


def test_ctrl_c_reaches_the_command_as_it_would_a_cold_one(runtime: Path, tmp_path: Path) -> None:
    env = warm_env(runtime)
    started(runtime, env, str(tmp_path / "warm.db"))
    outcomes = []
    for mode in ("1", "0"):
        client = _running(
            ["--store", "team.db", "create", "Interrupted", "--body-file", "-"], {**env, "BEE_WARM": mode}, tmp_path
        )
        time.sleep(1.5 if mode == "1" else 3.0)  # a cold one imports for a while before it reads stdin
        client.send_signal(signal.SIGINT)
        out, err = client.communicate(timeout=60)
        outcomes.append((client.returncode, out, err.strip().splitlines()[-1:]))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == 1 and outcomes[0][2] == ["Aborted!"]
    assert "Interrupted" not in bd("--store", "team.db", "list", "--json", env=env, cwd=tmp_path).stdout


def test_garbage_on_the_socket_and_oversized_requests_leave_it_serving(runtime: Path, store: str) -> None:
    env = warm_env(runtime)
    started(runtime, env, store)
    (path,) = answerer_folder(runtime).glob("answer-*.sock")
    for junk in (b"", b"GET / HTTP/1.1\r\n\r\n", b"BEEA\x01\xff\xff\xff\xff", b"BEEA\x01\x00\x00\x00\x05a\0b\0c" * 4):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:
            raw.settimeout(30)
            raw.connect(str(path))
            raw.sendall(junk)
            raw.shutdown(socket.SHUT_WR)
            try:
                answered = raw.recv(16)
            except ConnectionResetError:  # closed with the junk unread
                answered = b""
            assert answered == b""  # refused by closing, nothing run
    before = served(runtime)
    huge = bd(
        "--store", store, "ready", "-n", "2", "--json", env={**env, **{f"HUGE_{n}": "x" * 100_000 for n in range(12)}}
    )
    assert huge.returncode == 0 and len(json.loads(huge.stdout)) == 2
    assert served(runtime) == before  # over the request limit: served cold, and right
    assert bd("--store", store, "ready", "-n", "2", "--json", env=env).returncode == 0
    assert served(runtime) == before + 1


def test_nothing_of_the_checkout_is_imported_warm_or_cold(runtime: Path, store: str, tmp_path: Path) -> None:
    env = warm_env(runtime)
    checkout, markers = tmp_path / "checkout", tmp_path / "markers"
    checkout.mkdir()
    planted = plant([checkout], markers)
    assert planted > 100
    for mode in ("1", "0"):
        answer = bd("--store", store, "ready", "-n", "1", "--json", env={**env, "BEE_WARM": mode}, cwd=checkout)
        assert answer.returncode == 0, answer.stderr
    started(runtime, env, store)
    assert bd("--store", store, "ready", "-n", "1", "--json", env=env, cwd=checkout).returncode == 0
    assert sprung(markers) == []


def test_without_warm_no_answerer_starts(tmp_path: Path, store: str) -> None:
    runtime = Path(tempfile.mkdtemp(prefix="bn", dir="/tmp"))
    try:
        env = {**warm_env(runtime), "BEE_WARM": "0"}
        for _ in range(3):
            assert bd("--store", store, "ready", "-n", "1", "--json", env=env).returncode == 0
        time.sleep(1)
        assert not list(runtime.glob("bee/warm-*/answer-*"))
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def _ends(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_an_upgrade_replaces_the_answerer(tmp_path: Path, store: str) -> None:
    runtime = Path(tempfile.mkdtemp(prefix="bu", dir="/tmp"))
    seam = tmp_path / "installed.json"
    seam.write_text('{"version": "1", "contractVersion": "1", "contractDigest": "a"}')
    try:
        env = warm_env(runtime, BEE_INSTALLED_VERSION_FILE=str(seam))
        started(runtime, env, store)
        (path,) = answerer_folder(runtime).glob("answer-*.sock")
        lock = path.with_suffix(".lock")
        first = int(lock.read_text())
        seam.write_text('{"version": "2", "contractVersion": "1", "contractDigest": "b"}')
        deadline = time.monotonic() + 30
        while path.exists():
            assert time.monotonic() < deadline, "the answerer did not notice the upgrade"
            time.sleep(0.1)
        assert _ends(first), "its socket is gone, but the answerer still runs"
        started(runtime, env, store)  # the next command starts a new one, which answers
        assert int(lock.read_text()) != first
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def _on_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, bytes]:
    """`bee bd ARGS` with its standard output on a terminal (a pty): its exit code and what the terminal showed."""
    import pty

    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [str(bee_executable()), "bd", *args], env=env, stdout=follower, stderr=subprocess.DEVNULL
        )
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's last writer is gone
                break
            if not chunk:
                break
            shown += chunk
        return process.wait(timeout=60), shown
    finally:
        os.close(leader)


def test_on_a_terminal_warm_shows_what_cold_shows(runtime: Path, store: str) -> None:
    env = warm_env(runtime, COLUMNS="100", TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    started(runtime, env, store)
    before = served(runtime)
    for args in (["--store", store, "ready", "-n", "5"], ["--store", store, "list", "-n", "5"]):
        warm = _on_a_terminal(args, env)
        cold = _on_a_terminal(args, {**env, "BEE_WARM": "0"})
        assert warm == cold and warm[0] == 0
        assert b"\x1b[" in warm[1]  # colour, as on any terminal
    assert served(runtime) - before == 2


def _answerer_pid(runtime: Path) -> int:
    (lock,) = answerer_folder(runtime).glob("answer-*.lock")
    return int(lock.read_text())


def test_a_killed_answerer_leaves_no_spare_behind_and_is_replaced(tmp_path: Path, store: str) -> None:
    runtime = Path(tempfile.mkdtemp(prefix="bk", dir="/tmp"))
    try:
        env = warm_env(runtime)
        started(runtime, env, store)
        first = _answerer_pid(runtime)
        os.kill(first, signal.SIGKILL)
        # Its spares see it gone and leave: nothing answers on its socket any more.
        (path,) = answerer_folder(runtime).glob("answer-*.sock")
        deadline = time.monotonic() + 30
        while True:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                try:
                    probe.connect(str(path))
                except ConnectionRefusedError:
                    break
            assert time.monotonic() < deadline, "a spare of the killed answerer still listens"
            time.sleep(0.1)
        started(runtime, env, store)  # a new one, free to take the lock
        assert _answerer_pid(runtime) != first
        assert len(list(answerer_folder(runtime).glob("answer-*-scratch-*"))) == 1  # the killed one's is removed
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def test_a_stopped_answerer_lets_a_running_command_finish(tmp_path: Path) -> None:
    runtime = Path(tempfile.mkdtemp(prefix="bs", dir="/tmp"))
    try:
        env = warm_env(runtime)
        started(runtime, env, str(tmp_path / "warm.db"))
        before = served(runtime)
        client = _running(["--store", "team.db", "create", "Finished", "--body-file", "-"], env, tmp_path)
        _waiting_on_stdin(runtime, before)
        answerer = _answerer_pid(runtime)
        os.kill(answerer, signal.SIGTERM)
        assert _ends(answerer)
        assert not list(answerer_folder(runtime).glob("answer-*.sock"))  # it took its name with it
        _, err = client.communicate("written after the answerer left", timeout=60)
        assert client.returncode == 0, err
        listed = bd("--store", "team.db", "list", "--json", env={**env, "BEE_WARM": "0"}, cwd=tmp_path)
        assert [issue["title"] for issue in json.loads(listed.stdout)] == ["Finished"]
        assert served(runtime) == before + 1
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def _stop_warm(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bee_executable()), "supervise", "stop", "--warm"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_supervise_stop_warm_stops_the_answerers(tmp_path: Path, store: str) -> None:
    runtime = Path(tempfile.mkdtemp(prefix="bp", dir="/tmp"))
    try:
        env = warm_env(runtime)
        started(runtime, env, store)
        answerer = _answerer_pid(runtime)
        stopped = _stop_warm(env)
        assert stopped.returncode == 0, stopped.stderr
        assert f"stopped the answerer (pid {answerer})" in stopped.stdout
        assert _ends(answerer)
        assert not list(answerer_folder(runtime).glob("answer-*.sock"))
        again = _stop_warm(env)
        assert again.returncode == 0 and "nor any answerer" in again.stdout
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
