"""`bee bd …` run in this process, as the console script runs it, and real Beads exports in a store."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from bee_tracker.store import open_store

#: Real exports from public repositories (see tests/fixtures/beads/SOURCES.tsv).
EXPORTS = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "beads").glob("*.jsonl"))
#: The actor local commands write as.
ALICE = "alice@example.com"


def bd(*argv: str, store: str | None = None, env: dict[str, str] | None = None, stdin: str | None = None) -> Result:
    """`bee bd [--store STORE] ARGV` through the root group the console script runs (the tracker's commands only),
    its exit code and its two streams. An exception the command did not turn into an exit code is raised: a real
    `bee` would have printed a traceback, which no test expects."""
    from bee_cli.group import make_cli
    from bee_tracker.cli import register

    args = ["bd", *(["--store", store] if store else []), *argv]
    result = CliRunner().invoke(make_cli([register]), args, env=env, input=stdin, prog_name="bee")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Result(result.exit_code, result.stdout, result.stderr)


class Result(subprocess.CompletedProcess[str]):
    """A command's outcome: ``returncode``, ``stdout``, ``stderr``, and its JSON answer."""

    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        super().__init__(["bee", "bd"], code, stdout, stderr)

    @property
    def json(self) -> Any:
        assert self.returncode == 0, (self.returncode, self.stdout, self.stderr)
        return json.loads(self.stdout)


def loaded(url: str, export: Path) -> str:
    """The store at ``url`` holding ``export``; returns ``url``."""
    store = open_store(url)
    try:
        store.import_lines(export.read_bytes().splitlines())
    finally:
        store.close()
    return url
