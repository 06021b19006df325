"""The root `bee` group and the plugin loading that fills it (everything but the stdio hosts' front end)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from importlib.metadata import entry_points

import click

from bee_cli.context import CONTEXT_SETTINGS
from bee_contracts import BeeError, version_info

#: Entry-point group through which packages contribute subcommands: ``name = "module:register"``.
ENTRY_POINT_GROUP = "bee.commands"

Plugin = Callable[[click.Group], None]


def _print_version(ctx: click.Context, as_json: bool) -> None:
    info = version_info()
    if as_json:
        click.echo(json.dumps(info, indent=2))
    else:
        click.echo(f"bee {info['version']} (contract {info['contractVersion']}, {info['contractDigest']})")
    ctx.exit(0)


class BeeGroup(click.Group):
    """The root group: a :class:`~bee_contracts.BeeError` from any command becomes a one-line ``Error: …`` and exit
    status 1, never a traceback, so commands raise it as they find it and none of them translates it itself."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        """Add ``cmd``; a name another package already took is an error at start-up, never a silent replacement.

        Raises:
            RuntimeError: naming both commands' modules, so whoever installed the second package can tell which.
        """
        name = name or cmd.name
        taken = self.commands.get(name) if name else None
        if taken is not None:
            raise RuntimeError(
                f"two installed packages both add the command `bee {name}` ({_origin(taken)} and {_origin(cmd)}); "
                "uninstall one of them"
            )
        super().add_command(cmd, name)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except BeeError as exc:
            raise click.ClickException(exc.message) from None


def _origin(command: click.Command) -> str:
    callback = command.callback
    return getattr(callback, "__module__", None) or type(command).__module__


def make_cli(plugins: Iterable[Plugin] | None = None) -> click.Group:
    """Build the root group; ``plugins`` defaults to every installed ``bee.commands`` entry point.

    Tests pass their plugins explicitly so the result does not depend on what happens to be installed.
    """

    @click.group(
        cls=BeeGroup,
        invoke_without_command=True,
        context_settings=dict(CONTEXT_SETTINGS),
    )
    @click.option("--version", "show_version", is_flag=True, help="Print the version, contract version and digest.")
    @click.option("--json", "as_json", is_flag=True, help="With --version: print JSON for machines.")
    @click.pass_context
    def cli(ctx: click.Context, show_version: bool, as_json: bool) -> None:
        """Bee: MCP hosts and tooling for coding agents working in real repositories."""
        if show_version:
            _print_version(ctx, as_json)
        if ctx.invoked_subcommand is None:
            click.echo(ctx.get_help())

    if plugins is None:
        plugins = [ep.load() for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)]
    for register in plugins:
        register(cli)
    return cli


def run(args: list[str]) -> None:
    """Run `bee ARGS` the click way: every command, and the stdio hosts served in this process (cold)."""
    make_cli()(args=args, prog_name="bee")
