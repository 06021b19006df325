"""Shared test helpers: the anyio backend, sample checkouts, and real host processes behind the official client."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

# A run that changes a tracked file fails, naming it (tests write under tmp_path): the guard's hooks, registered by
# being names in this conftest.
from tests.harness.tracked import pytest_sessionfinish, pytest_sessionstart, pytest_terminal_summary  # noqa: F401

if TYPE_CHECKING:  # the fixtures import the harness lazily, when a test asks for it
    from tests.harness.postgres import PostgresServer
    from tests.harness.supervisor import SupervisorProcess
    from tests.harness.tracker import TrackerProcess

FIXTURES = Path(__file__).parent / "fixtures"

# The stdio hosts tests start are cold unless a test asks for the warm path (host_mode): BEE_WARM=0 reaches every
# process started with this environment, and the helpers below pass it to the clients that give a host only their
# own default environment (the official SDK's and the TypeScript SDK's stdio transports).
os.environ["BEE_WARM"] = "0"

# Hypothesis fails an example that takes over 200 ms by default: a timing assertion, which a shared 2-core machine
# trips at random. Examples here are judged on their results only.
settings.register_profile("bee", deadline=None)
settings.load_profile("bee")

#: The two protocol eras every host serves: the 2025-11-25 handshake and 2026-07-28 per-request envelopes.
ERAS = ("legacy", "2026-07-28")


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


def _private_user(folder: Path) -> dict[str, str]:
    """A home of the test's own, and its configuration directory inside it.

    Both are set because Bee's per-user settings are found from ``$XDG_CONFIG_HOME`` or else ``~/.config``, and MCP
    clients (the Python SDK, the TypeScript SDK) start stdio hosts with only a few variables, ``HOME`` among them:
    either way every process of the test finds the same folder, and none finds the real user's.
    """
    home = folder / "home"
    (home / ".config").mkdir(parents=True, exist_ok=True)
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}


@pytest.fixture(scope="session", autouse=True)
def _session_user(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The same for what session- and module-scoped fixtures start, before any test's own user exists."""
    chosen = _private_user(tmp_path_factory.mktemp("session-user"))
    saved = {name: os.environ.get(name) for name in chosen}
    os.environ.update(chosen)
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(autouse=True)
def bee_user(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Every test runs as a user of its own: its per-user settings (and anything else under ``~``) start empty, and
    no test reads or writes the real user's ``~/.config`` — nor do the processes it starts, which inherit this."""
    chosen = _private_user(tmp_path_factory.mktemp("user"))
    for name, value in chosen.items():
        monkeypatch.setenv(name, value)
    return chosen


def _chromium_missing() -> bool:
    from bee_design.capture.settings import browser_executable

    return not Path(browser_executable()).exists() and not os.environ.get("BEE_REQUIRE_CHROMIUM")


#: Marks a test module that drives the system Chromium: skipped where it is not installed, unless required (CI).
NEEDS_CHROMIUM = pytest.mark.skipif(
    _chromium_missing(), reason="Chromium is not installed (CI installs Debian's chromium)"
)


def bee_executable() -> Path:
    """The installed `bee` console script, exactly what an editor launches."""
    exe = Path(sys.executable).parent / "bee"
    assert exe.exists(), f"the bee script is not installed next to {sys.executable}; run ./dev test"
    return exe


def make_checkout(target: Path) -> Path:
    """Copy the sample checkout into ``target`` and return it."""
    shutil.copytree(FIXTURES / "checkout", target)
    return target


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return make_checkout(tmp_path / "checkout")


def wire_size(result: Any) -> int:
    """The size of a tool result as the SDK puts it on the wire (what resultBytes and budgets measure)."""
    dumped = result.model_dump_json(
        by_alias=True, exclude_none=True, include={"content", "structured_content", "is_error"}
    )
    return len(dumped.encode())


def error_of(result: Any) -> dict[str, Any]:
    """The error envelope of a failed tool result, checked for the shape every client can read.

    A failure is ``isError`` with the envelope as JSON in its one text content and no ``structuredContent``
    (clients built on the TypeScript SDK validate structuredContent against the success outputSchema).
    """
    assert result.is_error is True, result
    assert result.structured_content is None, result.structured_content
    [content] = result.content
    body: dict[str, Any] = json.loads(content.text)
    assert set(body) >= {"error", "code", "retryable", "outcome_unknown"}, body
    return body


async def expect_tool_errors(client: Any, calls: list[tuple[str, dict[str, Any], str, str]]) -> None:
    """Each (tool, arguments, code, text) call must fail with that contracts code and a message containing text."""
    for tool, arguments, code, text in calls:
        body = error_of(await client.call_tool(tool, arguments))
        assert body["code"] == code, (tool, body)
        assert text in body["error"], (tool, body)


# -- cold and warm: how an editor's stdio host is reached -------------------------------------------------------

#: The two ways `bee mcp serve` and `bee design mcp` serve: in their own process, or through a warm host.
MODES = ("cold", "warm")
#: What the host_mode fixture chose for the running test: the mode, and what it adds to a host's environment.
_MODE: dict[str, Any] = {"mode": "cold", "env": {"BEE_WARM": "0"}}
#: What the front end prints when it serves cold because no warm host could be had.
WARM_DECLINED = "serving in this process"


def mode_env() -> dict[str, str]:
    """The variables that put a host started now in the running test's mode (cold unless host_mode says warm)."""
    return dict(_MODE["env"])


def warm_env(runtime: Path) -> dict[str, str]:
    """A warm front end's variables: its own private runtime directory (and so its own warm supervisor), a generous
    wait (a loaded machine starts a host slowly), and hosts that leave soon after their last session."""
    return {
        "BEE_WARM": "1",
        "XDG_RUNTIME_DIR": str(runtime),
        "BEE_WARM_WAIT_SECONDS": "120",
        "BEE_WARM_IDLE_SECONDS": "5",
        "BEE_WARM_SUPERVISOR_IDLE_SECONDS": "30",
    }


def stop_warm(runtime: Path) -> None:
    """Stop the warm supervisor of ``runtime`` (and with it every host it keeps), if one runs."""
    env = {**os.environ, **warm_env(runtime)}
    subprocess.run(
        [str(bee_executable()), "supervise", "stop", "--warm"], env=env, capture_output=True, timeout=120, check=False
    )


@pytest.fixture(scope="module")
def warm_runtime() -> Iterator[Path]:
    """A private runtime directory for one test module's warm supervisor and hosts, stopped and removed after it.

    Short, under /tmp: a Unix socket's path is at most 107 bytes.
    """
    folder = Path(tempfile.mkdtemp(prefix="bw", dir="/tmp"))  # mkdtemp makes it 0700 and unique
    yield folder
    stop_warm(folder)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=MODES)
def host_mode(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test once cold and once warm: the hosts core_client, design_client and mode_env start follow it.

    A test module opts in with ``pytestmark = pytest.mark.usefixtures("host_mode")``; its warm runs share one warm
    supervisor (warm_runtime), as editors on one machine do.
    """
    env = warm_env(request.getfixturevalue("warm_runtime")) if request.param == "warm" else {"BEE_WARM": "0"}
    _MODE.update(mode=request.param, env=env)
    yield request.param
    _MODE.update(mode="cold", env={"BEE_WARM": "0"})


@asynccontextmanager
async def stdio_host(argv: list[str], cwd: Path, era: str, env: dict[str, str] | None) -> AsyncIterator[Any]:
    """The official MCP client in ``era`` on `bee ARGV` started in ``cwd``, in the running test's mode.

    In the warm mode the front end must have reached a warm host: a silent fall back to serving cold would let
    the warm runs test the cold path, so its stderr is read for the line that says so.
    """
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=str(bee_executable()), args=argv, cwd=cwd, env={**(env or {}), **mode_env()})
    with tempfile.TemporaryFile("w+") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=era, read_timeout_seconds=60) as client:
            if _MODE["mode"] == "warm":
                await client.list_tools()  # answered once the front end is attached, or serving cold
                errlog.seek(0)
                said = errlog.read()
                assert WARM_DECLINED not in said, f"the front end served cold: {said}"
            yield client


@contextmanager
def environment(env: dict[str, str] | None) -> Iterator[None]:
    """``env`` laid over the process environment while the block runs (what an in-process host reads)."""
    if not env:
        yield
        return
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _serve_options(extra: tuple[str, ...]) -> tuple[bool, Path | None]:
    """``--discovery`` and ``--instance-root DIR`` out of `bee mcp serve` arguments (the only ones tests pass)."""
    discovery, instance_root, rest = False, None, list(extra)
    while rest:
        option = rest.pop(0)
        if option == "--discovery":
            discovery = True
        elif option == "--instance-root":
            instance_root = Path(rest.pop(0))
        else:
            raise ValueError(f"core_client does not take {option!r}; use core_process for the real command line")
    return discovery, instance_root


@asynccontextmanager
async def core_client(checkout: Path, era: str, *extra: str, env: dict[str, str] | None = None) -> AsyncIterator[Any]:
    """The core host for ``checkout`` in this process, spoken to by the official MCP client in ``era``.

    The host is the one `bee mcp serve` builds (:func:`bee_core.host.build_host`, or the discovery view for
    ``--discovery``), served by the SDK's own server loop over its in-memory streams: every promise a tool call
    keeps — validation, limits, budgets, deadlines, the error envelope, both eras — is the host's, not the
    transport's, and is tested here at a fraction of a process's cost. What only a process shows (framing, stdin
    EOF, signals, foreign clients) uses :func:`core_process`. ``env`` is laid over the environment for the session,
    as it would be the process's.
    """
    from mcp import Client

    from bee_core.context import CoreContext
    from bee_core.host import build_discovery_host, build_host

    discovery, instance_root = _serve_options(extra)
    with environment(env):
        ctx = CoreContext.open(checkout, instance_root)
        host = build_discovery_host(ctx) if discovery else build_host(ctx)
        async with Client(host.build_server(), mode=era, read_timeout_seconds=60) as client:
            yield client


@asynccontextmanager
async def core_process(checkout: Path, era: str, *extra: str, env: dict[str, str] | None = None) -> AsyncIterator[Any]:
    """A real `bee mcp serve` subprocess in ``checkout`` (cold, or warm under host_mode), spoken to by the official
    MCP client in ``era``."""
    async with stdio_host(["mcp", "serve", *extra], checkout, era, env) as client:
        yield client


# -- PostgreSQL and the tracker -------------------------------------------------------------------------------

_PG_MISSING = None


def _pg_missing_reason() -> str | None:
    import os

    from tests.harness.postgres import REQUIRE_ENV, binaries

    if binaries() is None and not os.environ.get(REQUIRE_ENV):
        return "PostgreSQL server binaries are not installed (CI installs them and sets BEE_REQUIRE_POSTGRES=1)"
    return None


#: Store backends every tracker store test runs against.
BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "postgres",
        id="postgres",
        marks=pytest.mark.skipif(_pg_missing_reason() is not None, reason=str(_pg_missing_reason())),
    ),
]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    from tests.harness.postgres import PostgresServer, binaries

    bindir = binaries()
    assert bindir is not None, "PostgreSQL is required here (BEE_REQUIRE_POSTGRES is set) but initdb is missing"
    server = PostgresServer(bindir)
    server.start()
    yield server
    server.stop()


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty store location for each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "tracker.db")
    url: str = request.getfixturevalue("postgres_server").create_database()
    return url


@pytest.fixture
def tracker_factory(tmp_path: Path) -> Iterator[Callable[..., TrackerProcess]]:
    """Start `bee tracker serve` processes; all are stopped at the end of the test."""
    from tests.harness.tracker import TrackerProcess

    started: list[TrackerProcess] = []

    def start(
        store: str | None = None, *extra: str, home: Path | None = None, nofile: int | None = None
    ) -> TrackerProcess:
        process = TrackerProcess(home or tmp_path / f"tracker-{len(started)}", store, *extra)
        process.nofile = nofile
        process.start()
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


#: Tracker tests speak the 2025-11-25 handshake and, with "auto", discover and use 2026-07-28.
TRACKER_ERAS = ("legacy", "auto")


@pytest.fixture
def supervisor_factory(tmp_path: Path) -> Iterator[Callable[..., SupervisorProcess]]:
    """Start `bee supervise` processes on service files of the test's own; all are stopped at the end."""
    from tests.harness.supervisor import SupervisorProcess

    started: list[SupervisorProcess] = []

    def start(config: str, *, env: dict[str, str] | None = None, name: str = "", run: bool = True) -> SupervisorProcess:
        process = SupervisorProcess(tmp_path / (name or f"supervisor-{len(started)}"), config, env)
        started.append(process)
        return process.start() if run else process

    yield start
    for process in started:
        process.stop()


# -- order ------------------------------------------------------------------------------------------------------

#: Where the tests that start processes are: they run first, so that in `./dev test`'s workers the long modules
#: start together and the quick in-process ones fill in at the end, rather than one long module running alone last.
_PROCESS_HEAVY = ("tests/reliability/", "tests/e2e/", "tests/cli/test_collab_cli.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.startswith(_PROCESS_HEAVY))  # stable: file order within each part
