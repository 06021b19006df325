"""ripgrep as the literal-search engine: located in the environment, spawned with an argv list, never a shell.

Every invocation searches the raw bytes of explicitly named files for one fixed string, case-sensitively, with no
configuration file, no encoding sniffing (a BOM is bytes like any other) and no binary-file heuristics. A match is
a matching line. Lines are reported by the byte offset of their first byte, never by number: numbering lines
makes ripgrep count every newline of the file, which costs as much again as the search
(:mod:`bee_core.artifacts.lines` derives the numbers of the few lines a page shows).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import selectors
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from bee_contracts import BeeError, ErrorCode
from bee_hostkit import Deadline
from bee_hostkit.environ import environ

_READ = 1024 * 1024
#: Lines longer than this many bytes come back from ripgrep as a marker, not their content.
MAX_LINE_BYTES = 4096


class Hit(NamedTuple):
    """One matching line: the byte offset of its first byte and its bytes, without the ``\\n`` terminator.

    ``content`` is a marker instead of the line when the line is longer than :data:`MAX_LINE_BYTES`.
    """

    byte_offset: int
    content: bytes


@functools.cache
def executable() -> str:
    """The ``rg`` that the ``ripgrep`` wheel installed next to this Python (else one on PATH).

    Raises:
        BeeError: ``internal`` when there is none (bee-core depends on the wheel, so the install is broken).
    """
    for directory in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = Path(directory) / "rg"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("rg")
    if found:
        return found
    raise BeeError(
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
        # A long line is printed as a short marker instead; its bytes are read from the artifact when shown.
        f"--max-columns={MAX_LINE_BYTES}",
        *options,
        "--regexp",
        text,
        "--",
        *map(str, paths),
    ]


def _env() -> dict[str, str]:
    # No configuration from the user's environment can change what a search means.
    # The calling session's environment (bee_hostkit.environ), less ripgrep's own configuration.
    return {key: value for key, value in environ().items() if not key.startswith("RIPGREP_")}


def _run(argv: list[str], deadline: Deadline) -> bytes:
    """ripgrep's whole output; killed at the deadline.

    Raises:
        BeeError: ``deadline_exceeded``; ``internal`` for ripgrep's own errors (exit status 2).
    """
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(  # noqa: S603 -- an argv list, no shell; the text is one argument
            argv, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL, env=_env()
        )
        assert process.stdout is not None
        with contextlib.suppress(OSError, AttributeError):  # fewer, larger reads (Linux; best effort)
            fcntl.fcntl(process.stdout.fileno(), fcntl.F_SETPIPE_SZ, _READ)
        # Read in this thread with a selector (no watchdog thread per search); the end of output is the end of rg.
        parts: list[bytes] = []
        with process.stdout, selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            while True:
                # An expired deadline stops the search even when ripgrep's output is already waiting.
                if deadline.expired or not selector.select(deadline.remaining):
                    process.kill()
                    process.wait()
                    deadline.check("searching artifacts")
                    raise BeeError(ErrorCode.DEADLINE_EXCEEDED, "the search ran past its deadline")
                chunk = os.read(process.stdout.fileno(), _READ)
                if not chunk:
                    break
                parts.append(chunk)
        process.wait()
        output = b"".join(parts)
        if process.returncode not in (0, 1):  # 1: no match
            stderr.seek(0)
            message = stderr.read(2000).decode("utf-8", "replace").strip()
            raise BeeError(
                ErrorCode.INTERNAL, f"ripgrep failed (exit status {process.returncode}): {message}", retryable=False
            )
    return output


def listing(paths: Sequence[Path], text: str, per_file: int, deadline: Deadline) -> dict[str, bytes]:
    """The first ``per_file`` matching lines of each file, as raw ``offset:line`` blocks (see :func:`parse`).

    Files without a match are absent. ripgrep stops reading a file once it has ``per_file`` lines, so a frequent
    text costs little here; a block of exactly ``per_file`` lines may be incomplete, and the caller counts that
    file with :func:`counts`. Blocks stay raw because a page parses only the few lines it shows.
    """
    if not paths:
        return {}
    options = ["--byte-offset", "--with-filename", "--heading", "--null", f"--max-count={per_file}"]
    output = _run(_argv(text, options, paths), deadline)
    # Heading mode: "path NUL" then the file's lines, a blank line between files. Lines hold no NUL (text
    # artifacts have none), so NUL splits the output into paths and blocks unambiguously.
    parts = output.split(b"\x00")
    found: dict[str, bytes] = {}
    path = parts[0]
    for part in parts[1:]:
        separator = part.rfind(b"\n\n")  # matching lines are never empty, so only the separator doubles \n
        if separator < 0:  # the last file
            found[os.fsdecode(path)] = part
            break
        found[os.fsdecode(path)] = part[: separator + 1]
        path = part[separator + 2 :]
    return found


def first(path: Path, text: str, count: int, deadline: Deadline) -> bytes:
    """The first ``count`` matching lines of one file as a raw block (ripgrep stops reading once it has them)."""
    # Never called with an empty list of paths: ripgrep would then search the working directory.
    return _run(_argv(text, ["--byte-offset", "--no-filename", f"--max-count={count}"], [path]), deadline)


def parse(block: bytes, start: int, stop: int) -> list[Hit]:
    """Lines ``start`` to ``stop`` (0-based, exclusive) of a raw block from :func:`listing` or :func:`first`."""
    lines = block.split(b"\n", stop)[start:stop]
    hits = []
    for line in lines:
        offset, _, content = line.partition(b":")
        hits.append(Hit(int(offset), content))
    return hits


def counts(paths: Sequence[Path], text: str, deadline: Deadline) -> dict[str, int]:
    """The number of matching lines per file (files without a match are absent)."""
    if not paths:
        return {}
    found: dict[str, int] = {}
    for line in _run(_argv(text, ["--count", "--with-filename", "--null"], paths), deadline).split(b"\n")[:-1]:
        path, _, number = line.rpartition(b"\x00")
        found[os.fsdecode(path)] = int(number)
    return found
