"""ripgrep as the literal-search engine: located in the environment, spawned with an argv list, never a shell.

Every invocation searches the raw bytes of explicitly named files for one fixed string, case-sensitively, with no
configuration file, no encoding sniffing (a BOM is bytes like any other) and no binary-file heuristics. A match is
a matching line. Lines are reported by the byte offset of their first byte, never by number: numbering lines
makes ripgrep count every newline of the file, which costs as much again as the search
(:mod:`bee_core.artifacts.lines` derives the numbers of the few lines a page shows).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from bee_contracts import ErrorCode
from bee_hostkit import Deadline, ToolError

# One line of `--with-filename --null --byte-offset` output: path NUL offset ':' line.
_LISTED = re.compile(rb"([^\x00\n]*)\x00(\d+):([^\n]*)\n")
_FIRST = re.compile(rb"(\d+):([^\n]*)\n")


class Hit(NamedTuple):
    """One matching line: the byte offset of its first byte and its bytes, without the ``\\n`` terminator."""

    byte_offset: int
    content: bytes


@functools.cache
def executable() -> str:
    """The ``rg`` that the ``ripgrep`` wheel installed next to this Python (else one on PATH).

    Raises:
        ToolError: ``internal`` when there is none (bee-core depends on the wheel, so the install is broken).
    """
    for directory in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = Path(directory) / "rg"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("rg")
    if found:
        return found
    raise ToolError(
        ErrorCode.INTERNAL,
        "ripgrep (rg) is not installed in Bee's environment; reinstall bee-core, which depends on the ripgrep wheel",
        retryable=False,
    )


def _argv(text: str, options: Sequence[str], paths: Sequence[Path]) -> list[str]:
    return [
        executable(),
        "--no-config",
        "--fixed-strings",
        "--case-sensitive",
        "--text",
        "--encoding=none",
        "--color=never",
        "--no-line-number",
        *options,
        "--regexp",
        text,
        "--",
        *map(str, paths),
    ]


def _env() -> dict[str, str]:
    # No configuration from the user's environment can change what a search means.
    return {key: value for key, value in os.environ.items() if not key.startswith("RIPGREP_")}


def _run(argv: list[str], deadline: Deadline) -> bytes:
    """ripgrep's whole output; killed at the deadline.

    Raises:
        ToolError: ``deadline_exceeded``; ``internal`` for ripgrep's own errors (exit status 2).
    """
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(  # noqa: S603 -- an argv list, no shell; the text is one argument
            argv, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL, env=_env()
        )
        watchdog = threading.Timer(deadline.remaining, process.kill)
        watchdog.daemon = True
        watchdog.start()
        try:
            assert process.stdout is not None
            with process.stdout:
                output = process.stdout.read()
            status = process.wait()
        finally:
            watchdog.cancel()
        deadline.check("searching artifacts")
        if status not in (0, 1):  # 1: no match
            stderr.seek(0)
            message = stderr.read(2000).decode("utf-8", "replace").strip()
            raise ToolError(ErrorCode.INTERNAL, f"ripgrep failed (exit status {status}): {message}", retryable=False)
    return output


def listing(paths: Sequence[Path], text: str, per_file: int, deadline: Deadline) -> dict[str, list[Hit]]:
    """The first ``per_file`` matching lines of each file (files without a match are absent).

    ripgrep stops reading a file once it has ``per_file`` of them, so a frequent text costs little here; a file
    that returns exactly ``per_file`` may have more, and the caller counts it with :func:`counts`.
    """
    if not paths:
        return {}
    options = ["--byte-offset", "--with-filename", "--null", "--no-heading", f"--max-count={per_file}"]
    found: dict[str, list[Hit]] = {}
    for path, offset, content in _LISTED.findall(_run(_argv(text, options, paths), deadline)):
        found.setdefault(os.fsdecode(path), []).append(Hit(int(offset), content))
    return found


def counts(paths: Sequence[Path], text: str, deadline: Deadline) -> dict[str, int]:
    """The number of matching lines per file (files without a match are absent)."""
    if not paths:
        return {}
    found: dict[str, int] = {}
    for line in _run(_argv(text, ["--count", "--with-filename", "--null"], paths), deadline).split(b"\n")[:-1]:
        path, _, number = line.rpartition(b"\x00")
        found[os.fsdecode(path)] = int(number)
    return found


def first(path: Path, text: str, count: int, deadline: Deadline) -> list[Hit]:
    """The first ``count`` matching lines of one file (ripgrep stops reading once it has them)."""
    # Never called with an empty list of paths: ripgrep would then search the working directory.
    options = ["--byte-offset", "--no-filename", f"--max-count={count}"]
    output = _run(_argv(text, options, [path]), deadline)
    return [Hit(int(offset), content) for offset, content in _FIRST.findall(output)]
