"""Log files: one per replica, rotated by size, the supervisor's own too; an unwritable folder is refused."""

from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_supervisor.logs import SUPERVISOR_LOG, OutputLog, check_writable, close_logger, log_name, supervisor_logger


def test_output_is_rotated_by_size_keeping_the_configured_backups(tmp_path: Path) -> None:
    log = OutputLog(tmp_path / log_name("tracker", 0), max_bytes=1024, backups=2)
    for number in range(200):
        log.line(f"line {number:04d} ".encode() + b"x" * 40)
    log.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["tracker-0.log", "tracker-0.log.1", "tracker-0.log.2"]
    assert all((tmp_path / name).stat().st_size <= 1024 for name in names)
    assert "line 0199" in (tmp_path / "tracker-0.log").read_text()  # the newest lines are in the live file
    assert "line 0000" not in "".join((tmp_path / name).read_text() for name in names)  # the oldest are gone


def test_output_keeps_undecodable_bytes_visible_and_marks_supervisor_notes(tmp_path: Path) -> None:
    log = OutputLog(tmp_path / "job-0.log", max_bytes=4096, backups=1)
    log.line(b"caf\xe9 \xff\r")
    log.note("started pid 42: job --flag")
    log.close()
    first, second = (tmp_path / "job-0.log").read_text().splitlines()
    assert first == "caf\ufffd \ufffd"
    assert second.startswith("--- bee supervise ") and second.endswith(": started pid 42: job --flag")


def test_the_supervisor_log_rotates_too(tmp_path: Path) -> None:
    logger = supervisor_logger(tmp_path, max_bytes=1024, backups=1, echo=False)
    for number in range(100):
        logger.info("event %d %s", number, "y" * 30)
    close_logger(logger)
    assert (tmp_path / SUPERVISOR_LOG).exists() and (tmp_path / f"{SUPERVISOR_LOG}.1").exists()
    assert not (tmp_path / f"{SUPERVISOR_LOG}.2").exists()


def test_an_unwritable_log_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(BeeError, match=r"cannot write logs to .*file/logs: Not a directory") as caught:
        check_writable(tmp_path / "file" / "logs")
    assert caught.value.code == "invalid_argument"
    check_writable(tmp_path / "fresh" / "logs")  # created when missing
    assert (tmp_path / "fresh" / "logs").is_dir() and not list((tmp_path / "fresh" / "logs").iterdir())
