import os

import pytest

from bee_contracts import BeeError, ErrorCode
from bee_hostkit import confine


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (tmp_path / "secret.txt").write_text("secret\n")
    return root.resolve()


def code_of(root, path):
    with pytest.raises(BeeError) as info:
        confine(root, path)
    return info.value.code


def test_plain_relative_paths_resolve(root):
    assert confine(root, "src/a.py") == root / "src" / "a.py"
    assert confine(root, "./src/../src/a.py".replace("../src/", "")) == root / "src" / "a.py"


@pytest.mark.parametrize(
    "path",
    [
        "../secret.txt",
        "src/../../secret.txt",
        "/etc/passwd",
        "C:/x",
        "src\\a.py",
        "a\x00b",
        ".git/config",
        "src/.git/x",
    ],
)
def test_escapes_are_refused_before_touching_the_disk(root, path):
    assert code_of(root, path) is ErrorCode.OUTSIDE_ROOT


def test_symlink_leaving_the_root_is_refused(root, tmp_path):
    os.symlink(tmp_path / "secret.txt", root / "src" / "leak.txt")
    assert code_of(root, "src/leak.txt") is ErrorCode.OUTSIDE_ROOT


def test_symlinked_directory_leaving_the_root_is_refused(root, tmp_path):
    os.symlink(tmp_path, root / "up")
    assert code_of(root, "up/secret.txt") is ErrorCode.OUTSIDE_ROOT


def test_symlink_into_git_internals_is_refused(root):
    os.symlink(root / ".git" / "config", root / "cfg")
    assert code_of(root, "cfg") is ErrorCode.OUTSIDE_ROOT


def test_symlink_inside_the_root_is_followed(root):
    os.symlink(root / "src" / "a.py", root / "alias.py")
    assert confine(root, "alias.py") == root / "src" / "a.py"


def test_missing_and_empty(root):
    assert code_of(root, "src/none.py") is ErrorCode.NOT_FOUND
    assert code_of(root, "") is ErrorCode.INVALID_ARGUMENT
    assert confine(root, "src/none.py", must_exist=False) == root / "src" / "none.py"
