"""Render docs/reference/cli.md from the installed command tree: ``python -m bee_cli.reference FILE``."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import click

from bee_cli.group import make_cli

_HEADER = "<!-- Generated from the installed `bee` command by `./dev docs`; do not edit by hand. -->\n\n"


def _walk(
    command: click.Command, path: list[str], parent: click.Context | None
) -> list[tuple[list[str], click.Command, click.Context]]:
    # make_context applies each command's context_settings (help option names, width), as a real invocation would.
    ctx = command.make_context(path[-1], [], parent=parent, resilient_parsing=True)
    found = [(path, command, ctx)]
    if isinstance(command, click.Group):
        for name in sorted(command.list_commands(ctx)):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                found.extend(_walk(sub, [*path, name], ctx))
    return found


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(cli: click.Group | None = None) -> str:
    """Markdown for every command: usage, help, and a table of its options and arguments."""
    root = cli or make_cli()
    sections = [_HEADER, "# `bee` command reference\n"]
    for path, command, ctx in _walk(root, ["bee"], None):
        usage = " ".join(command.collect_usage_pieces(ctx))
        sections.append(f"\n## `{' '.join(path)}`\n\n```\n{' '.join(path)} {usage}\n```\n")
        if command.help:
            # Click keeps a docstring's indentation (it cleans it only when printing --help).
            sections.append("\n" + inspect.cleandoc(command.help) + "\n")
        rows = []
        for param in command.get_params(ctx):
            record = param.get_help_record(ctx)
            if isinstance(param, click.Argument):
                rows.append(
                    f"| `{param.human_readable_name}` (argument) | {'required' if param.required else 'optional'} |"
                )
            elif record is not None and not getattr(param, "hidden", False):
                names, text = record
                rows.append(f"| `{_cell(names)}` | {_cell(text)} |")
        if rows:
            sections.append("\n| option | meaning |\n| --- | --- |\n" + "\n".join(rows) + "\n")
    return "".join(sections)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m bee_cli.reference FILE")
    Path(sys.argv[1]).write_text(render(), encoding="utf-8")
    print(sys.argv[1])
