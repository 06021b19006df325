"""`bee supervise` as a real process: restarts, backoff, contract refusals, upgrades, stopping, no orphans.

The services are real `bee` hosts where the promise is about Bee's hosts (a tracker killed with SIGKILL serves
again, the MCP handshake of a real core host), and tests/supervisor/fake_host.py — a stand-in for an outside program
whose answers the test chooses — where the promise is about the supervisor (backoff, refusals, upgrades).
"""

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from bee_contracts import version_info
from bee_contracts.installation import ENV_INSTALLED_FILE
from tests.harness.postgres import free_port
from tests.harness.supervisor import BEE, SupervisorProcess, alive, fake, wait_until

pytestmark = pytest.mark.e2e

FAST_RESTART = """
[services.{name}.restart]
start_seconds = {start_seconds}
start_retries = {retries}
backoff = 0.05
backoff_max = 0.2
stop_timeout = 5
"""


def tracker_service(home: Path, port: int, name: str = "tracker", replicas: int = 1, extra: str = "") -> str:
    return f"""
[services.{name}]
host = "tracker"
command = ["bee", "tracker", "serve", "--home", "{home}", "--fd", "{{listen_fd}}", "--fd", "{{check_fd}}"{extra}]
listen = "127.0.0.1:{port}"
replicas = {replicas}
"""


def write_version(path: Path, **changes: Any) -> Path:
    path.write_text(json.dumps({**version_info(), **changes}))
    return path


def health(port: int) -> httpx.Response:
    return httpx.get(f"http://127.0.0.1:{port}/health", timeout=30, trust_env=False)


# -- restarts and crash loops ---------------------------------------------------------------------------------


def test_a_tracker_killed_with_sigkill_is_serving_again(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    port = free_port()
    supervisor = supervisor_factory(tracker_service(tmp_path / "home", port))
    first = supervisor.wait_state("tracker", "running")
    assert first["version"] == version_info()
    assert health(port).json()["contractDigest"] == version_info()["contractDigest"]

    import os

    os.kill(first["pid"], signal.SIGKILL)
    again = supervisor.wait_for(
        lambda s: (
            (r := s.replica("tracker")).get("state") == "running" and r.get("pid") not in (None, first["pid"]) and r
        ),
        what="a new tracker process to be running",
    )
    assert again["restarts"] == 1
    assert health(port).status_code == 200
    assert "ended by SIGKILL" in supervisor.log("supervisor.log")


def test_a_host_that_exits_at_once_goes_to_backoff_then_fatal(
    supervisor_factory: Callable[..., SupervisorProcess],
) -> None:
    supervisor = supervisor_factory(
        f"[services.crasher]\ncommand = {fake('exit', '3')}\n"
        + FAST_RESTART.format(name="crasher", start_seconds=1, retries=2)
    )
    fatal = supervisor.wait_state("crasher", "fatal")
    assert "exit status 3" in fatal["reason"]
    assert "the start failed 3 times in a row (start_retries is 2)" in fatal["reason"]
    assert fatal["restarts"] == 2 and fatal["pid"] is None
    log = supervisor.log("supervisor.log")
    assert log.count("starting -> backoff") == 2 and log.count("-> fatal") == 1
    assert supervisor.log("crasher-0.log").count("exits with 3") == 3
    assert supervisor.process is not None
    assert supervisor.process.poll() is None  # a fatal service does not take the supervisor down


def test_a_process_that_runs_its_start_period_is_restarted_without_counting_a_failure(
    supervisor_factory: Callable[..., SupervisorProcess],
) -> None:
    supervisor = supervisor_factory(
        f"[services.sleeper]\ncommand = {fake('sleep')}\n"
        + FAST_RESTART.format(name="sleeper", start_seconds=0.2, retries=0)
    )
    first = supervisor.wait_state("sleeper", "running")
    import os

    os.kill(first["pid"], signal.SIGTERM)
    again = supervisor.wait_for(
        lambda s: (r := s.replica("sleeper")).get("state") == "running" and r.get("pid") != first["pid"] and r,
        what="the sleeper to run again",
    )
    assert again["retries"] == 0 and again["restarts"] == 1


# -- the contract ---------------------------------------------------------------------------------------------


def contract_service(
    name: str, command: str, version_command: str, port: int | None = None, check: str = "http"
) -> str:
    listen = f'listen = "127.0.0.1:{port}"\n' if port else ""
    return (
        f"[services.{name}]\ncommand = {command}\nversion_command = {version_command}\ncontract = true\n{listen}"
        f'[services.{name}.health]\ncheck = "{check}"\n' + FAST_RESTART.format(name=name, start_seconds=0, retries=0)
    )


def test_a_version_mismatch_in_the_version_answer_is_refused(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    other = write_version(tmp_path / "other.json", contractDigest="sha256:" + "0" * 64)
    config = contract_service(
        "host", fake("http", "--fd", "{listen_fd}", "--fd", "{check_fd}"), fake("--version", "--json"), free_port()
    )
    supervisor = supervisor_factory(config, env={"FAKE_HOST_VERSION_FILE": str(other)})
    refused = supervisor.wait_state("host", "fatal")
    installed = version_info()["contractDigest"]
    assert refused["reason"].startswith("refused: `")
    assert f"--version --json` reports contractDigest sha256:{'0' * 64} (installed: {installed})" in refused["reason"]
    assert "version 0.1.0" not in refused["reason"]  # only the fields that differ are named
    assert refused["restarts"] == 0


def test_a_version_mismatch_in_the_health_answer_is_refused(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    other = write_version(tmp_path / "other.json", version="9.9.9")
    config = contract_service(
        "host", fake("http", "--fd", "{listen_fd}", "--fd", "{check_fd}"), fake("--version", "--json"), free_port()
    )
    supervisor = supervisor_factory(config, env={"FAKE_HEALTH_VERSION_FILE": str(other)})
    refused = supervisor.wait_state("host", "fatal")
    assert f"GET /health reports version 9.9.9 (installed: {version_info()['version']})" in refused["reason"]


def test_a_version_mismatch_in_the_mcp_handshake_is_refused(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    other = write_version(tmp_path / "other.json", contractVersion="99")
    config = contract_service("host", fake("stdio"), fake("--version", "--json"), check="mcp")
    supervisor = supervisor_factory(config, env={"FAKE_HEALTH_VERSION_FILE": str(other)})
    refused = supervisor.wait_state("host", "fatal")
    assert "the MCP handshake reports contractVersion 99 (installed: 1)" in refused["reason"]


def test_a_real_core_host_passes_the_mcp_handshake_check(
    supervisor_factory: Callable[..., SupervisorProcess], checkout: Path
) -> None:
    supervisor = supervisor_factory(
        f'[services.core]\nhost = "core"\ncommand = ["bee", "mcp", "serve", "--checkout", "{checkout}"]\n'
    )
    running = supervisor.wait_state("core", "running")
    assert running["version"] == version_info()
    assert running["health"]["detail"].startswith("MCP handshake")
    # and it stays healthy: later checks are tools/list calls over the same session
    supervisor.wait_for(
        lambda s: (h := s.replica("core").get("health")) and h["detail"].startswith("tools/list answered") and h["ok"],
        what="a tools/list check",
    )
    assert supervisor.replica("core")["restarts"] == 0


# -- upgrades ---------------------------------------------------------------------------------------------------


def test_an_upgrade_is_noticed_and_the_host_restarted(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    installed = write_version(tmp_path / "installed.json")
    config = contract_service(
        "host", fake("http", "--fd", "{listen_fd}", "--fd", "{check_fd}"), fake("--version", "--json"), free_port()
    )
    # The fake host reports whatever the "installed version" file says when it starts, as a reinstalled host would.
    env = {ENV_INSTALLED_FILE: str(installed), "FAKE_HOST_VERSION_FILE": str(installed)}
    supervisor = supervisor_factory(config, env=env)
    before = supervisor.wait_state("host", "running")
    assert before["version"]["version"] == version_info()["version"]

    write_version(installed, version="0.2.0", contractDigest="sha256:" + "1" * 64)
    after = supervisor.wait_for(
        lambda s: (
            (r := s.replica("host")).get("state") == "running"
            and (r.get("version") or {}).get("version") == "0.2.0"
            and r
        ),
        what="the host to run the upgraded version",
    )
    assert after["pid"] != before["pid"] and not alive(before["pid"])
    assert supervisor.status()["supervisor"]["installed"]["version"] == "0.2.0"
    assert "the installed Bee changed from 0.1.0" in supervisor.log("supervisor.log")


def test_a_reinstall_that_changes_nothing_a_host_serves_restarts_nothing(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    installed = write_version(tmp_path / "installed.json")
    config = contract_service(
        "host", fake("http", "--fd", "{listen_fd}", "--fd", "{check_fd}"), fake("--version", "--json"), free_port()
    )
    env = {ENV_INSTALLED_FILE: str(installed), "FAKE_HOST_VERSION_FILE": str(installed)}
    supervisor = supervisor_factory(config, env=env)
    before = supervisor.wait_state("host", "running")
    installed.write_text(json.dumps(version_info(), indent=2))  # new bytes, the same triple and sources
    supervisor.wait_for(
        lambda s: "not what a host serves: nothing to restart" in s.log("supervisor.log"), what="the look at it"
    )
    assert supervisor.replica("host")["pid"] == before["pid"]
    assert "the installed Bee changed" not in supervisor.log("supervisor.log")


def test_an_upgrade_the_running_host_does_not_match_is_refused_and_the_old_one_keeps_serving(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    installed = write_version(tmp_path / "installed.json")
    host_version = write_version(tmp_path / "host.json")
    port = free_port()
    config = contract_service(
        "host", fake("http", "--fd", "{listen_fd}", "--fd", "{check_fd}"), fake("--version", "--json"), port
    )
    env = {ENV_INSTALLED_FILE: str(installed), "FAKE_HOST_VERSION_FILE": str(host_version)}
    supervisor = supervisor_factory(config, env=env)
    before = supervisor.wait_state("host", "running")

    write_version(installed, version="0.2.0")  # the host program itself still answers 0.1.0
    supervisor.wait_for(
        lambda s: "the replacement did not become ready" in s.log("supervisor.log"), what="the refused replacement"
    )
    still = supervisor.replica("host")
    assert still["pid"] == before["pid"] and still["state"] == "running"
    assert health(port).status_code == 200


# -- stopping and orphans ---------------------------------------------------------------------------------------


def test_sigterm_stops_every_child_and_exits_zero(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    port = free_port()
    config = tracker_service(tmp_path / "home", port, replicas=2) + f"\n[services.sleeper]\ncommand = {fake('sleep')}\n"
    supervisor = supervisor_factory(config)
    supervisor.wait_for(lambda s: len(s.pids()) == 3 and all(r["state"] == "running" for r in s.replicas()))
    pids = supervisor.pids()
    supervisor.signal(signal.SIGTERM)
    assert supervisor.wait() == 0
    assert not [pid for pid in pids if alive(pid)]
    assert all(r["state"] == "stopped" for r in supervisor.replicas())
    assert supervisor.status()["supervisor"]["state"] == "stopped"
    with pytest.raises(httpx.ConnectError):
        health(port)


def test_sigkill_of_the_supervisor_leaves_no_children(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    config = tracker_service(tmp_path / "home", free_port()) + f"\n[services.sleeper]\ncommand = {fake('sleep')}\n"
    supervisor = supervisor_factory(config)
    supervisor.wait_for(lambda s: len(s.pids()) == 2 and all(r["state"] == "running" for r in s.replicas()))
    pids = supervisor.pids()
    supervisor.signal(signal.SIGKILL)
    supervisor.wait()
    wait_until(lambda: not [pid for pid in pids if alive(pid)], timeout=30, what="the children to die")


def test_a_child_that_ignores_sigterm_is_killed_after_the_stop_timeout(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    stubborn = tmp_path / "stubborn.py"
    stubborn.write_text(
        "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('up', flush=True)\n"
        "while True:\n    time.sleep(1)\n"
    )
    config = (
        f"[services.stubborn]\ncommand = {json.dumps([sys.executable, str(stubborn)])}\n"
        "[services.stubborn.restart]\nstart_seconds = 0.1\nstop_timeout = 0.5\n"
    )
    supervisor = supervisor_factory(config)
    pid = supervisor.wait_state("stubborn", "running")["pid"]
    supervisor.signal(signal.SIGINT)
    assert supervisor.wait() == 0
    assert not alive(pid)
    assert supervisor.replica("stubborn")["reason"] == "ended by SIGKILL"


def bee(*args: str) -> subprocess.CompletedProcess[str]:
    import subprocess

    return subprocess.run([str(BEE), *args], capture_output=True, text=True, timeout=120, check=False)


def test_status_and_stop_commands_speak_to_the_running_supervisor(
    supervisor_factory: Callable[..., SupervisorProcess],
) -> None:
    supervisor = supervisor_factory(f"[services.sleeper]\ncommand = {fake('sleep')}\n")
    supervisor.wait_state("sleeper", "running")
    state = str(supervisor.state)
    shown = bee("supervise", "status", "--state", state, "--json")
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    assert supervisor.process is not None
    assert document["running"] is True and document["pid"] == supervisor.process.pid
    [replica] = document["replicas"]
    assert replica["state"] == "running" and replica["uptime"] >= 0 and replica["restarts"] == 0
    assert "sleeper/0  running" in bee("supervise", "status", "--state", state).stdout

    stopped = bee("supervise", "stop", "--state", state)
    assert stopped.returncode == 0 and f"pid {supervisor.process.pid}" in stopped.stdout
    assert supervisor.wait() == 0
    after = bee("supervise", "status", "--state", state)
    assert after.returncode == 3 and "not running" in after.stdout


# -- logs ---------------------------------------------------------------------------------------------------------


def test_each_service_logs_to_its_own_rotated_file(supervisor_factory: Callable[..., SupervisorProcess]) -> None:
    supervisor = supervisor_factory(
        "[supervisor]\nlog_max_bytes = 4096\nlog_backups = 2\n"
        f"[services.chatty]\ncommand = {fake('chatter', '40000')}\n"
        f"[services.quiet]\ncommand = {fake('sleep')}\n"
    )
    supervisor.wait_for(lambda s: "chatter done" in s.log("chatty-0.log"), what="all the chatter")
    logs = supervisor.state / "logs"
    names = sorted(p.name for p in logs.iterdir())
    assert {"chatty-0.log", "chatty-0.log.1", "chatty-0.log.2", "quiet-0.log", "supervisor.log"} <= set(names)
    assert "chatty-0.log.3" not in names
    assert all((logs / name).stat().st_size <= 4096 for name in names if name.startswith("chatty"))
    assert "line 0" not in (logs / "quiet-0.log").read_text()


def test_the_tracker_refuses_an_fd_that_is_not_an_inherited_socket(tmp_path: Path) -> None:
    completed = bee("tracker", "serve", "--home", str(tmp_path / "home"), "--fd", "250")
    assert completed.returncode == 2
    assert "--fd 250 is not an open socket this process inherited" in completed.stderr


# -- bee up -------------------------------------------------------------------------------------------------------


def test_bee_up_initialises_the_checkout_and_supervises_the_tracker_until_ctrl_c(tmp_path: Path) -> None:
    import subprocess

    checkout = tmp_path / "repo"
    checkout.mkdir()
    port = free_port()
    out = tmp_path / "up.out"
    with out.open("wb") as sink:
        up = subprocess.Popen(
            [str(BEE), "up", "--checkout", str(checkout), "--port", str(port)],
            cwd=tmp_path,
            env={**os.environ, "PATH": FRESH_PATH},  # Bee not on PATH: the newcomer's case
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until(lambda: "Bee is up" in out.read_text() or up.poll() is not None, what="bee up to be ready")
        text = out.read_text()
        assert up.poll() is None, text
        assert f"http://127.0.0.1:{port}/mcp" in text
        assert (checkout / ".bee" / "tracker" / "signing-key").exists()
        assert health(port).status_code == 200
        printed = printed_commands(text)
        assert set(printed) == {"mint a token", "set up your editor", "open the web board", "status"}, text
        assert f"--tracker-url http://127.0.0.1:{port}/mcp" in printed["set up your editor"]
        assert f"put its folder on PATH: export PATH={BEE.parent}:" in text

        # Each printed command, pasted into a new shell in another folder, with a PATH that has no Bee on it.
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        token = pasted(elsewhere, printed["mint a token"] + ' && printf %s "$BEE_TRACKER_TOKEN"').stdout.strip()
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
        listed = httpx.post(f"http://127.0.0.1:{port}/mcp", json=request, headers=headers, timeout=30, trust_env=False)
        assert listed.status_code == 200 and listed.json()["result"]["tools"]

        link = pasted(elsewhere, printed["open the web board"]).stdout.strip().splitlines()[0]
        with httpx.Client(trust_env=False, timeout=30, follow_redirects=True) as browser:
            board = browser.get(link)
            assert board.status_code == 200 and "Signed in as" in board.text and str(board.url).endswith("/board/")

        editor = pasted(elsewhere, printed["set up your editor"])
        entry = json.loads((checkout / ".mcp.json").read_text())["mcpServers"]
        # The entry signs in through the browser (tests/e2e/test_first_signin.py follows it there): no token in it.
        assert entry["bee-tracker"] == {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}
        assert "signs in to bee-tracker through your browser" in editor.stdout
        challenge = httpx.post(f"http://127.0.0.1:{port}/mcp", json=request, timeout=30, trust_env=False)
        assert challenge.status_code == 401 and "resource_metadata=" in challenge.headers["www-authenticate"]

        status = pasted(elsewhere, printed["status"])
        assert "tracker" in status.stdout and "running" in status.stdout, status.stdout
        shown = json.loads(pasted(elsewhere, printed["status"] + " --json").stdout)
        assert shown["running"] and shown["pid"] == up.pid
        [tracker] = shown["replicas"]
        pid = tracker["pid"]
        assert tracker["state"] == "running" and tracker["version"] == version_info()

        up.send_signal(signal.SIGINT)
        assert up.wait(timeout=60) == 0
        assert not alive(pid)
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()


#: A new shell's PATH, with no Bee on it.
FRESH_PATH = "/usr/bin:/bin"


def printed_commands(text: str) -> dict[str, str]:
    """What `bee up` printed to run, by its label (``  label:  command``)."""
    found = {}
    for line in text.splitlines():
        label, colon, command = line.strip().partition(":  ")
        if colon and not label.startswith("http") and command.strip():
            found[label] = command.strip()
    return found


def pasted(cwd: Path, command: str) -> subprocess.CompletedProcess[str]:
    """``command`` run as a user pasting it into a new shell: bash, in ``cwd``, with a PATH that has no Bee."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("BEE_")}
    env["PATH"] = FRESH_PATH
    env["BROWSER"] = "true"  # --browser: the machine's browser must never open in a test
    completed = subprocess.run(
        ["/bin/bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, (command, completed.stdout, completed.stderr)
    return completed


def test_bee_up_reports_a_port_in_use_and_starts_nothing(tmp_path: Path) -> None:
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        completed = bee("up", "--checkout", str(tmp_path), "--port", str(port))
    assert completed.returncode == 1
    assert f"127.0.0.1:{port} is already in use" in completed.stderr
    assert not (tmp_path / ".bee" / "supervisor" / "status.json").exists()


def test_restart_command_restarts_every_service_one_at_a_time(
    supervisor_factory: Callable[..., SupervisorProcess],
) -> None:
    supervisor = supervisor_factory(
        f"[services.a]\ncommand = {fake('sleep')}\n[services.a.restart]\nstart_seconds = 0.1\n"
        f"[services.b]\ncommand = {fake('sleep')}\n[services.b.restart]\nstart_seconds = 0.1\n"
    )
    before = {
        r["service"]: r["pid"]
        for r in supervisor.wait_for(
            lambda s: len(s.pids()) == 2 and all(r["state"] == "running" for r in s.replicas()) and s.replicas()
        )
    }
    asked = bee("supervise", "restart", "--state", str(supervisor.state))
    assert supervisor.process is not None
    assert asked.returncode == 0 and f"pid {supervisor.process.pid}" in asked.stdout
    after = supervisor.wait_for(
        lambda s: (
            all(r["state"] == "running" and r["pid"] not in before.values() for r in s.replicas()) and s.replicas()
        ),
        what="both services restarted",
    )
    assert [r["restarts"] for r in after] == [1, 1]
    log = supervisor.log("supervisor.log")
    a_stops = log.index("a/0: running -> stopping")
    a_runs_again = log.index("a/0: starting -> running", a_stops)
    assert log.index("b/0: running -> stopping") > a_runs_again  # one at a time: b stops only once a runs again


def test_restart_without_a_running_supervisor_says_so(tmp_path: Path) -> None:
    completed = bee("supervise", "restart", "--state", str(tmp_path))
    assert completed.returncode == 1 and "no supervisor is running on" in completed.stderr


def test_secrets_expanded_into_commands_are_never_logged(
    supervisor_factory: Callable[..., SupervisorProcess], tmp_path: Path
) -> None:
    secret = "s3cret-postgresql-password-0123456789"
    config = (
        f"[services.job]\ncommand = {fake('sleep', '--store', 'postgresql://bee:${DB_PASSWORD}@db/bee')}\n"
        "[services.job.restart]\nstart_seconds = 0.1\n"
        f"[services.checked]\ncommand = {fake('stdio')}\ncontract = true\n"
        f"version_command = {fake('--version', '--json', '--token', '${DB_PASSWORD}')}\n"
        '[services.checked.health]\ncheck = "mcp"\n'
        "[services.checked.restart]\nstart_retries = 0\n"
    )
    # The version command fails (its file is missing) while the handshake answers: the refusal quotes the command.
    env = {
        "DB_PASSWORD": secret,
        "FAKE_HOST_VERSION_FILE": str(tmp_path / "missing.json"),
        "FAKE_HEALTH_VERSION_FILE": str(write_version(tmp_path / "installed.json")),
    }
    supervisor = supervisor_factory(config, env=env)
    job = supervisor.wait_state("job", "running")
    assert secret in Path(f"/proc/{job['pid']}/cmdline").read_text()  # the program did get the value
    refused = supervisor.wait_state("checked", "fatal")
    assert "--token '${DB_PASSWORD}'" in refused["reason"]  # the command as written, not as run
    assert "postgresql://bee:${DB_PASSWORD}@db/bee" in supervisor.log("job-0.log")
    everything = [supervisor.log(p.name) for p in (supervisor.state / "logs").iterdir()]
    everything += [(supervisor.state / "status.json").read_text(), supervisor.output()]
    assert not [text for text in everything if secret in text]
