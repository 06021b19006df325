"""bee_contracts.gitindex against indexes the real git writes: every version, SHA-256 repositories, split indexes,
linked worktrees and submodules."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bee_contracts.gitindex import UnreadableIndex, repository, tracked

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> str:
    completed = subprocess.run(
        ["git", "-c", "user.name=Bee", "-c", "user.email=bee@example.com", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return completed.stdout


def repo(path: Path, *init: str) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", *init)
    (path / ".bee").mkdir()
    (path / ".bee" / ".gitignore").write_text("*\n")
    (path / ".bee" / "tracker").mkdir()
    (path / ".bee" / "tracker" / "signing-key").write_text("ab" * 32 + "\n")
    (path / "src").mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (path / "src" / name).write_text(name)
    (path / "untracked.txt").write_text("x")
    git(path, "add", "src")
    git(path, "add", "-f", ".bee/tracker/signing-key")  # past .bee/.gitignore, as a hostile repository does
    git(path, "commit", "-qm", "files")
    return path


KEY = Path(".bee/tracker/signing-key")


def check(root: Path) -> None:
    assert tracked(root / KEY) is True
    assert tracked(root / "src" / "b.py") is True
    assert tracked(root / "untracked.txt") is False
    assert tracked(root / ".bee" / ".gitignore") is False  # ignored, never added
    assert tracked(root / "src" / "missing.py") is False


@pytest.mark.parametrize("version", ["2", "4"])  # git writes 3 only for entries that need it (below)
def test_every_index_version(tmp_path: Path, version: str) -> None:
    root = repo(tmp_path / "r")
    git(root, "update-index", "--index-version", version)
    assert (root / ".git" / "index").read_bytes()[4:8] == int(version).to_bytes(4, "big")
    check(root)


def test_entries_with_extended_flags(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    (root / "new.py").write_text("n")
    git(root, "add", "--intent-to-add", "new.py")  # sets the extended flag: a version 3 entry with 2 more bytes
    assert (root / ".git" / "index").read_bytes()[4:8] == (3).to_bytes(4, "big")
    assert tracked(root / "new.py") is True
    check(root)


def test_a_sha256_repository(tmp_path: Path) -> None:
    root = repo(tmp_path / "r", "--object-format=sha256")
    check(root)


def test_a_split_index(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    git(root, "update-index", "--split-index")
    (root / "later.py").write_text("l")
    git(root, "add", "later.py")
    assert list((root / ".git").glob("sharedindex.*"))
    check(root)
    assert tracked(root / "later.py") is True


def test_a_linked_worktree_and_a_submodule(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    git(root, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert (tmp_path / "wt" / ".git").is_file()
    check(tmp_path / "wt")
    inner = repo(tmp_path / "inner")
    git(root, "submodule", "add", "-q", str(inner), "vendor/inner")
    assert tracked(root / "vendor" / "inner" / KEY) is True  # the submodule's own index decides
    assert tracked(root / "vendor" / "inner" / "untracked.txt") is False


def test_outside_any_repository_nothing_is_tracked(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "file").write_text("x")
    assert repository(tmp_path / "plain" / "file") is None and tracked(tmp_path / "plain" / "file") is False
    root = repo(tmp_path / "r")
    (root / ".git" / "index").unlink()  # a repository with nothing added yet has no index
    assert tracked(root / KEY) is False


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"XXXX" + data[4:],
        lambda data: data[:4] + (9).to_bytes(4, "big") + data[8:],
        lambda data: data[:60],
        lambda data: data[:12] + b"\xff" * (len(data) - 12),
    ],
)
def test_a_damaged_index_is_unreadable_never_taken_for_untracked(
    tmp_path: Path, damage: Callable[[bytes], bytes]
) -> None:
    root = repo(tmp_path / "r")
    index = root / ".git" / "index"
    index.write_bytes(damage(index.read_bytes()))
    with pytest.raises(UnreadableIndex):
        tracked(root / KEY)
