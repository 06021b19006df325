"""One supervisor per state folder: the lock names its holder and dies with it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_supervisor.lock import LOCK_FILE, StateLock, running_pid


def test_the_lock_records_its_holder_and_refuses_a_second_one(tmp_path: Path) -> None:
    first = StateLock(tmp_path / "state")
    first.acquire()
    assert running_pid(tmp_path / "state") == os.getpid()
    with pytest.raises(BeeError, match=rf"another supervisor \(pid {os.getpid()}\) is already running") as caught:
        StateLock(tmp_path / "state").acquire()
    assert caught.value.details is not None
    assert caught.value.code == "conflict" and caught.value.details["pid"] == os.getpid()
    first.release()
    assert running_pid(tmp_path / "state") is None
    second = StateLock(tmp_path / "state")
    second.acquire()  # free again once released
    second.release()


def test_a_lock_left_by_a_dead_holder_does_not_block(tmp_path: Path) -> None:
    program = (
        "import sys, os; from pathlib import Path; from bee_supervisor.lock import StateLock; "
        "StateLock(Path(sys.argv[1])).acquire(); os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", program, str(tmp_path)], check=True, timeout=60)
    assert (tmp_path / LOCK_FILE).read_text().strip().isdigit()  # its pid is still written there...
    assert running_pid(tmp_path) is None  # ...but nobody holds the lock
    lock = StateLock(tmp_path)
    lock.acquire()
    lock.release()


def test_a_state_folder_that_cannot_be_created_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(BeeError, match="cannot use the state folder") as caught:
        StateLock(tmp_path / "file" / "state").acquire()
    assert caught.value.code == "invalid_argument"


def test_running_pid_of_a_folder_never_used(tmp_path: Path) -> None:
    assert running_pid(tmp_path / "nothing") is None
