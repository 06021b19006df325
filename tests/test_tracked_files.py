"""The guard that a test run writes no tracked file (tests/harness/tracked.py), run as pytest runs: a pytest of its
own in a git checkout of the test's own, in one process and with pytest-xdist's workers."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CONFTEST = "from tests.harness.tracked import pytest_sessionfinish, pytest_sessionstart, pytest_terminal_summary\n"

WRITES = """
from pathlib import Path

HERE = Path(__file__).parent


def test_writes_a_tracked_file():
    (HERE / "clean.txt").write_text("changed by a test\\n")


def test_changes_a_file_that_was_already_changed():
    (HERE / "edited.txt").write_text("changed again by a test\\n")


def test_writes_where_it_was_told_to_and_an_untracked_file():
    (HERE / "shots" / "board.png").write_bytes(b"new picture")
    (HERE / "scratch.txt").write_text("not tracked\\n")
"""

QUIET = """
def test_reads_only(tmp_path):
    (tmp_path / "mine.txt").write_text("under tmp_path\\n")
"""

SECTION = " tracked files changed ="  # the section's title line


def git(folder: Path, *args: str) -> None:
    who = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", *who, *args], cwd=folder, check=True, capture_output=True)


def make_checkout(folder: Path, tests: str) -> Path:
    """A git checkout with three tracked files, one of them already edited, a folder of screenshots, and ``tests``."""
    folder.mkdir()
    (folder / "pytest.ini").write_text("[pytest]\n")
    (folder / "conftest.py").write_text(CONFTEST)
    (folder / "test_it.py").write_text(tests)
    for name in ("clean.txt", "edited.txt", "shots/board.png"):
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text("as committed\n")
    git(folder, "init", "-q")
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "start")
    (folder / "edited.txt").write_text("edited by hand before the run\n")
    return folder


def pytest_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PYTEST_", "BEE_BOARD_SCREENSHOTS"))}
    env["PYTHONPATH"] = str(ROOT)  # where the plugin is; the checkout's own tests are found from its folder
    env["BEE_BOARD_SCREENSHOTS"] = str(folder / "shots")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist workers"])
def test_a_run_that_changes_tracked_files_fails_naming_them(tmp_path: Path, workers: list[str]) -> None:
    checkout = make_checkout(tmp_path / "checkout", WRITES)
    ran = pytest_in(checkout, *workers)
    assert ran.returncode == pytest.ExitCode.TESTS_FAILED, ran.stdout + ran.stderr
    assert "3 passed" in ran.stdout  # the tests passed: the run fails for what they wrote
    assert ran.stdout.count(SECTION) == 1, ran.stdout  # said once, by the process that ran the session
    named = ran.stdout.split(SECTION, 1)[1].split("\n=")[0]
    # The clean file and the file already edited, whose content changed; not the screenshots the run was told to
    # write, nor a file git does not track.
    assert [line.strip() for line in named.splitlines() if line.startswith("  ")] == ["clean.txt", "edited.txt"]


def test_a_run_that_changes_no_tracked_file_passes_beside_files_already_edited(tmp_path: Path) -> None:
    ran = pytest_in(make_checkout(tmp_path / "checkout", QUIET))
    assert ran.returncode == 0 and SECTION not in ran.stdout, ran.stdout + ran.stderr


def test_outside_a_git_checkout_the_guard_does_nothing(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "checkout", WRITES)
    shutil.rmtree(checkout / ".git")
    ran = pytest_in(checkout)
    assert ran.returncode == 0 and SECTION not in ran.stdout, ran.stdout + ran.stderr
