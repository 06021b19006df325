"""`bee bd …`: Beads' command line on Bee's tracker, its commands, flags and ``--json`` answers bd's.

The group takes bd's global flags that mean something here (``--json``, ``--actor``, ``--readonly``, ``-C``), and
Bee's for where to work (``--home``/``--store``, or ``--url`` with ``--token-file``). A failure prints bd's way
(``Error: …`` on stderr, or under ``--json`` ``{"error": …, "schema_version": 1}`` on stdout) and exits 1; a bd
command or flag Bee does not have says so by name and exits 2 with nothing changed; click's own usage errors exit 2.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from bee_contracts import BeeError, ErrorCode
from bee_tracker.bd import gojson
from bee_tracker.bd.common import OPTIONS, Unsupported
from bee_tracker.bd.human import say
from bee_tracker.bd.session import ENV_URL, Options, read_only_tools
from bee_tracker.cli_common import home_option, store_option

#: bd's names for commands Bee has under another name (``bd view`` is ``bd show``).
ALIASES = {"view": "show", "new": "create", "done": "close", "status": "stats"}

_SYNC = (
    "the tracker keeps its data in its own store (SQLite or PostgreSQL) that every agent shares; there is no Dolt "
    "to commit, pull or push"
)
_MOLECULES = "Bee has no molecules, formulas, wisps' lifecycles or gates workflows"
#: bd commands Bee does not have, and why (or what to run instead).
NOT_HERE = {
    **dict.fromkeys(
        ("dolt", "sync", "vc", "branch", "federation", "remote", "diff", "history", "restore", "reset"), _SYNC
    ),
    **dict.fromkeys(
        ("mol", "formula", "cook", "pour", "wisp", "swarm", "gate", "ship", "merge-slot", "promote"), _MOLECULES
    ),
    "export": "use `bee tracker export [FILE]`, which writes Beads JSONL",
    "import": "use `bee tracker import SOURCE` (an issues.jsonl, a .beads directory or a bd backup)",
    "backup": "use `bee tracker export FILE`",
    "init": "use `bee tracker init`, or `bee tracker import .beads` to bring your Beads data",
    "doctor": "use `bee doctor`",
    "daemon": "the tracker runs under `bee up` (or `bee tracker serve`)",
    "daemons": "the tracker runs under `bee up` (or `bee tracker serve`)",
    "delete": "the tracker keeps every issue; close it with `bd close ID --reason ...`",
    "edit": "it opens an editor, which blocks agents; use `bd update ID --description ...`",
    **dict.fromkeys(
        (
            "config",
            "hooks",
            "setup",
            "onboard",
            "rename-prefix",
            "compact",
            "migrate",
            "worktree",
            "admin",
            "audit",
            "duplicates",
            "duplicate",
            "epic",
            "graph",
            "count",
            "stale",
            "children",
            "defer",
            "undefer",
            "assign",
            "note",
            "tag",
            "todo",
            "quick",
            "human",
            "where",
            "info",
            "ping",
            "kv",
            "remember",
            "memories",
            "forget",
            "linear",
            "jira",
            "github",
            "gitlab",
            "notion",
            "ado",
            "relate",
            "supersede",
            "purge",
            "gc",
            "cleanup",
            "flatten",
            "rename",
            "repo",
            "rules",
            "sql",
            "state",
            "statuses",
            "types",
            "upgrade",
            "lint",
            "orphans",
            "preflight",
            "prompt",
            "query",
            "tips",
            "thanks",
            "feedback",
            "context",
            "batch",
            "bootstrap",
            "completion",
            "quickstart",
            "last-touched",
        ),
        "bee bd serves ready, list, show, search, blocked, stats, create, update, close, reopen, dep, label, "
        "comments and prime",
    ),
}


class BdGroup(click.Group):
    """The `bee bd` group: bd's aliases, bd's commands Bee lacks refused by name, and bd's way of failing."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, ALIASES.get(cmd_name, cmd_name))
        if found is None and cmd_name in NOT_HERE:
            return _refusal(cmd_name, NOT_HERE[cmd_name])
        return found

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BeeError as exc:
            _fail(ctx, exc.message, 1)
        except Unsupported as exc:
            _fail(ctx, exc.message, exc.exit_code)
        return None


def _fail(ctx: click.Context, message: str, code: int) -> None:
    found = ctx.meta.get(OPTIONS)
    if found is not None and found.as_json:
        click.echo(gojson.error(message), nl=False)
    else:
        say(f"Error: {message}", err=True)
    ctx.exit(code)


def _refusal(name: str, why: str) -> click.Command:
    """A command standing for bd's ``name``: it refuses, whatever it is given."""

    @click.command(name, hidden=True, add_help_option=False, context_settings={"ignore_unknown_options": True})
    @click.argument("ignored", nargs=-1, type=click.UNPROCESSED)
    def refuse(ignored: tuple[str, ...]) -> None:
        raise Unsupported(f"bd {name}", why)

    return refuse


class _ReadOnly:
    """A tracker whose writes are refused (bd's ``--readonly``, for worker sandboxes)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.where = inner.where

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def call(self, tool: str, args: Any) -> dict[str, Any]:
        if not read_only_tools().get(tool, False):
            raise BeeError(ErrorCode.FORBIDDEN, f"this command writes ({tool}), which --readonly does not allow")
        data: dict[str, Any] = self._inner.call(tool, args)
        return data

    def each(self, tool: str, many: Any) -> list[dict[str, Any]]:
        return (
            [self.call(tool, args) for args in many]
            if not read_only_tools().get(tool, False)
            else self._inner.each(tool, many)
        )


class _Guarded(Options):
    """Options whose tracker refuses writes."""

    def tracker(self) -> Any:
        return _ReadOnly(super().tracker())


def _chdir(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
    if value is not None:
        try:
            os.chdir(value)
        except OSError as exc:
            raise click.BadParameter(f"cannot change to {value} ({exc.strerror or exc})") from None


@click.group("bd", cls=BdGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--json", "as_json", is_flag=True, help="Output in JSON format (also accepted after the command).")
@click.option(
    "--actor",
    default=None,
    help="Who writes, locally (default $BEADS_ACTOR, $BD_ACTOR, your login name). A tracker over HTTP writes as "
    "its token's actor.",
)
@click.option("--readonly", is_flag=True, help="Read-only mode: block write operations (for worker sandboxes).")
@click.option(
    "-C",
    "--directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    expose_value=False,
    is_eager=True,
    callback=_chdir,
    help="Change to this directory before running the command (like git -C).",
)
@home_option
@store_option
@click.option(
    "--url", default=None, help=f"A tracker over HTTP, its MCP endpoint (http://HOST:PORT/mcp); default ${ENV_URL}."
)
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The bearer token for --url (a private file of yours); default $BEE_TRACKER_TOKEN.",
)
@click.option(
    "--sandbox", is_flag=True, hidden=True, expose_value=False, help="bd's: disables auto-sync (Bee never syncs)."
)
@click.option("-q", "--quiet", is_flag=True, hidden=True, expose_value=False, help="bd's: accepted.")
@click.pass_context
def bd(
    ctx: click.Context,
    *,
    as_json: bool,
    actor: str | None,
    readonly: bool,
    home: Path | None,
    store_url: str | None,
    url: str | None,
    token_file: Path | None,
) -> None:
    """Beads' command line on Bee's tracker: the bd commands people and agents already type (ready, list, show,
    search, blocked, stats, create, update, close, reopen, dep, label, comments, prime), with bd's flags and --json
    answers, on the local store or a team's tracker (--url). `bee bd install-shim DIR` writes an opt-in `bd`
    launcher for instruction files that say `bd`."""
    options = (_Guarded if readonly else Options)(
        home=home, store_url=store_url, url=url, token_file=token_file, actor=actor, as_json=as_json
    )
    ctx.meta[OPTIONS] = options  # shared with every command below it
    ctx.call_on_close(options.close)


def _add_commands() -> None:
    from bee_tracker.bd import links, prime, reading, shim, showing, writing

    for command in (
        reading.ready,
        reading.list_,
        reading.search,
        reading.blocked,
        showing.show,
        showing.stats,
        writing.create,
        writing.update,
        writing.close,
        writing.reopen,
        links.dep,
        links.label,
        links.comments,
        prime.prime,
        shim.install_shim,
    ):
        bd.add_command(command)


_add_commands()


def register(cli: click.Group) -> None:
    cli.add_command(bd)


def warm_up(folder: str, *, again: bool = False) -> None:
    """What `bee bd`'s warm answerer (:mod:`bee_cli.answerer`) runs before it serves: a session of commands on a
    scratch store in ``folder`` (the answerer's own, private), and the modules a command over HTTP loads, so that
    each command's process finds every module imported and every cache filled. ``again``: the reading commands
    only, on the store the first run made — what each spare runs once forked, to make its own copy of the pages a
    command touches before a command waits on it. Output is dropped."""
    import contextlib
    import io
    import json

    store = os.path.join(folder, "warm.db")

    def run(*args: str) -> str:
        out = io.StringIO()
        # A warm-up that fails still warmed what it reached.
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(io.StringIO()),
            contextlib.suppress(Exception, SystemExit),
        ):
            bd.main(["--store", store, "--actor", "warm-up", *args], prog_name="bee bd", standalone_mode=False)
        return out.getvalue()

    if not again:
        import bee_tracker.bd.remote  # noqa: F401  -- the MCP client and HTTP stack of --url

        run("create", "Warm up", "-t", "bug", "-p", "1", "--json")
        run("create", "Warm up too", "--description", "<&>", "--json")
        for args in (["ready"], ["list"], ["search", "warm", "--json"], ["blocked", "--json"], ["stats", "--json"]):
            run(*args)
        run("prime")
    listed = run("list", "--json")
    run("ready", "--json")
    try:
        first = json.loads(listed)[0]["id"]
    except (ValueError, LookupError, TypeError):
        return
    run("show", "--json", str(first))
