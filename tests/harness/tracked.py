"""Tests write no tracked file: a pytest plugin that compares the checkout's tracked files before and after a run.

At the start of a session it notes which tracked files differ from git's record and a hash of each one's content;
at the end it does the same, and a file whose state changed meanwhile (changed, restored, deleted) fails the run,
named in the summary. Only the process that runs the session checks, never a pytest-xdist worker (they share one
checkout); outside a git checkout, or without git, it does nothing. A folder a test is told to write into on purpose
(``$BEE_BOARD_SCREENSHOTS``, the tracker guide's screenshots) is left out.

It cannot tell a test's write from one made by hand while the tests ran: the message says so.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

#: Variables naming a folder that tests write into because they were asked to.
ON_PURPOSE = ("BEE_BOARD_SCREENSHOTS",)

_BEFORE = pytest.StashKey[tuple[Path, dict[str, str]]]()
_CHANGED = pytest.StashKey[list[str]]()


def _git(root: Path, *args: str) -> bytes | None:
    try:
        done = subprocess.run(
            ["git", "--no-optional-locks", "-C", str(root), *args], capture_output=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def checkout_of(folder: Path) -> Path | None:
    """The top of the git checkout ``folder`` is in, or None (not in one, or no git)."""
    top = _git(folder, "rev-parse", "--show-toplevel")
    return Path(os.fsdecode(top.strip())) if top else None


def differing(top: Path) -> dict[str, str]:
    """The tracked files of the checkout ``top`` that differ from git's record (in the index or the work tree), each
    with the sha256 of its content now ("gone" for one deleted)."""
    listed = _git(top, "-c", "status.relativePaths=false", "status", "--porcelain=v1", "-z", "--untracked-files=no")
    fields = os.fsdecode(listed or b"").split("\0")
    paths = []
    while fields:
        entry = fields.pop(0)
        if len(entry) > 3:
            paths.append(entry[3:])
            if entry[0] in "RC":  # a rename or copy: its source comes next
                fields.pop(0)
    return {path: _content(top / path) for path in paths}


def _content(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return "gone"
    except OSError as exc:  # a submodule's folder, say
        return f"unreadable: {exc.strerror}"


def _on_purpose() -> list[Path]:
    return [Path(os.environ[name]).resolve() for name in ON_PURPOSE if os.environ.get(name)]


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")  # pytest-xdist gives its workers this


def pytest_sessionstart(session: pytest.Session) -> None:
    if _is_worker(session.config):
        return
    top = checkout_of(session.config.rootpath)
    if top is not None:
        session.config.stash[_BEFORE] = (top, differing(top))


def pytest_sessionfinish(session: pytest.Session) -> None:
    before = session.config.stash.get(_BEFORE, None)
    if before is None:
        return
    top, was = before
    now = differing(top)
    allowed = _on_purpose()
    changed = sorted(
        path
        for path in was.keys() | now.keys()
        if was.get(path) != now.get(path) and not any((top / path).resolve().is_relative_to(a) for a in allowed)
    )
    if changed:
        session.config.stash[_CHANGED] = changed
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    changed = config.stash.get(_CHANGED, [])
    if changed:
        terminalreporter.section("tracked files changed", red=True)
        terminalreporter.write_line(
            "These tracked files changed while the tests ran; tests must write under tmp_path, never into the "
            "checkout (if you edited them yourself meanwhile, run the tests again):"
        )
        for path in changed:
            terminalreporter.write_line(f"  {path}")
