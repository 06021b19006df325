"""The entries `bee setup-mcp` writes work: each editor's stdio entries start the installed hosts; its tracker entry
with the Authorization header expanded the way that editor expands it reaches a real tracker; and its default
tracker entry (URL only) leads a client to the tracker's sign-in, as the MCP authorization specification says."""

import json
import os
import re
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from bee_contracts import load_catalog
from bee_contracts.hosts import installed_hosts
from tests.conftest import WARM_DECLINED, bee_executable, warm_env
from tests.harness.tracker import TrackerProcess, tracker_client

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

EDITORS = {
    "claude": (".mcp.json", "mcpServers", "url"),
    "cursor": (".cursor/mcp.json", "mcpServers", "url"),
    "windsurf": (".codeium/windsurf/mcp_config.json", "mcpServers", "serverUrl"),
    "vscode": (".vscode/mcp.json", "servers", "url"),
}


def expand(value: str, env: dict[str, str], prompted: str) -> str:
    """What each editor sends: ${NAME} (Claude Code), ${env:NAME} (Cursor, Windsurf), ${input:id} (VS Code's
    prompt, answered with ``prompted``)."""
    value = re.sub(r"\$\{input:[^}]+\}", prompted, value)
    return re.sub(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env[m.group(1)], value)


async def test_every_editors_entries_start_the_stdio_hosts_and_reach_the_tracker(
    checkout: Path, tmp_path: Path, tracker_factory: Callable[..., TrackerProcess], warm_runtime: Path
) -> None:
    subprocess.run([str(bee_executable()), "init", "--checkout", str(checkout)], check=True, capture_output=True)
    tracker = tracker_factory(home=checkout / ".bee" / "tracker")  # the checkout's own, as `bee up` runs it
    token = tracker.token("ada@example.com")
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("BEE_TRACKER_HOME", "BEE_INSTANCE_ROOT")}
    env |= {"HOME": str(home), "BEE_TRACKER_URL": tracker.url, "BEE_TRACKER_TOKEN": token}
    stdio_hosts = [host.name for host in installed_hosts() if host.transport == "stdio"]
    assert "core" in stdio_hosts
    tracker_tools = [tool.name for tool in load_catalog("tracker")]
    for tool, (file, key, url_key) in EDITORS.items():
        completed = subprocess.run(
            [str(bee_executable()), "setup-mcp", "--tool", tool, "--project", str(checkout), "--tracker-auth", "token"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr
        assert token not in completed.stdout + completed.stderr
        base = home if tool == "windsurf" else checkout
        servers = json.loads((base / file).read_text())[key]

        # Every installed stdio host (core, and design when it is installed) starts from its entry, wherever the
        # editor starts it: the entry must not depend on the working directory. The same command line gets the
        # warm path (in this module's private runtime directory): nothing in the entry is there for it.
        assert {f"bee-{name}" for name in stdio_hosts} | {"bee-tracker"} == set(servers)
        for name in stdio_hosts:
            entry = servers[f"bee-{name}"]
            params = StdioServerParameters(
                command=entry["command"], args=entry["args"], cwd=tmp_path, env=warm_env(warm_runtime)
            )
            with tempfile.TemporaryFile("w+") as errlog:
                transport = stdio_client(params, errlog=errlog)
                async with Client(transport, mode="legacy", read_timeout_seconds=60) as client:
                    assert [t.name for t in (await client.list_tools()).tools] == [t.name for t in load_catalog(name)]
                errlog.seek(0)
                assert WARM_DECLINED not in errlog.read()

        remote = servers["bee-tracker"]
        assert token not in json.dumps(remote)
        prompted = token
        if tool == "vscode":  # the prompt's answer is what the command its description names prints
            [prompt] = json.loads((base / file).read_text())["inputs"]
            prompted = pasted(tmp_path, prompt["description"].rsplit(": ", 1)[1])
        scheme, _, sent = expand(remote["headers"]["Authorization"], env, prompted=prompted).partition(" ")
        assert scheme == "Bearer"
        async with tracker_client(remote[url_key], sent) as client:
            assert [t.name for t in (await client.list_tools()).tools] == tracker_tools


def pasted(cwd: Path, command: str) -> str:
    """What ``command`` prints run as a user pasting it into a new shell: bash, in ``cwd``, with a PATH that has
    no Bee and no Bee variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BEE_")}
    env["PATH"] = "/usr/bin:/bin"
    completed = subprocess.run(
        ["/bin/bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, (command, completed.stdout, completed.stderr)
    return completed.stdout.strip()


def test_every_editors_default_tracker_entry_leads_to_the_trackers_sign_in(
    checkout: Path, tmp_path: Path, tracker_factory: Callable[..., TrackerProcess]
) -> None:
    import httpx

    tracker = tracker_factory(None, "--sign-in", "builtin")
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BEE_")} | {"HOME": str(home)}
    for tool, (file, key, url_key) in EDITORS.items():
        completed = subprocess.run(
            [
                str(bee_executable()),
                "setup-mcp",
                "--tool",
                tool,
                "--project",
                str(checkout),
                "--tracker-url",
                tracker.url,
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr
        remote = json.loads(((home if tool == "windsurf" else checkout) / file).read_text())[key]["bee-tracker"]
        assert "headers" not in remote and remote[url_key] == tracker.url
        # What every one of these editors does first: connect without a token, read the challenge, follow it.
        answer = httpx.post(remote[url_key], json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30)
        assert answer.status_code == 401
        found = re.search(r'resource_metadata="([^"]+)"', answer.headers["www-authenticate"])
        assert found, answer.headers
        metadata = httpx.get(found.group(1), timeout=30).json()
        assert metadata["resource"] == remote[url_key]  # the resource is the entry's own URL (RFC 8707, RFC 9728)
        server = httpx.get(metadata["authorization_servers"][0] + "/.well-known/oauth-authorization-server", timeout=30)
        assert server.json()["registration_endpoint"].startswith(metadata["authorization_servers"][0])
