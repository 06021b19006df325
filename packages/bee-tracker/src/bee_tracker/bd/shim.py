"""`bee bd install-shim DIR`: an opt-in ``bd`` launcher, so instruction files that say ``bd …`` reach Bee unchanged.

The launcher is a two-line POSIX shell script in a directory the user names, running this installation's ``bee bd``
with the arguments it was given (``exec`` with the arguments quoted as the shell received them: nothing is
re-parsed). It is written only on purpose and never replaces a real ``bd``: with one on ``PATH``, or another file
named ``bd`` in the directory, it is refused unless ``--force`` says so. Nothing is added to ``PATH``: the command
prints the line that does it, for the user to choose. ``--remove`` takes away a launcher it wrote, and only such a
file.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

import click

from bee_contracts import BeeError, ErrorCode

#: The line that marks a launcher this command wrote (and may replace or remove).
MARK = "# Written by `bee bd install-shim`"


def _bee() -> Path:
    """The ``bee`` console script of this installation (beside its Python), which the launcher runs."""
    found = Path(sys.executable).parent / "bee"
    if found.is_file() and os.access(found, os.X_OK):
        return found.absolute()
    on_path = shutil.which("bee")
    if on_path is None:
        raise BeeError(ErrorCode.NOT_FOUND, "cannot find the bee command of this installation to point the shim at")
    return Path(on_path).absolute()


def _ours(path: Path) -> bool:
    """Whether ``path`` is a launcher this command wrote."""
    try:
        with path.open("rb") as handle:
            return MARK.encode() in handle.read(4096)
    except OSError:
        return False


def script(bee: Path) -> str:
    """The launcher's text."""
    return (
        f"#!/bin/sh\n{MARK}: Beads' `bd` commands, answered by Bee's tracker.\nexec {shlex.quote(str(bee))} bd \"$@\"\n"
    )


@click.command("install-shim")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--force", is_flag=True, help="Install even though another bd is on PATH, or replace a bd file in DIRECTORY."
)
@click.option("--remove", is_flag=True, help="Remove the bd launcher this command wrote in DIRECTORY.")
def install_shim(directory: Path, force: bool, remove: bool) -> None:
    """Write a `bd` launcher into DIRECTORY that runs `bee bd` (for instruction files that say `bd ...`). Never onto
    PATH by itself, never over a real bd without --force."""
    directory = directory.expanduser().absolute()
    target = directory / "bd"
    if remove:
        _remove(target)
        return
    if not directory.is_dir():
        raise click.UsageError(f"{directory} is not a directory; create it first (the shim goes where you choose)")
    existing = shutil.which("bd")
    if existing and Path(existing).absolute() != target and not _ours(Path(existing)) and not force:
        raise click.UsageError(
            f"a bd is already on your PATH ({existing}); a shim would shadow it, or be shadowed by it. Add --force to "
            "install the shim anyway"
        )
    if (target.exists() or target.is_symlink()) and not _ours(target) and not force:
        raise click.UsageError(f"{target} exists and is not a bee shim; add --force to replace it")
    temporary = directory / f".bd.{os.getpid()}.tmp"
    temporary.write_text(script(_bee()), encoding="utf-8")
    temporary.chmod(0o755)
    os.replace(temporary, target)
    click.echo(f"wrote {target}: `bd ...` now runs `bee bd ...`")
    paths = [Path(p).absolute() for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    if directory not in paths:
        click.echo(f'{directory} is not on your PATH; to use it: export PATH={shlex.quote(str(directory))}:"$PATH"')
    elif shutil.which("bd") and Path(str(shutil.which("bd"))).absolute() != target:
        click.echo(f"note: {shutil.which('bd')} comes before it on your PATH and still answers `bd`", err=True)


def _remove(target: Path) -> None:
    if not target.exists():
        click.echo(f"no shim at {target}; nothing removed")
        return
    if not _ours(target):
        raise click.UsageError(f"{target} is not a bee shim; it was left alone")
    target.unlink()
    click.echo(f"removed {target}")
