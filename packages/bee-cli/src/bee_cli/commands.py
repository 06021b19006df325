"""Commands that belong to the `bee` command itself rather than to one host package."""

from __future__ import annotations

import json
from pathlib import Path

import click


def register(cli: click.Group) -> None:
    cli.add_command(doctor)


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
    """Start each installed stdio host (and each of its views) once per protocol era and check it against the
    contracts."""
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
                f"{mark} {name:<14} {check.era:<11} protocol {check.protocol or '-':<11} "
                f"{check.tools} tools  {check.seconds:.2f}s"
            )
            for problem in check.problems:
                click.echo(f"     - {problem}")
    if not checks:
        raise click.ClickException("no stdio host is installed (install bee-core)")
    if not all(check.ok for check in checks):
        raise SystemExit(1)
