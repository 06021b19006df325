"""MCP clients Bee did not write, run from Python: the official TypeScript SDK client and the MCP Inspector CLI.

Bee's own tests speak to its hosts through the Python SDK, which tolerates things the clients people actually use
(Claude Code, Cursor, VS Code, the MCP Inspector: all TypeScript) reject. These helpers run those clients as
subprocesses and hand back what they saw as parsed JSON.

The npm packages are pinned in ``tests/e2e/js/package-lock.json`` and installed by ``./dev test`` through
:func:`ensure_installed` (``python -m tests.harness.node``); tests only check the install is current
(:func:`require_installed`), so nothing is downloaded while tests run.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

JS_DIR = Path(__file__).resolve().parents[1] / "e2e" / "js"
NODE_MODULES = JS_DIR / "node_modules"
CALL_SCRIPT = JS_DIR / "call.mjs"
#: The Inspector's launcher (its `mcp-inspector` bin), run with node directly so no npx or registry is involved.
INSPECTOR_BIN = NODE_MODULES / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"
_STAMP = NODE_MODULES / ".bee-install-stamp"

#: CI sets this: missing node/npm is then a failure, not a skip.
REQUIRE_ENV = "BEE_REQUIRE_NODE"

#: The oldest node the pinned clients were run on (their packages declare 22; 20 works for what these tests use).
MIN_NODE_MAJOR = 20

#: Whole-process limit for one client run; a hung client fails the test instead of hanging the suite.
RUN_TIMEOUT = 180.0


class ForeignClientError(RuntimeError):
    """A client process failed in a way that is not an MCP answer (could not start, crashed, printed no JSON)."""


@dataclass(frozen=True)
class NodeTools:
    node: Path
    npm: Path
    npx: Path


def node_tools() -> NodeTools | None:
    """node, npm and npx from PATH, or None when any is missing or node is older than the pinned clients run on."""
    found = [shutil.which(name) for name in ("node", "npm", "npx")]
    if not all(found):
        return None
    node, npm, npx = (Path(path) for path in found if path)
    if _node_major(node) < MIN_NODE_MAJOR:
        return None
    return NodeTools(node, npm, npx)


@cache
def _node_version(node: Path) -> str:
    return subprocess.run([node, "--version"], capture_output=True, text=True, check=True, timeout=60).stdout.strip()


def _node_major(node: Path) -> int:
    return int(_node_version(node).lstrip("v").split(".")[0])


def _what_is_missing() -> str:
    node = shutil.which("node")
    if node and _node_major(Path(node)) < MIN_NODE_MAJOR:
        return f"node {_node_version(Path(node))} is older than {MIN_NODE_MAJOR}"
    return "node, npm and npx must all be on PATH"


def missing_reason() -> str | None:
    """Why the foreign-client tests cannot run here (None when they can, or when CI demands they run)."""
    if node_tools() is None and not os.environ.get(REQUIRE_ENV):
        return f"{_what_is_missing()} (CI installs node and sets {REQUIRE_ENV}=1)"
    return None


def _fingerprint() -> str:
    """The lock file decides what is installed; node's version decides whether installed code still fits."""
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((JS_DIR / name).read_bytes())
    tools = node_tools()
    if tools:
        digest.update(_node_version(tools.node).encode())
    return digest.hexdigest()


def is_current() -> bool:
    return _STAMP.is_file() and _STAMP.read_text() == _fingerprint() and INSPECTOR_BIN.is_file()


def ensure_installed() -> None:
    """`npm ci` the pinned clients into tests/e2e/js/node_modules unless the lock file is already installed.

    Scripts are not run: neither client needs an install script. Concurrent callers queue on a lock.
    """
    tools = node_tools()
    if tools is None:
        raise ForeignClientError(_what_is_missing())
    with (JS_DIR / "package-lock.json").open("rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_current():
            return
        completed = subprocess.run(
            [tools.npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
            cwd=JS_DIR,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if completed.returncode != 0:
            raise ForeignClientError(f"npm ci failed in {JS_DIR}:\n{completed.stdout}\n{completed.stderr}")
        _STAMP.write_text(_fingerprint())


def require_installed() -> NodeTools:
    """The tools, after checking the pinned clients are installed; never installs (tests must not download)."""
    tools = node_tools()
    assert tools is not None, f"{_what_is_missing()} ({REQUIRE_ENV} is set: the foreign-client tests must run)"
    assert is_current(), f"{NODE_MODULES} is missing or stale: run ./dev test or python -m tests.harness.node"
    return tools


# -- the official TypeScript SDK client (tests/e2e/js/call.mjs) ----------------------------------------------------


def stdio_server(
    command: str | Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """A server the TS client spawns: StdioClientTransport(command, args, cwd, env), in the running test's mode
    (cold unless host_mode says warm: the TS transport gives the host only its own defaults and ``env``)."""
    from tests.conftest import mode_env

    spec: dict[str, Any] = {"command": str(command), "args": list(args)}
    if cwd is not None:
        spec["cwd"] = str(cwd)
    spec["env"] = {**(env or {}), **mode_env()}
    return {"stdio": spec}


def http_server(url: str, token: str | None = None) -> dict[str, Any]:
    """A Streamable HTTP server; the token travels as ``Authorization: Bearer`` in requestInit headers."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return {"http": {"url": url, "headers": headers}}


def ts_client(
    server: dict[str, Any],
    calls: list[tuple[str, dict[str, Any]]],
    *,
    list_tools: bool = True,
    prompts: list[tuple[str, dict[str, str]]] | None = None,
    reads: Sequence[str] = (),
) -> Any:
    """Connect the TS SDK ``Client``, list tools, make ``calls`` in order, then with ``prompts`` list the prompts and
    get each, and read the resources ``reads`` names; return what the client reported.

    The answer is ``{"serverVersion", "instructions", "tools", "calls": [{"result": CallToolResult} | {"thrown":
    {class, code, message, data}}], "promptList", "prompts": [{"result": GetPromptResult} | {"thrown": …}], "reads":
    [{"result": ReadResourceResult} | {"thrown": …}]}``; a call the client rejects itself (output-schema validation)
    appears as ``thrown``.
    """
    tools = require_installed()
    request: dict[str, Any] = {
        "server": server,
        "listTools": list_tools,
        "calls": [{"name": name, "arguments": arguments} for name, arguments in calls],
        "reads": list(reads),
    }
    if prompts is not None:
        request["prompts"] = [{"name": name, "arguments": arguments} for name, arguments in prompts]
    completed = subprocess.run(
        [tools.node, CALL_SCRIPT],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=JS_DIR,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    if completed.returncode != 0:
        raise ForeignClientError(
            f"call.mjs exited {completed.returncode}\nstdout: {completed.stdout}\nstderr: {completed.stderr}"
        )
    return json.loads(completed.stdout)


# -- the MCP Inspector CLI -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InspectorRun:
    """One `mcp-inspector --cli --format json` run.

    ``result`` is the method's result (printed as ``{"result": ...}`` on stdout, also for a tool error);
    ``error`` is the ``{"code", "message", ...}`` envelope the CLI prints on stderr when it fails.
    Exit codes: 0 ok, 5 the tool returned ``isError: true``, 1 anything the client threw (including its own
    output-schema validation), 3 auth required, 4 unreachable.
    """

    returncode: int
    result: Any
    error: dict[str, Any] | None
    stdout: str
    stderr: str


def _last_json_line(text: str, key: str) -> Any:
    for line in reversed(text.splitlines()):
        try:
            parsed = json.loads(line)
        except ValueError:
            continue
        if isinstance(parsed, dict) and key in parsed:
            return parsed[key]
    return None


def inspector(
    target: list[str],
    *options: str,
    cwd: Path | None = None,
    headers: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
) -> InspectorRun:
    """Run ``mcp-inspector --cli --format json <options> <target>`` and parse what it printed.

    ``target`` is a stdio command with its arguments or ``[]`` for HTTP (then pass ``--transport http
    --server-url URL`` in ``options``); ``cwd`` becomes ``--cwd`` (the stdio server's directory), ``headers``
    ``--header "Name: value"``, ``env`` ``-e KEY=VALUE`` (a stdio server sees only these plus the SDK's defaults).
    The Inspector keeps state under ``$HOME/.mcp-inspector``; each run gets a throwaway HOME.
    """
    tools = require_installed()
    argv: list[str] = [str(tools.node), str(INSPECTOR_BIN), "--cli", "--format", "json", "--connect-timeout", "60000"]
    if cwd is not None:
        argv += ["--cwd", str(cwd)]
    for name, value in (headers or {}).items():
        argv += ["--header", f"{name}: {value}"]
    if target:  # a stdio server: in the running test's mode (see stdio_server)
        from tests.conftest import mode_env

        env = {**(env or {}), **mode_env()}
    for key, value in (env or {}).items():
        argv += ["-e", f"{key}={value}"]
    argv += options
    if target:
        argv += ["--", *target]
    with tempfile.TemporaryDirectory(prefix="bee-inspector-home-") as home:
        completed = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            env={**os.environ, "HOME": home},
            timeout=RUN_TIMEOUT,
            check=False,
        )
    result = _last_json_line(completed.stdout, "result")
    error = _last_json_line(completed.stderr, "error")
    if result is None and error is None:
        raise ForeignClientError(
            f"the Inspector exited {completed.returncode} without JSON\n"
            f"argv: {argv}\nstdout: {completed.stdout}\nstderr: {completed.stderr}"
        )
    return InspectorRun(completed.returncode, result, error, completed.stdout, completed.stderr)


def main() -> None:
    """`python -m tests.harness.node`: install the pinned clients (what ./dev test runs before pytest)."""
    if node_tools() is None:
        if os.environ.get(REQUIRE_ENV):
            sys.exit(f"{_what_is_missing()} ({REQUIRE_ENV} is set: the foreign-client tests must run)")
        print(f"{_what_is_missing()}: the foreign-client tests will be skipped", file=sys.stderr)
        return
    if not is_current():
        print("==> installing the pinned TypeScript MCP clients (npm ci in tests/e2e/js)", flush=True)
    ensure_installed()


if __name__ == "__main__":
    main()


# -- reading what the TypeScript client saw ------------------------------------------------------------------------

#: The keys every error envelope has (``details`` may come too).
ENVELOPE_KEYS = frozenset({"error", "code", "retryable", "outcome_unknown"})


def answered(call: dict[str, Any]) -> dict[str, Any]:
    """The CallToolResult the TS client returned; a client-side rejection (the -32602 bug) fails here, loudly."""
    assert "thrown" not in call, f"the TypeScript SDK client rejected the result: {call['thrown']}"
    result: dict[str, Any] = call["result"]
    return result


def success(result: dict[str, Any]) -> dict[str, Any]:
    """A successful result's structured content, which must equal the JSON of its text."""
    assert result.get("isError") in (False, None), result
    structured: dict[str, Any] = result["structuredContent"]
    assert json.loads(result["content"][0]["text"]) == structured
    return structured


def tool_error(result: dict[str, Any], code: str) -> dict[str, Any]:
    """A failed result in the shape foreign clients can read; returns the parsed envelope."""
    from bee_contracts.errors import CODES, ErrorCode

    assert result.get("isError") is True, result
    assert "structuredContent" not in result, f"an error must not carry structuredContent: {result}"
    block = result["content"][0]
    assert block["type"] == "text", result
    body: dict[str, Any] = json.loads(block["text"])
    assert ENVELOPE_KEYS <= set(body) <= ENVELOPE_KEYS | {"details"}, body
    assert body["code"] == code, body
    assert isinstance(body["error"], str) and body["error"].strip(), body
    assert body["retryable"] is CODES[ErrorCode(code)].retryable, body
    assert isinstance(body["outcome_unknown"], bool), body
    return body
