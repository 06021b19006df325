"""Where an import reads from: the Beads interchange forms on disk, and their lines, read in bounded pieces.

- A **legacy file** (``issues.jsonl`` of any era, or any stream of its lines such as stdin): one line per issue,
  labels, dependencies and comments inside it.
- A **backup directory** (``.beads/backup/``, written by ``bd backup`` between February and March 2026): one JSONL
  file per table — ``issues``, ``dependencies``, ``labels``, ``comments``, ``events``, ``config`` — and
  ``backup_state.json`` with the row counts.
- A **.beads directory** (or the checkout holding one): whichever of the two it holds — ``issues.jsonl`` (or
  ``beads.jsonl``, its name in October–November 2025) and ``backup/``; when it holds both, the newer, by the newest
  time written in each (the backup on a tie: it also has the history).

The directory a user names is trusted; what is in it came with the checkout, so every file is opened through
:class:`~bee_hostkit.paths.ConfinedRoot`: a symlink leading out of the directory is refused, and only regular files
are read. A line longer than :data:`MAX_LINE_BYTES` is refused instead of being gathered without end.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, Final, TypeVar

from bee_contracts import BeeError, ErrorCode, invalid
from bee_contracts.limits import KIB
from bee_hostkit.paths import ConfinedRoot
from bee_tracker.model import epoch
from bee_tracker.store import linekinds

L = TypeVar("L")

#: Longest line read (bd's own reader stops at 64 MiB too).
MAX_LINE_BYTES: Final = 64 * 1024 * KIB
#: Largest backup_state.json read (bd writes a few hundred bytes).
_STATE_MAX_BYTES: Final = 64 * KIB
#: The tables of bd backup's dump, in the order an import reads them (issues before what refers to them).
TABLES: Final = ("issues", "labels", "dependencies", "comments", "events", "config")
STATE_FILE: Final = "backup_state.json"
#: Names of the legacy file in a .beads directory: today's, then October–November 2025's.
LEGACY_NAMES: Final = ("issues.jsonl", "beads.jsonl")
_TIMES = ("updated_at", "closed_at", "created_at", "deleted_at")


def read_lines(stream: BinaryIO, *, where: str = "") -> Iterator[bytes]:
    """The lines of a binary stream (each with its line end, the last perhaps without).

    Raises:
        BeeError: ``invalid_argument`` when a line is longer than :data:`MAX_LINE_BYTES`.
    """
    number = 0
    while line := stream.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(line) > MAX_LINE_BYTES:
            raise invalid(
                f"{where}line {number} is longer than {MAX_LINE_BYTES // (1024 * KIB)} MiB; no Beads line is that "
                "long: is this a JSONL file? (nothing was imported)",
                line=number,
            )
        yield line


@dataclass
class Legacy:
    """A legacy ``issues.jsonl``: its lines, and how messages name it."""

    read: Callable[[], Iterator[bytes | str]]
    name: str
    #: What a message puts before a line number ("" for the one file named on the command line).
    where: str = ""

    def lines(self) -> Iterator[bytes | str]:
        return self.read()


def _lines_of(opener: Callable[[], AbstractContextManager[BinaryIO]], where: str) -> Callable[[], Iterator[bytes]]:
    def read() -> Iterator[bytes]:
        with opener() as stream:
            yield from read_lines(stream, where=where)

    return read


@dataclass
class Backup:
    """bd backup's table dump in one directory."""

    root: ConfinedRoot
    name: str
    #: backup_state.json, when the directory has one.
    state: dict[str, Any] | None = None

    def has(self, table: str) -> bool:
        return _exists(self.root, f"{table}.jsonl")

    def lines(self, table: str) -> Iterator[bytes]:
        """The lines of ``<table>.jsonl`` (nothing when the table's file is absent)."""
        if self.has(table):
            with _open(self.root, f"{table}.jsonl") as stream:
                yield from read_lines(stream, where=f"{table}.jsonl ")


Source = Legacy | Backup


@dataclass
class Events:
    """An ``events.jsonl`` in bd backup's form, named on its own beside a legacy file (``--events``): read as a
    backup's events table is."""

    read: Callable[[], Iterator[bytes]]
    name: str
    state: dict[str, Any] | None = None

    def lines(self, table: str) -> Iterator[bytes]:
        """The file's lines, as the backup's ``events`` table (it has no other)."""
        return self.read() if table == "events" else iter(())


def events_file(path: Path) -> Events:
    """The events file at ``path`` (a file the user named: opened as it is)."""
    return Events(_lines_of(lambda: path.open("rb"), "events.jsonl "), str(path))


def events_lines(lines: Iterable[bytes | str]) -> Events:
    """Event rows already at hand, as :func:`events_file` reads them."""
    return Events(lambda: (line.encode() if isinstance(line, str) else line for line in lines), "lines")


@dataclass
class Choice:
    """The form an import reads, and why it was chosen over another one found beside it; and with a legacy file,
    the events file that brings its issues' history, if one was named."""

    source: Source
    form: str
    passed_over: dict[str, Any] = field(default_factory=dict)
    events: Events | None = None

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {"form": self.form, "path": self.source.name}
        if self.passed_over:
            described["passedOver"] = self.passed_over
        if self.events is not None:
            described["events"] = self.events.name
        return described


def _exists(root: ConfinedRoot, name: str) -> bool:
    try:
        root.open(name).close()
    except BeeError as exc:
        if exc.code == ErrorCode.NOT_FOUND:
            return False
        raise
    return True


def _is_directory(root: ConfinedRoot, name: str) -> bool:
    try:
        root.directory(name).close()
    except BeeError as exc:
        if exc.code in (ErrorCode.NOT_FOUND, ErrorCode.INVALID_ARGUMENT):
            return False
        raise
    return True


@contextmanager
def _open(root: ConfinedRoot, name: str) -> Iterator[BinaryIO]:
    """A confined file as a buffered stream (the descriptor stays the confined file's)."""
    with root.open(name) as opened, open(opened.fd, "rb", closefd=False) as stream:
        yield stream


@contextmanager
def _stdin() -> Iterator[BinaryIO]:
    yield sys.stdin.buffer


def stdin() -> Choice:
    """Lines from standard input: the legacy form."""
    return Choice(Legacy(_lines_of(_stdin, ""), "-"), "legacy")


def from_lines(lines: Iterable[bytes | str]) -> Choice:
    """Lines already at hand (bytes are decoded as UTF-8 on import, so a bad byte is named with its line)."""
    return Choice(Legacy(lambda: iter(lines), "lines"), "legacy")


def _is_backup(root: ConfinedRoot) -> bool:
    """Whether ``root`` holds bd backup's dump: its state file, another table, or an issues file of table rows."""
    if _exists(root, STATE_FILE) or any(_exists(root, f"{t}.jsonl") for t in TABLES if t != "issues"):
        return True
    if not _exists(root, "issues.jsonl"):
        return False
    with _open(root, "issues.jsonl") as stream:
        first = stream.readline(_STATE_MAX_BYTES)
    try:
        record = json.loads(first)
    except ValueError:
        return False
    return isinstance(record, dict) and linekinds.is_table_issue_row(record)


def _backup(root: ConfinedRoot, name: str) -> Backup:
    """Raises: BeeError: ``invalid_argument`` when the dump has no issues table or its state file is unreadable."""
    if not _exists(root, "issues.jsonl"):
        raise invalid(f"{name} looks like a bd backup but has no issues.jsonl; nothing was imported")
    state = None
    if _exists(root, STATE_FILE):
        with root.open(STATE_FILE) as opened:
            if opened.size > _STATE_MAX_BYTES:
                raise invalid(
                    f"{name}/{STATE_FILE} is {opened.size} bytes; bd writes a few hundred; nothing was imported"
                )
            try:
                state = json.loads(opened.read())
            except ValueError:
                raise invalid(
                    f"{name}/{STATE_FILE} is not JSON; remove it to import the tables as they are (nothing was "
                    "imported)"
                ) from None
        if not isinstance(state, dict):
            raise invalid(f"{name}/{STATE_FILE} is not a JSON object; remove it to import the tables as they are")
    return Backup(root, name, state)


def _newest(lines: Iterable[bytes | str]) -> float:
    """The newest time any record of ``lines`` was written (0 when none says)."""
    newest = 0.0
    for raw in lines:
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            for name in _TIMES:
                value = record.get(name)
                when = epoch(value) if isinstance(value, str) else None
                if when is not None and when > newest:
                    newest = when
    return newest


def _backup_time(backup: Backup) -> float:
    written = backup.state.get("timestamp") if backup.state else None
    when = epoch(written) if isinstance(written, str) else None
    return when if when is not None else _newest(backup.lines("issues"))


def choose(path: Path) -> Choice:
    """The form at ``path``: a legacy file, a backup directory, or a .beads directory (see the module docstring).

    Raises:
        BeeError: ``invalid_argument`` (``not_found`` for a missing path) saying what was looked for.
    """
    if not path.exists():
        raise BeeError(ErrorCode.NOT_FOUND, f"no file or directory at {path}", details={"path": str(path)})
    if not path.is_dir():
        return Choice(Legacy(_lines_of(lambda: path.open("rb"), ""), str(path)), "legacy")
    root = ConfinedRoot(path)
    name = str(path)
    if not _is_backup(root) and not any(_exists(root, n) for n in LEGACY_NAMES) and _is_directory(root, ".beads"):
        root, name = root.directory(".beads"), str(path / ".beads")
    if _is_backup(root):
        return Choice(_backup(root, name), "backup")
    legacy_name = next((n for n in LEGACY_NAMES if _exists(root, n)), None)
    backup = None
    if _is_directory(root, "backup"):
        inner = root.directory("backup")
        if _is_backup(inner):
            backup = _backup(inner, f"{name}/backup")
    if legacy_name is None and backup is None:
        raise invalid(
            f"{name} holds no Beads data: looked for {' or '.join(LEGACY_NAMES)} and a bd backup (backup/ with "
            f"issues.jsonl and {STATE_FILE}); name the file to import, or - for stdin (nothing was imported)"
        )
    legacy = None
    if legacy_name is not None:
        opened = legacy_name
        legacy = Legacy(_lines_of(lambda: _open(root, opened), f"{opened} "), f"{name}/{opened}", where=f"{opened} ")
    if legacy is None:
        assert backup is not None
        return Choice(backup, "backup")
    if backup is None:
        return Choice(legacy, "legacy")
    legacy_time, backup_time = _newest(legacy.lines()), _backup_time(backup)
    if legacy_time > backup_time:
        return Choice(legacy, "legacy", {"path": backup.name, "form": "backup", "why": "older"})
    return Choice(backup, "backup", {"path": legacy.name, "form": "legacy", "why": "not newer"})


def counting(choice: Choice, seen: Callable[[int], None]) -> Choice:
    """``choice`` with every line read from its source reported to ``seen`` (one at a time), for progress."""
    source = choice.source
    if isinstance(source, Legacy):
        read = source.read
        choice.source = replace(source, read=lambda: _counted(read(), seen))
    else:
        choice.source = _CountedBackup(source.root, source.name, source.state, seen=seen)
    return choice


def _counted(lines: Iterable[L], seen: Callable[[int], None]) -> Iterator[L]:
    for line in lines:
        seen(1)
        yield line


@dataclass
class _CountedBackup(Backup):
    """A backup whose lines, as they are read, are reported to ``seen``."""

    seen: Callable[[int], None] = field(default=lambda _: None)

    def lines(self, table: str) -> Iterator[bytes]:
        return _counted(super().lines(table), self.seen)
