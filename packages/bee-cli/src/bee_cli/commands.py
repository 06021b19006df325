"""Commands that belong to the `bee` command itself rather than to one host package."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from bee_cli.setup_mcp import (
    EDITORS,
    TOKEN_ENV,
    Editor,
    Outcome,
    TrackerAccess,
    apply,
    bee_command,
    check_env_name,
    check_token,
    check_url,
    mint_command,
)


def register(cli: click.Group) -> None:
    cli.add_command(doctor)
    cli.add_command(setup_mcp)


@click.command()
@click.option(
    "--checkout",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=".",
    show_default=True,
    help="Checkout the hosts are started in.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def doctor(checkout: Path, as_json: bool) -> None:
    """Start each installed stdio host (and each of its views) once per protocol era, cold and through a warm host,
    and check it against the contracts."""
    import anyio

    from bee_cli.doctor import run_checks

    checks = anyio.run(run_checks, checkout.resolve())
    if as_json:
        click.echo(json.dumps([check.__dict__ for check in checks], indent=2))
    else:
        for check in checks:
            mark = "ok  " if check.ok else "FAIL"
            name = f"{check.host}/{check.view}" if check.view else check.host
            click.echo(
                f"{mark} {name:<14} {check.mode:<5} {check.era:<11} protocol {check.protocol or '-':<11} "
                f"{check.tools} tools  {check.seconds:.2f}s"
            )
            for problem in check.problems:
                click.echo(f"     - {problem}")
    if not checks:
        raise click.ClickException("no stdio host is installed (install bee-core)")
    if not all(check.ok for check in checks):
        raise SystemExit(1)


@click.command(name="setup-mcp")
@click.option(
    "--tool",
    "tool",
    type=click.Choice(sorted(EDITORS)),
    required=True,
    help="The editor whose MCP configuration file to write.",
)
@click.option(
    "--project",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=".",
    show_default=True,
    help="Checkout the stdio hosts serve; the project files (.mcp.json, .cursor/, .vscode/) are written there. "
    "Windsurf's file is per user (~/.codeium/windsurf/mcp_config.json).",
)
@click.option("--remove", "removing", is_flag=True, help="Remove Bee's entries instead; never creates a file.")
@click.option(
    "--tracker-url",
    envvar="BEE_TRACKER_URL",
    default=None,
    help="The tracker's MCP endpoint (http://HOST:PORT/mcp); default $BEE_TRACKER_URL. Without it no tracker "
    "entry is written.",
)
@click.option(
    "--tracker-auth",
    type=click.Choice(["oauth", "token"]),
    default=None,
    help="How the editor gets into the tracker: oauth (it signs in through your browser the first time, from the "
    "tracker's own sign-in or your team's identity provider; no header, no token in the file) or token (an "
    "Authorization header with a pasted token). Default oauth, or token with --tracker-token-env or --literal-token. "
    "A tracker run with --sign-in token needs token.",
)
@click.option(
    "--tracker-token-env",
    default=None,
    help=f"Environment variable the editor reads the tracker token from when it connects (default {TOKEN_ENV}). "
    "VS Code's default is to prompt once and keep the token in its secret storage.",
)
@click.option(
    "--literal-token",
    is_flag=True,
    help="Write the token itself, read now from that environment variable, instead of a reference to it; the "
    "file is then made readable by you only. Keep such a file out of version control.",
)
def setup_mcp(
    *,
    tool: str,
    project: Path,
    removing: bool,
    tracker_url: str | None,
    tracker_auth: str | None,
    tracker_token_env: str | None,
    literal_token: bool,
) -> None:
    """Add the installed hosts to an editor's MCP configuration (or --remove them), keeping everything else.

    Stdio hosts (core, and design when installed) are started as `bee … --checkout PROJECT`; the tracker gets an
    HTTP entry with an Authorization header when its URL is given. Only Bee's entries change: every other byte of
    the file stays as it was. Invalid JSON is reported with its line and column, and a read-only file, a symlink
    leading outside the project and a file another program keeps saving are refused; the file is then left as it
    is.
    """
    from bee_contracts.hosts import installed_hosts

    editor = EDITORS[tool]
    project = project.resolve()
    try:
        urls = _tracker_access(
            editor, tracker_url, tracker_token_env, auth=tracker_auth, literal_token=literal_token, removing=removing
        )
        outcome = apply(
            editor,
            installed_hosts(),
            project=project,
            home=Path.home(),
            command=bee_command(),
            urls=urls,
            removing=removing,
        )
    except ValueError as exc:  # a file Bee will not change is a BeeError, which the root group reports
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"cannot write {exc.filename or 'the configuration'}: {exc.strerror}") from None
    if removing and not outcome.changes:
        state = "has no Bee entries" if outcome.path.exists() else "does not exist"
        click.echo(f"{editor.title}: nothing to remove ({outcome.path} {state})")
        return
    _report_changes(editor, outcome)
    if removing:
        return
    if editor.per_user:
        click.echo(f"This file is per user: its stdio entries serve {project}; run setup-mcp again to switch.")
    _warn_without_instance(project)
    access = urls.get("tracker")
    if access is not None:
        _say_how_it_signs_in(editor, project, access)


def _tracker_access(
    editor: Editor,
    tracker_url: str | None,
    tracker_token_env: str | None,
    *,
    auth: str | None,
    literal_token: bool,
    removing: bool,
) -> dict[str, TrackerAccess]:
    """The tracker entry to write, checked: none without a URL, and none when removing.

    Raises:
        ValueError: a bad variable name, URL or token, --literal-token without a URL to use it with, or a token
            option with --tracker-auth oauth.
    """
    if auth is None:
        auth = "token" if tracker_token_env or literal_token else "oauth"
    if auth == "oauth" and (tracker_token_env or literal_token):
        raise ValueError(
            "--tracker-auth oauth signs in without a token: leave out --tracker-token-env and --literal-token"
        )
    if auth == "oauth":
        if removing or not tracker_url:
            return {}
        return {"tracker": TrackerAccess(check_url(tracker_url), oauth=True)}
    # An editor that prompts for the token (VS Code) keeps it in its own secret storage unless told otherwise.
    env_name = tracker_token_env or (None if editor.token_prompt and not literal_token else TOKEN_ENV)
    if env_name is not None:
        check_env_name(env_name)
    if removing:
        return {}
    if tracker_url:
        literal = check_token(env_name, os.environ.get(env_name)) if literal_token and env_name else None
        return {"tracker": TrackerAccess(check_url(tracker_url), token_env=env_name, literal=literal)}
    if literal_token:
        raise ValueError("--literal-token needs --tracker-url (or $BEE_TRACKER_URL)")
    return {}


def _report_changes(editor: Editor, outcome: Outcome) -> None:
    """Print the file written and, one line each, what changed in it and which hosts were left out."""
    click.echo(f"{editor.title}: {outcome.path}{'' if outcome.written else ' (already up to date)'}")
    for change in outcome.changes:
        click.echo(f"  {change.action:<9} {change.name}")
    for name in outcome.skipped:
        click.echo(f"  {'skipped':<9} {name} (give --tracker-url to add it)")


def _say_how_it_signs_in(editor: Editor, project: Path, access: TrackerAccess) -> None:
    """Tell the user how the editor will get into the tracker: it signs in, or its token comes from the file, a
    prompt, or a variable."""
    if access.oauth and editor.oauth:
        click.echo(
            f"{editor.title} signs in to bee-tracker through your browser the first time it connects (OAuth: no "
            "token in the file). The tracker must run with --sign-in builtin (bee up runs it so) or --sign-in idp; "
            "for one that takes pasted tokens only, run this again with --tracker-auth token."
        )
        return
    if access.oauth:
        click.echo(
            f"{editor.title} cannot sign in to a remote MCP server through OAuth, so its entry sends a pasted token "
            "instead:"
        )
        access = access.for_editor(editor)
    if access.literal is not None:
        click.echo("The file holds the tracker token: it is readable by you only; keep it out of version control.")
    elif access.token_env is None:
        mint = mint_command(bee_command(), project)
        click.echo(
            f"{editor.title} asks for the tracker token the first time it starts bee-tracker: for a local tracker, "
            f"give it what this prints: {mint}"
        )
    else:
        click.echo(
            f"{editor.title} reads the tracker token from ${access.token_env}: start it where that is set, e.g. "
            f"{_mint_hint(project, access.token_env)} for a local tracker."
        )


def _mint_hint(project: Path, token_env: str) -> str:
    """The command that mints a local tracker's token into ``token_env``, working pasted into a new shell anywhere
    (:func:`bee_cli.setup_mcp.mint_command`). `X=$(…) && export X`, so a failure exports no empty token."""
    return f"{token_env}=$({mint_command(bee_command(), project)}) && export {token_env}"


def _warn_without_instance(project: Path) -> None:
    """Say so when the checkout has no Bee instance: the hosts start, but what they keep needs one."""
    from bee_contracts import BeeError
    from bee_contracts.layout import selected_instance

    try:
        found = selected_instance(project)
    except BeeError:
        found = None
    if found is None:
        click.echo(
            f"warning: {project} has no Bee instance (.bee) yet; the hosts start without one, but retained "
            f"artifacts, skill providers and plans are kept in it. Create it: bee init --checkout {project}",
            err=True,
        )
