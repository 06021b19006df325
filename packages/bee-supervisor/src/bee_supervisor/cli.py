"""`bee supervise …` and `bee up`: run the long-lived hosts in the foreground, report on them, stop them.

Registered through the ``bee.commands`` entry point; everything heavier than click is imported inside commands.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from bee_contracts import launch

if TYPE_CHECKING:
    from bee_supervisor.config import SupervisorSpec
    from bee_supervisor.supervisor import Supervisor

#: `bee supervise status` exits with this when no supervisor runs on the state folder (as `systemctl status`).
NOT_RUNNING = 3


def register(cli: click.Group) -> None:
    cli.add_command(supervise)
    cli.add_command(up)


_config_option = click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Service file (TOML; see services/ and docs/hosts/supervisor.md). Default: the built-in one, every "
    "installed HTTP host (the tracker) on its own port.",
)
_state_option = click.option(
    "--state",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="State folder (lock, status.json, logs). Default: the service file's [supervisor] state, else "
    "<instance>/supervisor for the nearest .bee (or $BEE_INSTANCE_ROOT), else ./.bee/supervisor.",
)


def _spec(config_file: Path | None, state: Path | None) -> SupervisorSpec:
    from bee_supervisor.config import load_config
    from bee_supervisor.defaults import default_config

    spec = load_config(config_file) if config_file else default_config(Path.cwd())
    if state is not None:
        state = state.resolve()
        logs_inside = spec.logs == spec.state / "logs"
        spec = dataclasses.replace(spec, state=state, logs=state / "logs" if logs_inside else spec.logs)
    return spec


def _run(supervisor: Supervisor) -> NoReturn:
    """Run ``supervisor`` to its end, then leave the process at once with its exit code.

    By the time :meth:`Supervisor.run` returns every child has ended, the status and logs are written and the state
    folder's lock is released: nothing is left for the interpreter's shutdown to do but a last garbage collection
    over everything the supervisor imported, which took seconds on a busy machine after "every service stopped".
    """
    import anyio

    supervisor.prepare()
    code = anyio.run(supervisor.run)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


@click.group(invoke_without_command=True)
@_config_option
@_state_option
@click.option(
    "--service",
    "-s",
    "services",
    multiple=True,
    metavar="NAME",
    help="Run only this service of the file (repeatable).",
)
@click.pass_context
def supervise(ctx: click.Context, config_file: Path | None, state: Path | None, services: tuple[str, ...]) -> None:
    """Run the services of a service file in the foreground: start them, check their health and contract,
    restart them with backoff, restart them one at a time when the installed Bee changes, and stop them cleanly
    on SIGTERM or Ctrl-C (SIGHUP restarts them one at a time)."""
    if ctx.invoked_subcommand is not None:
        return
    from bee_supervisor.supervisor import Supervisor

    spec = _spec(config_file, state)
    supervisor = Supervisor(spec, services=services)
    _run(supervisor)


_warm_option = click.option(
    "--warm",
    is_flag=True,
    help="The warm supervisor of this installation (the editors' stdio hosts) instead of a service file's.",
)


def _state_of(config_file: Path | None, state: Path | None, warm: bool = False) -> Path:
    if warm:
        from bee_contracts.warm import WarmUnavailable, warm_dir

        try:
            return Path(warm_dir(os.environ))
        except WarmUnavailable as exc:
            raise click.ClickException(str(exc)) from None
    if state is not None:
        return state.resolve()
    return _spec(config_file, None).state


@supervise.command()
@_config_option
@_state_option
@_warm_option
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(config_file: Path | None, state: Path | None, warm: bool, as_json: bool) -> None:
    """Each service's state, pid, uptime, restarts, version and last health result, and a line on the warm
    hosts (--warm lists them). Exits 3 when no supervisor is running on the state folder."""
    from bee_supervisor.lock import running_pid
    from bee_supervisor.status import read_status, render, warm_summary, with_uptime

    folder = _state_of(config_file, state, warm)
    pid = running_pid(folder)
    document = read_status(folder)
    if as_json:
        payload = {"running": pid is not None, "pid": pid, "state": str(folder), **with_uptime(document or {})}
        click.echo(json.dumps(payload, indent=2))
    elif document is None:
        click.echo(f"no supervisor has run on {folder}" if pid is None else f"supervisor pid {pid} is starting")
    else:
        click.echo(render(with_uptime(document), pid))
    if not warm and not as_json:
        summary = warm_summary(os.environ)
        if summary:
            click.echo(summary)
    if pid is None:
        sys.exit(NOT_RUNNING)


@supervise.command()
@_config_option
@_state_option
@click.option(
    "--timeout",
    default=120.0,
    show_default=True,
    type=click.FloatRange(1, 3600),
    help="Seconds to wait for the supervisor to stop its services and exit.",
)
@_warm_option
def stop(config_file: Path | None, state: Path | None, timeout: float, warm: bool) -> None:
    """Ask the supervisor running on the state folder to stop (SIGTERM) and wait until it has; with --warm, `bee bd`'s
    warm answerers of this installation too (a command they run finishes first)."""
    from bee_supervisor.lock import LOCK_FILE, holder_pid

    folder = _state_of(config_file, state, warm)
    locks = [folder / LOCK_FILE, *(sorted(folder.glob("answer-*.lock")) if warm else [])]
    stopped = [(lock, pid) for lock in locks if (pid := _signal_holder(lock)) is not None]
    if not stopped:
        click.echo(f"no supervisor is running on {folder}" + (" (nor any answerer)" if warm else ""))
        return
    deadline = time.monotonic() + timeout
    for lock, pid in stopped:
        what = "the supervisor" if lock.name == LOCK_FILE else "the answerer"
        while holder_pid(lock) is not None:
            if time.monotonic() > deadline:
                raise click.ClickException(f"{what} (pid {pid}) has not stopped after {timeout:g} s")
            time.sleep(0.1)
        click.echo(f"stopped {what} (pid {pid}) on {folder}")


def _signal_holder(lock: Path) -> int | None:
    """SIGTERM to the process holding ``lock``; its pid, or None when none holds it."""
    from bee_supervisor.lock import holder_pid

    pid = holder_pid(lock)
    if pid is not None and pid > 0:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    return pid


@supervise.command()
@_config_option
@_state_option
@_warm_option
def restart(config_file: Path | None, state: Path | None, warm: bool) -> None:
    """Restart every service one replica at a time (SIGHUP to the running supervisor): after rotating a key or
    changing what a host reads at start. Returns at once; `bee supervise status` shows the progress."""
    from bee_supervisor.lock import running_pid

    folder = _state_of(config_file, state, warm)
    pid = running_pid(folder)
    if pid is None or pid < 0:
        raise click.ClickException(f"no supervisor is running on {folder}")
    os.kill(pid, signal.SIGHUP)
    click.echo(f"asked the supervisor (pid {pid}) to restart every service, one replica at a time")


@supervise.command()
@click.option("--detach", is_flag=True, help="Run in the background, detached from this terminal.")
def warm(detach: bool) -> None:
    """Run this installation's warm supervisor, which keeps the editors' stdio hosts (`bee mcp serve`, `bee design
    mcp`) warm for their front ends. The first front end that needs it starts it; it exits once it has held no host
    for a while. Its state is in the private runtime directory (see `bee supervise status --warm`)."""
    from bee_supervisor.warm import run

    code = run(detach=detach)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


# -- bee up ---------------------------------------------------------------------------------------------------


def _bee(*args: str, cwd: Path) -> None:
    """Run another `bee` command (in a process of its own: the supervisor imports no host package)."""
    completed = subprocess.run(  # noqa: S603 -- our own interpreter running the bee command
        launch.bee(*args), cwd=cwd, check=False
    )
    if completed.returncode != 0:
        raise click.ClickException(f"`bee {' '.join(args)}` failed (exit status {completed.returncode})")


def _shown_bee() -> tuple[str, str | None]:
    """How the user should type `bee` in a new shell, and a note when that is its full path: the bare name when it
    is this one on PATH, else the full path (a bare `bee` in a fresh shell would be another, or none)."""
    own = Path(sys.executable).parent / "bee"
    on_path = shutil.which("bee")
    if on_path and Path(on_path).resolve() == own.resolve():
        return "bee", None
    if not own.exists():
        return "bee", None
    folder = shlex.quote(str(own.parent))
    return shlex.quote(str(own)), f'to type `bee` alone, put its folder on PATH: export PATH={folder}:"$PATH"'


def _tracker_home(checkout: Path) -> Path:
    """Where the supervised tracker keeps its key, as `bee tracker serve` finds it from the checkout."""
    from bee_contracts.layout import tracker_home

    return tracker_home(checkout).resolve()


def next_steps(checkout: Path, urls: dict[str, str], state: Path) -> list[str]:
    """The commands `bee up` prints, each working when pasted into a new shell in any folder: the full path of
    `bee` unless it is on PATH, and the tracker's home, the checkout and the state folder named, never implied."""
    bee, note = _shown_bee()
    q = shlex.quote
    home = q(str(_tracker_home(checkout)))
    lines: list[str] = []
    tracker = f" --tracker-url {q(urls['tracker'])}" if "tracker" in urls else ""
    lines.append(f"  set up your editor:  {bee} setup-mcp --tool claude --project {q(str(checkout))}{tracker}")
    if "tracker" in urls:
        board = q(urls["tracker"].removesuffix("/mcp"))
        lines.append(
            f"  open the web board:  {bee} tracker open --home {home} --actor you@example.com --url {board} --browser"
        )
        # The editor signs in through the browser (the tracker's own sign-in): its consent page asks the person to
        # sign in to the board first, with the link the command above prints. No token is pasted anywhere.
        lines.append(
            "  (your editor signs in to the tracker through the browser the first time it connects: sign in to the "
            "board with that link when the page asks, then allow it; no token is pasted anywhere)"
        )
        # `X=$(…) && export X`: a failing command leaves no empty token exported (`export X=$(…)` hides the failure).
        lines.append(
            f"  mint a token:        BEE_TRACKER_TOKEN=$({bee} tracker token --home {home} --actor you@example.com)"
            " && export BEE_TRACKER_TOKEN"
        )
        lines.append("  (a token is for scripts and curl: editors sign in instead)")
    lines.append(f"  status:              {bee} supervise status --state {q(str(state))}")
    if note:
        lines.append(f"  ({note})")
    return lines


@click.command()
@click.option(
    "--checkout",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=".",
    show_default=True,
    help="The checkout to run Bee for: initialised if needed; the tracker keeps its data in its .bee folder.",
)
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="The tracker's port (default 8765).")
def up(checkout: Path, port: int | None) -> None:
    """Run Bee for one person: initialise the checkout if needed, create the tracker's key, and supervise the
    tracker (SQLite, http://127.0.0.1:8765/mcp) in the foreground until Ctrl-C."""
    from bee_contracts.hosts import installed_hosts
    from bee_contracts.layout import selected_instance
    from bee_supervisor.defaults import default_config
    from bee_supervisor.supervisor import Supervisor

    checkout = checkout.resolve()
    installed = {entry.name for entry in installed_hosts()}
    if selected_instance(checkout) is None and "core" in installed:  # bee-core provides `bee init`
        _bee("init", "--checkout", str(checkout), cwd=checkout)
    if "tracker" in installed:
        _bee("tracker", "init", cwd=checkout)
    spec = default_config(checkout, ports={"tracker": port} if port else None, directory=checkout)
    if not spec.services:
        raise click.ClickException("no long-lived host is installed to supervise (install bee-tracker)")

    def settled(supervisor: Supervisor) -> None:
        from bee_supervisor.states import State

        failed = [r for r in supervisor.replicas() if r.status.state is not State.RUNNING]
        if failed:
            for replica in failed:
                click.echo(f"{replica.name} did not start: {replica.status.reason}", err=True)
            click.echo(f"logs: {supervisor.spec.logs}", err=True)
            supervisor.request_stop(exit_code=1)
            return
        lines = [f"Bee is up ({supervisor.spec.logs} holds the logs). Ctrl-C stops it."]
        urls: dict[str, str] = {}
        for service in supervisor.spec.services:
            if service.listen is not None:
                host, service_port = service.listen
                urls[service.name] = f"http://{host}:{service_port}/mcp"
                lines.append(f"  {service.name:<21}{urls[service.name]}")
        lines += next_steps(checkout, urls, supervisor.spec.state)
        click.echo("\n".join(lines))

    supervisor = Supervisor(spec, on_settled=settled)
    _run(supervisor)
