"""The one path-confinement helper: each refusal provoked on a real directory tree, FIFOs and sockets included."""

import inspect
import os
import socket
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import BeeError, ErrorCode
from bee_hostkit import ConfinedRoot
from bee_hostkit.paths import MAX_SYMLINKS, SHOWN_NAME_CHARS, shown


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".bee" / "tracker").mkdir(parents=True)
    (root / ".bee" / "tracker" / "signing-key").write_text("KEY\n")
    (root / "state" / "instance").mkdir(parents=True)
    (root / "state" / "instance" / "secret").write_text("INSTANCE\n")
    (tmp_path / "secret.txt").write_text("secret\n")
    return root.resolve()


@pytest.fixture
def files(tree: Path) -> Iterator[ConfinedRoot]:
    confined = ConfinedRoot(tree, hidden=[tree / "state" / "instance"])
    yield confined
    confined.close()


def read(files: ConfinedRoot, path: str) -> bytes:
    with files.open(path) as file:
        return file.read()


def failure(files: ConfinedRoot, path: str) -> BeeError:
    with pytest.raises(BeeError) as info:
        read(files, path)
    return info.value


def test_plain_relative_paths_are_read(files: ConfinedRoot) -> None:
    assert read(files, "src/a.py") == b"x = 1\n"
    assert read(files, "./src//a.py") == b"x = 1\n"


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("../secret.txt", "climbs out with '..'"),
        ("src/../../secret.txt", "climbs out with '..'"),
        ("/etc/passwd", "is absolute"),
        ("C:/x", "is absolute"),
        ("src\\a.py", "backslash"),
        ("a\x00b", "NUL byte"),
        (".git/config", "lies in .git: repository internals (.git) and Bee's own state (.bee) are never served"),
        ("src/.git/x", "lies in src/.git: repository internals (.git)"),
        (".git", "names .git: repository internals (.git)"),
        (".bee/tracker/signing-key", "lies in .bee: repository internals (.git) and Bee's own state (.bee)"),
        ("sub/.bee/x", "lies in sub/.bee: repository internals (.git)"),
    ],
)
def test_escapes_are_refused_before_touching_the_disk(files: ConfinedRoot, path: str, text: str) -> None:
    refused = failure(files, path)
    assert refused.code is ErrorCode.OUTSIDE_ROOT
    assert text in refused.message


def test_an_instance_root_inside_the_root_is_hidden(files: ConfinedRoot) -> None:
    refused = failure(files, "state/instance/secret")
    assert refused.code is ErrorCode.OUTSIDE_ROOT and "instance state" in refused.message
    assert failure(files, "state/instance").code is ErrorCode.OUTSIDE_ROOT


def test_a_hidden_directory_outside_the_root_changes_nothing(tree: Path, tmp_path: Path) -> None:
    confined = ConfinedRoot(tree, hidden=[tmp_path / "elsewhere"])
    assert read(confined, "src/a.py") == b"x = 1\n"
    confined.close()


def test_symlink_leaving_the_root_is_refused(files: ConfinedRoot, tree: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "secret.txt", tree / "src" / "leak.txt")
    os.symlink("../../secret.txt", tree / "src" / "relative-leak.txt")
    for path in ("src/leak.txt", "src/relative-leak.txt"):
        refused = failure(files, path)
        assert refused.code is ErrorCode.OUTSIDE_ROOT and "outside the checkout" in refused.message


def test_symlinked_directory_leaving_the_root_is_refused(files: ConfinedRoot, tree: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path, tree / "up")
    assert failure(files, "up/secret.txt").code is ErrorCode.OUTSIDE_ROOT


def test_a_symlink_that_leaves_and_comes_back_is_refused(files: ConfinedRoot, tree: Path) -> None:
    # The walk never steps outside the root, even on the way back in: what is out there could be swapped.
    os.symlink(f"../../{tree.name}/src/a.py", tree / "src" / "out-and-back.py")
    assert failure(files, "src/out-and-back.py").code is ErrorCode.OUTSIDE_ROOT


def test_symlinks_inside_the_root_are_followed(files: ConfinedRoot, tree: Path) -> None:
    os.symlink("a.py", tree / "src" / "same-dir.py")
    os.symlink("../src/a.py", tree / "src" / "in-and-back.py")
    os.symlink(tree / "src" / "a.py", tree / "absolute.py")
    os.symlink("src", tree / "code")
    os.symlink("code/same-dir.py", tree / "chain.py")
    for path in ("src/same-dir.py", "src/in-and-back.py", "absolute.py", "code/a.py", "chain.py"):
        assert read(files, path) == b"x = 1\n", path


@pytest.mark.parametrize(
    ("target", "text"),
    [
        (".git/config", "resolves through a symlink to .git: repository internals (.git)"),
        (".bee/tracker/signing-key", "resolves through a symlink to .bee: repository internals (.git)"),
        ("state/instance/secret", "lies in Bee's instance state: repository internals (.git)"),
    ],
)
def test_symlinks_into_internals_state_or_the_instance_are_refused(
    files: ConfinedRoot, tree: Path, target: str, text: str
) -> None:
    os.symlink(target, tree / "relative-link")
    os.symlink(tree / target, tree / "absolute-link")
    os.symlink(target.split("/", maxsplit=1)[0], tree / "directory-link")
    rest = "/".join(target.split("/")[1:])
    for path in ("relative-link", "absolute-link", f"directory-link/{rest}"):
        refused = failure(files, path)
        assert refused.code is ErrorCode.OUTSIDE_ROOT, path
        assert text in refused.message, path


def test_symlink_loops_and_long_chains_are_refused(files: ConfinedRoot, tree: Path) -> None:
    os.symlink("loop-b", tree / "loop-a")
    os.symlink("loop-a", tree / "loop-b")
    refused = failure(files, "loop-a")
    assert refused.code is ErrorCode.INVALID_ARGUMENT and f"more than {MAX_SYMLINKS} symlinks" in refused.message


def test_a_directory_is_refused(files: ConfinedRoot, tree: Path) -> None:
    os.symlink(".", tree / "here")
    for path in ("src", "src/", "here", "here/src"):
        refused = failure(files, path)
        assert refused.code is ErrorCode.INVALID_ARGUMENT and "is a directory" in refused.message, path


@pytest.mark.timeout(20)  # a FIFO opened for reading without a writer blocks: this must not
def test_a_fifo_is_refused_without_blocking(files: ConfinedRoot, tree: Path) -> None:
    os.mkfifo(tree / "src" / "pipe")
    refused = failure(files, "src/pipe")
    assert refused.code is ErrorCode.INVALID_ARGUMENT and "is a FIFO, not a regular file" in refused.message


def test_a_socket_is_refused(files: ConfinedRoot, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listener = socket.socket(socket.AF_UNIX)
    monkeypatch.chdir(tree)  # a socket path is limited to ~100 bytes; bind relative to the tree
    try:
        listener.bind("sock")
        refused = failure(files, "sock")
    finally:
        listener.close()
    assert refused.code is ErrorCode.INVALID_ARGUMENT and "is a socket" in refused.message


@pytest.mark.timeout(20)
def test_dev_zero_through_a_symlink_is_never_opened(files: ConfinedRoot, tree: Path) -> None:
    os.symlink("/dev/zero", tree / "zeros")
    assert failure(files, "zeros").code is ErrorCode.OUTSIDE_ROOT


@pytest.mark.timeout(20)
@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_a_device_node_inside_the_root_is_refused_unread(files: ConfinedRoot, tree: Path) -> None:
    os.mknod(tree / "zero", stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers
    refused = failure(files, "zero")
    assert refused.code is ErrorCode.INVALID_ARGUMENT and "is a character device" in refused.message


def test_missing_empty_and_through_a_file(files: ConfinedRoot) -> None:
    assert failure(files, "src/none.py").code is ErrorCode.NOT_FOUND
    assert failure(files, "").code is ErrorCode.INVALID_ARGUMENT
    through = failure(files, "src/a.py/x")
    assert through.code is ErrorCode.NOT_FOUND and "'a.py' is not a directory" in through.message


def test_reads_stop_at_the_size_fstat_gave(files: ConfinedRoot, tree: Path) -> None:
    with files.open("src/a.py") as file:
        with open(tree / "src" / "a.py", "ab") as grow:
            grow.write(b"y = 2\n" * 1000)
        assert file.size == 6
        assert file.read() == b"x = 1\n"
    with files.open("src/a.py") as file:
        chunks = list(file.chunks(1000))
    assert b"".join(chunks) == b"x = 1\n" + b"y = 2\n" * 1000
    assert max(len(chunk) for chunk in chunks) == 1000


def test_the_root_stays_the_opened_directory_when_renamed(files: ConfinedRoot, tree: Path) -> None:
    moved = tree.parent / "moved"
    tree.rename(moved)
    assert read(files, "src/a.py") == b"x = 1\n"


def test_a_directory_opens_as_a_root_confined_to_itself(files: ConfinedRoot, tree: Path, tmp_path: Path) -> None:
    (tree / "src" / "inner").mkdir()
    (tree / "src" / "inner" / "b.txt").write_text("b\n")
    (tree / "src" / "inner" / "up").symlink_to("../a.py")
    (tree / "src" / "inner" / "out").symlink_to(tmp_path / "secret.txt")
    inner = files.directory("src/inner")
    try:
        assert inner.path == tree / "src" / "inner"
        assert read(inner, "b.txt") == b"b\n"
        # Inside the outer root, but outside this one: refused, like anything outside.
        assert failure(inner, "up").code is ErrorCode.OUTSIDE_ROOT
        assert failure(inner, "out").code is ErrorCode.OUTSIDE_ROOT
        assert failure(inner, "../a.py").code is ErrorCode.OUTSIDE_ROOT
    finally:
        inner.close()


def test_a_directory_through_a_symlink_is_its_real_place_and_never_outside(
    files: ConfinedRoot, tree: Path, tmp_path: Path
) -> None:
    (tree / "alias").symlink_to("src")
    (tree / "away").symlink_to(tmp_path)
    inner = files.directory("alias")
    assert inner.path == tree / "src" and read(inner, "a.py") == b"x = 1\n"
    inner.close()
    for path, code in [
        ("away", ErrorCode.OUTSIDE_ROOT),
        ("state/instance", ErrorCode.OUTSIDE_ROOT),
        (".git", ErrorCode.OUTSIDE_ROOT),
        ("src/a.py", ErrorCode.NOT_FOUND),
        ("nope", ErrorCode.NOT_FOUND),
    ]:
        with pytest.raises(BeeError) as info:
            files.directory(path)
        assert info.value.code is code, path


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counting open fds needs /proc")
def test_an_absolute_symlink_below_the_top_walks_again_from_the_root_leaking_no_fd(
    files: ConfinedRoot, tree: Path
) -> None:
    # The walk has directories open when it meets the symlink: they are closed, and what it names is found from the
    # root (its real components say so), not from where the symlink lies.
    (tree / "src" / "deep").mkdir()
    (tree / "src" / "deep" / "a.py").symlink_to(tree / "src" / "a.py")
    (tree / "src" / "deep" / "code").symlink_to(tree / "src")
    (tree / "src" / "deep" / "top").symlink_to(tree)
    before = open_fds()
    assert read(files, "src/deep/a.py") == b"x = 1\n"
    assert read(files, "src/deep/code/deep/a.py") == b"x = 1\n"
    for path, real, inside in [
        ("src/deep/code", tree / "src", "a.py"),
        ("src/deep/top", tree, "src/a.py"),
        ("src/deep/top/src/deep/code", tree / "src", "a.py"),
    ]:
        inner = files.directory(path)
        assert inner.path == real, path
        assert read(inner, inside) == b"x = 1\n", path
        inner.close()
    assert open_fds() == before


def test_a_directory_root_keeps_hiding_what_its_parent_hides(tree: Path) -> None:
    outer = ConfinedRoot(tree, hidden=[tree / "state" / "instance"])
    state = outer.directory("state")
    with pytest.raises(BeeError) as info:
        read(state, "instance/secret")
    assert info.value.code is ErrorCode.OUTSIDE_ROOT
    state.close()
    outer.close()


# -- the confined walk, and opening without following symlinks ---------------------------------------------------


def walked(root: ConfinedRoot, **limits: Any) -> list[tuple[str, str]]:
    options: dict[str, Any] = {"max_depth": 64, "max_entries": 1000, **limits}
    return [(entry.path, entry.kind) for entry in root.walk(**options)]


def test_the_walk_reports_files_symlinks_and_special_files_in_order_and_never_follows(
    files: ConfinedRoot, tree: Path, tmp_path: Path
) -> None:
    (tree / "src" / "deep" / "er").mkdir(parents=True)
    (tree / "src" / "deep" / "er" / "b.py").write_text("b\n")
    (tree / "src" / "out").symlink_to(tmp_path)  # a directory outside: reported, never entered
    (tree / "src" / "leak.txt").symlink_to(tmp_path / "secret.txt")
    os.mkfifo(tree / "src" / "pipe")
    (tree / "node_modules" / "x").mkdir(parents=True)
    (tree / "node_modules" / "x" / "i.js").write_text("")
    (tree / "sub" / ".git").mkdir(parents=True)  # never served, so never listed: .git, .bee, the hidden instance
    (tree / "sub" / ".git" / "HEAD").write_text("ref\n")
    assert walked(files, skip={"node_modules"}) == [
        ("src/a.py", "file"),
        ("src/deep/er/b.py", "file"),
        ("src/leak.txt", "symlink"),
        ("src/out", "symlink"),
        ("src/pipe", "other"),
    ]


def test_the_walk_refuses_a_tree_deeper_than_its_limit_by_name(files: ConfinedRoot, tree: Path) -> None:
    (tree / "a" / "b" / "c" / "d").mkdir(parents=True)
    (tree / "a" / "b" / "c" / "d" / "f.txt").write_text("f\n")
    assert ("a/b/c/d/f.txt", "file") in walked(files, max_depth=4)
    with pytest.raises(BeeError) as info:
        walked(files, max_depth=3)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert "'a/b/c/d' lies more than 3 folders deep" in info.value.message


def test_the_walk_is_iterative_so_depth_costs_no_stack(files: ConfinedRoot, tree: Path) -> None:
    deep = tree.joinpath(*["d"] * 300)
    deep.mkdir(parents=True)
    (deep / "f.txt").write_text("f\n")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 100)  # a walk that recursed per folder would fail here
    try:
        found = walked(files, max_depth=400)
    finally:
        sys.setrecursionlimit(limit)
    assert ("/".join(["d"] * 300) + "/f.txt", "file") in found


def test_the_walk_stops_listing_past_its_entry_limit(files: ConfinedRoot, tree: Path) -> None:
    for n in range(50):
        (tree / "src" / f"f{n}.py").write_text("")
    with pytest.raises(BeeError) as info:
        walked(files, max_entries=40)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT and "more than 40 files and folders" in info.value.message


def test_a_directory_swapped_for_a_symlink_during_the_walk_is_reported_not_entered(
    files: ConfinedRoot, tree: Path, tmp_path: Path
) -> None:
    (tree / "z").mkdir()
    (tree / "z" / "real.txt").write_text("real\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret.txt").write_text("secret\n")
    seen = []
    for entry in files.walk(max_depth=64, max_entries=1000):
        seen.append((entry.path, entry.kind))
        if entry.path == "src/a.py":  # the walk is paused here: swap a directory it has not reached yet
            (tree / "z" / "real.txt").unlink()
            (tree / "z").rmdir()
            (tree / "z").symlink_to(tmp_path / "elsewhere")
    assert ("z", "symlink") in seen and not any("secret" in path for path, _ in seen)


def test_an_entry_that_goes_away_during_the_walk_is_a_conflict(files: ConfinedRoot, tree: Path) -> None:
    (tree / "z.txt").write_text("z\n")
    walk = files.walk(max_depth=64, max_entries=1000)
    assert next(walk).path == "src/a.py"  # the walk is paused here: remove an entry it has listed, not reached
    (tree / "z.txt").unlink()
    with pytest.raises(BeeError) as info:
        list(walk)
    assert info.value.code is ErrorCode.CONFLICT and "'z.txt' went away while the tree was walked" in info.value.message


def test_a_walk_entry_knows_whether_the_opened_file_is_the_one_it_met(files: ConfinedRoot, tree: Path) -> None:
    entry = next(e for e in files.walk(max_depth=64, max_entries=1000) if e.path == "src/a.py")
    with files.open("src/a.py") as file:
        assert entry.unchanged(os.fstat(file.fd))
    (tree / "src" / "a.py").unlink()
    (tree / "src" / "a.py").write_text("x = 1\n")  # the same bytes, another file
    with files.open("src/a.py") as file:
        assert not entry.unchanged(os.fstat(file.fd))


def test_opening_without_following_refuses_every_symlink_on_the_way(files: ConfinedRoot, tree: Path) -> None:
    os.symlink("a.py", tree / "src" / "same-dir.py")
    os.symlink("src", tree / "code")
    assert read(files, "src/same-dir.py") == b"x = 1\n"  # followed by default
    for path, why in [("src/same-dir.py", "is a symlink"), ("code/a.py", "passes through the symlink 'code'")]:
        with pytest.raises(BeeError) as info:
            files.open(path, follow_symlinks=False)
        assert info.value.code is ErrorCode.OUTSIDE_ROOT and why in info.value.message, path
    with files.open("src/a.py", follow_symlinks=False) as file:
        assert file.read() == b"x = 1\n"


def test_names_are_shown_escaped_and_bounded() -> None:
    assert shown(os.fsdecode(b"caf\xe9.png")) == r"caf\xe9.png"  # a file system name that is not UTF-8
    assert shown(b"caf\xe9.png") == r"caf\xe9.png"
    assert shown("café.png") == "café.png"
    assert shown("it's a\\b\n\x00\x1b[31m\u200b") == r"it\'s a\\b\n\x00\x1b[31m\u200b"
    assert shown("x" * 5000) == "x" * SHOWN_NAME_CHARS + "…"
