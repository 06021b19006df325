"""A warm process is no more exposed to the checkout than a cold one, and never lends one editor's environment to
another.

- A checkout (and the folders above it) that holds a module named like every module a Bee process could import —
  the standard library's and every installed distribution's — runs none of them: not in the front end, the warm
  supervisor it starts, the version check, the warm hosts (core and design), a cold host, `bee doctor`, or the
  command `bee setup-mcp` writes when no `bee` script is installed. A control run of ``python -m`` without Bee's
  safe path shows the trap is armed.
- Two editors of one checkout that differ in a proxy are served by two hosts, each started with exactly what its
  identity covers; a token sent for one never passes through the other's proxy.
- A checkout deleted and created again under the same path gets a host of its own, which serves the new folder.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bee_cli.setup_mcp import bee_command
from bee_contracts import launch
from bee_contracts.warm import read_environment
from tests.conftest import bee_executable, make_checkout, stop_warm, warm_env
from tests.core.skills_helpers import skill_md
from tests.harness import warm
from tests.harness.editor import serve, session
from tests.harness.skills_server import SkillsServer

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A runtime directory of this test's own: every warm process it sees was started by the test."""
    folder = Path(tempfile.mkdtemp(prefix="bw", dir="/tmp"))
    yield folder
    stop_warm(folder)
    shutil.rmtree(folder, ignore_errors=True)


def importable_names() -> set[str]:
    """Every top-level name a Bee process could import: the standard library's and every installed
    distribution's."""
    names = set(sys.stdlib_module_names) | set(importlib.metadata.packages_distributions())
    return {name for name in names if name.isidentifier() and name != "__future__"}


def plant(folders: list[Path], markers: Path) -> int:
    """A module for every importable name in each of ``folders``; importing one leaves a file in ``markers``."""
    markers.mkdir(exist_ok=True)
    names = importable_names()
    for folder in folders:
        for name in names:
            # open is a builtin: the trap needs no import to spring.
            (folder / f"{name}.py").write_text(f"open({str(markers / name)!r}, 'w').close()\n")
    return len(names)


def sprung(markers: Path) -> list[str]:
    return sorted(path.name for path in markers.iterdir())


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=300, check=False)


PACKET = {
    "name": "bee_context_packet",
    "arguments": {
        "manifestJson": json.dumps({"selections": [{"id": "a", "path": "src/a.py", "representation": "outline"}]}),
        "budgetBytes": 8192,
    },
}


def test_modules_planted_in_the_checkout_and_above_it_run_in_no_bee_process(tmp_path: Path, runtime: Path) -> None:
    above = tmp_path / "above"
    checkout = make_checkout(above / "work" / "checkout")
    markers = tmp_path / "markers"
    count = plant([checkout, checkout.parent, above], markers)
    assert count > 300
    env = {**os.environ, **warm_env(runtime)}
    env.pop("PYTHONPATH", None)

    # The control: the same interpreter, asked the way Bee used to ask it, imports from the checkout.
    run([sys.executable, "-m", "bee_cli", "--version"], checkout, env)
    assert sprung(markers), "the planted modules would not have been imported: the test proves nothing"
    for marker in markers.iterdir():
        marker.unlink()

    calls = session({"method": "tools/list"}, {"method": "tools/call", "params": PACKET})
    # Warm: the front end, the warm supervisor it starts (in this folder), its version check and the host.
    core = serve([str(bee_executable()), "mcp", "serve"], checkout, env, calls)
    assert "result" in core[2] and not core[2]["result"].get("isError"), core
    assert "serving in this process" not in core["stderr"], core["stderr"]
    root = ["design", "mcp", "--stdio", "--root", str(checkout)]
    design = serve([str(bee_executable()), *root], checkout, env, session({"method": "tools/list"}))
    assert "result" in design[1], design
    assert warm.status(runtime).get("replicas"), "no warm host ran"
    # Cold, in this process.
    cold = {**env, "BEE_WARM": "0"}
    assert "result" in serve([str(bee_executable()), "mcp", "serve"], checkout, cold, calls)[2]
    # `bee doctor` starts every stdio host, cold and warm, in the checkout.
    doctor = run([str(bee_executable()), "doctor", "--checkout", "."], checkout, env)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    # What `bee setup-mcp` writes for an editor when no `bee` script is installed, started in the checkout.
    assert bee_command()[0] == str(bee_executable())  # here the script is installed; the fallback is:
    fallback = [*launch.bee(), "mcp", "serve"]
    assert "result" in serve(fallback, checkout, cold, calls)[2]

    assert sprung(markers) == []


# -- one editor's environment, another's session -----------------------------------------------------------------


class Recorder:
    """A TCP server that keeps every byte it is sent and answers nothing useful: a proxy only one editor set."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.received = bytearray()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                while data := conn.recv(65536):
                    self.received += data
                    if b"\r\n\r\n" in data:
                        conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        return
            except OSError:
                return


def host_pid(runtime: Path, checkout: Path) -> int:
    return int(warm.running_host(runtime, f"core {checkout.resolve()}")["pid"])


def warm_pids(runtime: Path, checkout: Path) -> set[int]:
    return {
        int(r["pid"])
        for r in warm.status(runtime).get("replicas", [])
        if r.get("address") == f"core {checkout.resolve()}" and r.get("pid")
    }


def test_an_editors_proxy_never_carries_another_editors_token(tmp_path: Path, runtime: Path, checkout: Path) -> None:
    skill = skill_md("git-workflow", "Branch and commit the way this team does.")
    recorder = Recorder()
    base = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    base.update(warm_env(runtime))
    with SkillsServer({"skills": [{"path": "git-workflow", "body": skill}]}, tmp_path) as provider:
        for args in (["init"], ["skill", "bridge", "add", "team", "--mcp", provider.url, "--token-env", "TEAM_TOKEN"]):
            done = run([str(bee_executable()), *args], checkout, base)
            assert done.returncode == 0, done.stderr
        query = {"name": "bee_skill_search", "arguments": {"query": "git"}}
        search = session({"method": "tools/call", "params": query})
        editor_a = {**base, "HTTP_PROXY": f"http://127.0.0.1:{recorder.port}", "TEAM_TOKEN": "token-of-a"}
        editor_b = {**base, "TEAM_TOKEN": "token-of-b"}
        # A's host is started first and would be shared if the proxy were not part of its identity.
        first = serve([str(bee_executable()), "mcp", "serve"], checkout, editor_a, search)[1]
        assert b"token-of-a" in recorder.received, first  # A's proxy is real: A's own call went through it
        second = serve([str(bee_executable()), "mcp", "serve"], checkout, editor_b, search)[1]
        assert not second["result"].get("isError"), second
        assert "team/git-workflow" in json.dumps(second["result"]["structuredContent"])
    assert b"token-of-b" not in recorder.received
    pids = warm_pids(runtime, checkout)
    assert len(pids) == 2, warm.status(runtime)
    # Each host's process environment is what its identity covers, and nothing else of its editor's.
    environments = []
    for pid in pids:
        raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        environments.append(dict(entry.decode().split("=", 1) for entry in raw if entry))
    expected = sorted(json.dumps(read_environment(editor), sort_keys=True) for editor in (editor_a, editor_b))
    assert sorted(json.dumps(environment, sort_keys=True) for environment in environments) == expected


# -- a checkout created again under the same path ----------------------------------------------------------------


def test_a_checkout_created_again_under_the_same_path_gets_a_host_of_its_own(tmp_path: Path, runtime: Path) -> None:
    checkout = make_checkout(tmp_path / "checkout")
    env = {**os.environ, **warm_env(runtime)}
    index = {
        "name": "bee_context_packet",
        "arguments": {
            "manifestJson": json.dumps({"selections": [{"id": "n", "path": "new.py", "representation": "index"}]}),
            "budgetBytes": 8192,
        },
    }
    first = serve([str(bee_executable()), "mcp", "serve"], checkout, env, session({"method": "tools/list"}))
    assert "result" in first[1], first
    old_pid = host_pid(runtime, checkout)
    checkout.rename(tmp_path / "old")  # kept, so its inode is not handed straight back
    make_checkout(checkout)
    (checkout / "new.py").write_text("x = 1\n")
    again = session({"method": "tools/call", "params": index})
    reply = serve([str(bee_executable()), "mcp", "serve"], checkout, env, again)[1]
    assert not reply["result"].get("isError"), reply
    assert "new.py" in json.dumps(reply["result"])
    assert old_pid in warm_pids(runtime, checkout) and len(warm_pids(runtime, checkout)) == 2, warm.status(runtime)
