"""Progress of a long command on stderr: a rich bar on a terminal, a plain line now and then in a pipe.

A command that goes through many issues or lines (an import, an export, `bee bd stats` or `blocked`) counts them
as it goes. Nothing shows until :data:`LONG` of them have gone by, so short runs print nothing. On a terminal a
rich bar (transient: it is gone when the command ends) is redrawn in place; in a pipe, where a bar would be noise
in a log, one plain line is written each time another tenth of the total (or, with no total known, another
:data:`PLAIN_EVERY` items) is done, and a last one at the end. Either way it is stderr only, so an answer on stdout
is never touched. rich is imported only when a bar is drawn.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO, TypeVar

T = TypeVar("T")

#: How many items make a run long enough to show its progress.
LONG = 1000
#: With no total known, a plain line every this many items.
PLAIN_EVERY = 5000


class Progress:
    """The progress of one run: ``advance`` as items go by; ``close`` once done."""

    def __init__(self, label: str, total: int | None, unit: str, stream: TextIO) -> None:
        self.label, self.total, self.unit, self.stream = label, total, unit, stream
        self.done = 0
        self._terminal = stream.isatty()
        self._bar: Any = None
        self._task: Any = None
        self._next_line = self._step()
        self._shown = False

    def _step(self) -> int:
        return max(LONG, -(-self.total // 10)) if self.total else PLAIN_EVERY

    def advance(self, count: int = 1) -> None:
        self.done += count
        if self.done < LONG or (self.total is not None and self.total < LONG):
            return
        if self._terminal:
            self._draw()
        elif self.done >= self._next_line:
            self._line()
            self._next_line = (self.done // self._step() + 1) * self._step()

    def _line(self) -> None:
        of = f"/{self.total}" if self.total is not None else ""
        self.stream.write(f"{self.label}: {self.done}{of} {self.unit}\n")
        self.stream.flush()
        self._shown = True

    def _draw(self) -> None:
        if self._bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            columns = [TextColumn(self.label), BarColumn() if self.total else SpinnerColumn(), MofNCompleteColumn()]
            self._bar = Bar(*columns, TextColumn(self.unit), TimeElapsedColumn(), console=Console(file=self.stream))
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total)
        self._bar.update(self._task, completed=self.done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)
            self._bar.stop()
        elif self._shown and self.done != self._next_line - self._step():
            self._line()  # the end, unless the last line already said it


@contextmanager
def progress(
    label: str, total: int | None = None, unit: str = "issues", stream: TextIO | None = None
) -> Iterator[Progress]:
    """A :class:`Progress` on ``stream`` (stderr), closed when the block ends (the bar taken down on a failure too)."""
    shown = Progress(label, total, unit, stream or sys.stderr)
    try:
        yield shown
    finally:
        shown.close()


def counted(items: Iterable[T], shown: Progress) -> Iterator[T]:
    """``items``, advancing ``shown`` by one for each as it is taken."""
    for item in items:
        shown.advance()
        yield item
