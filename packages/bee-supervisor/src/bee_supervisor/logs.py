"""Log files: one per replica for what its process prints, one for the supervisor, all rotated by size.

The supervisor reads each child's output from a pipe and writes it itself, line by line, so it can rotate the
file at a size limit (``NAME.log`` becomes ``NAME.log.1``, and so on up to the number of backups kept) without the
child knowing. Both kinds of file go through the standard library's ``RotatingFileHandler``.
"""

from __future__ import annotations

import logging
import os
import sys
from logging.handlers import RotatingFileHandler
from pathlib import Path

from bee_contracts import BeeError, ErrorCode

#: The supervisor's own log file, in the logs folder.
SUPERVISOR_LOG = "supervisor.log"


def log_name(service: str, replica: int) -> str:
    """``tracker-0.log``: the file a replica's output goes to."""
    return f"{service}-{replica}.log"


def check_writable(folder: Path) -> None:
    """Create ``folder`` if needed and prove a file can be written there.

    Raises:
        BeeError: ``invalid_argument`` naming the folder and what the system said.
    """
    probe = folder / f".write-test-{os.getpid()}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise BeeError(
            ErrorCode.INVALID_ARGUMENT,
            f"cannot write logs to {folder}: {exc.strerror or exc}; choose another folder with "
            '[supervisor] logs = "..." in the service file, or make it writable',
            details={"logs": str(folder)},
        ) from None


def _handler(path: Path, max_bytes: int, backups: int, pattern: str) -> RotatingFileHandler:
    handler = RotatingFileHandler(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
    handler.setFormatter(logging.Formatter(pattern))
    return handler


class OutputLog:
    """The rotated file one replica's output is written to (shared by the processes that fill its slot)."""

    def __init__(self, path: Path, max_bytes: int, backups: int) -> None:
        self.path = path
        self._logger = logging.Logger(f"bee.supervisor.output.{path.stem}")  # private: not in the logger tree
        self._logger.propagate = False
        self._logger.addHandler(_handler(path, max_bytes, backups, "%(message)s"))

    def line(self, raw: bytes) -> None:
        """Write one line the child printed (undecodable bytes are replaced, never dropped)."""
        self._logger.info("%s", raw.decode("utf-8", "replace").rstrip("\r"))

    def note(self, text: str) -> None:
        """Write a line of the supervisor's own into this file (a start, an exit), marked as such."""
        from datetime import UTC, datetime

        self._logger.info("--- bee supervise %s: %s", datetime.now(UTC).isoformat(timespec="milliseconds"), text)

    def close(self) -> None:
        for handler in list(self._logger.handlers):
            handler.close()
            self._logger.removeHandler(handler)


def supervisor_logger(folder: Path, max_bytes: int, backups: int, *, echo: bool) -> logging.Logger:
    """The ``bee.supervisor`` logger, writing to ``folder/supervisor.log`` (and to stderr with ``echo``)."""
    logger = logging.getLogger("bee.supervisor")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    close_logger(logger)
    logger.addHandler(_handler(folder / SUPERVISOR_LOG, max_bytes, backups, "%(asctime)s %(levelname)s %(message)s"))
    if echo:
        console = logging.StreamHandler(sys.stderr)
        console.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        logger.addHandler(console)
    return logger


def close_logger(logger: logging.Logger) -> None:
    """Close and remove every handler of ``logger``."""
    for handler in list(logger.handlers):
        handler.close()
        logger.removeHandler(handler)
