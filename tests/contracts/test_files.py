"""bee_contracts.files.write_if_unchanged: a file is replaced only over the bytes that were read, and bytes nobody
read are never discarded — with another program's save landing at each point of the write."""

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from bee_contracts import files


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[int]:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    yield fd
    os.close(fd)


def leftovers(tmp_path: Path) -> list[str]:
    return sorted(name for name in os.listdir(tmp_path) if name.endswith(".tmp"))


def test_a_file_still_holding_what_was_read_is_replaced(tmp_path: Path, folder: int) -> None:
    (tmp_path / "f.json").write_bytes(b"old")
    assert files.write_if_unchanged(folder, "f.json", b"new", expected=b"old", mode=0o640)
    assert (tmp_path / "f.json").read_bytes() == b"new"
    assert stat.S_IMODE((tmp_path / "f.json").stat().st_mode) == 0o640
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("now", [b"saved by someone else", b"ol", b"old and more", None])
def test_a_file_changed_since_it_was_read_is_left_as_it_is(now: bytes | None, tmp_path: Path, folder: int) -> None:
    if now is not None:
        (tmp_path / "f.json").write_bytes(now)
    assert not files.write_if_unchanged(folder, "f.json", b"new", expected=b"old", mode=0o644)
    assert (tmp_path / "f.json").read_bytes() == now if now is not None else not (tmp_path / "f.json").exists()
    assert leftovers(tmp_path) == []


def test_a_new_file_is_created_only_if_none_appeared_meanwhile(tmp_path: Path, folder: int) -> None:
    assert files.write_if_unchanged(folder, "f.json", b"first", expected=None, mode=0o644)
    assert not files.write_if_unchanged(folder, "f.json", b"second", expected=None, mode=0o644)
    assert (tmp_path / "f.json").read_bytes() == b"first"
    assert leftovers(tmp_path) == []


def test_a_symlink_in_the_files_place_is_never_written_through(tmp_path: Path, folder: int) -> None:
    (tmp_path / "elsewhere").write_bytes(b"old")
    (tmp_path / "f.json").symlink_to("elsewhere")
    assert not files.write_if_unchanged(folder, "f.json", b"new", expected=b"old", mode=0o644)
    assert (tmp_path / "elsewhere").read_bytes() == b"old" and (tmp_path / "f.json").is_symlink()


def saving_before_exchanges(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, saves: list[bytes]) -> None:
    """Another program saves f.json just before each of the first renameat2 exchanges (after Bee's check)."""
    real = files._rename2
    pending = list(saves)

    def rename(folder: int, source: str, target: str, flags: int) -> bool:
        if flags == files._RENAME_EXCHANGE and pending:
            (tmp_path / "editor.tmp-save").write_bytes(pending.pop(0))
            os.replace(tmp_path / "editor.tmp-save", tmp_path / "f.json")
        return real(folder, source, target, flags)

    monkeypatch.setattr(files, "_rename2", rename)


def test_a_save_between_the_check_and_the_swap_is_put_back(
    tmp_path: Path, folder: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f.json").write_bytes(b"old")
    saving_before_exchanges(monkeypatch, tmp_path, [b"their save"])
    assert not files.write_if_unchanged(folder, "f.json", b"new", expected=b"old", mode=0o644)
    assert (tmp_path / "f.json").read_bytes() == b"their save"
    assert leftovers(tmp_path) == []


def test_two_saves_in_the_instant_of_the_swap_keep_both(
    tmp_path: Path, folder: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f.json").write_bytes(b"old")
    saving_before_exchanges(monkeypatch, tmp_path, [b"their first save", b"their second save"])
    with pytest.raises(files.KeptAside) as kept:
        files.write_if_unchanged(folder, "f.json", b"new", expected=b"old", mode=0o644)
    assert (tmp_path / "f.json").read_bytes() == b"their first save"
    assert (tmp_path / kept.value.name).read_bytes() == b"their second save"


def test_without_an_exchange_the_check_before_the_rename_still_guards(
    tmp_path: Path, folder: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "_libc_renameat2", lambda: None)  # a system without renameat2
    (tmp_path / "f.json").write_bytes(b"old")
    assert files.write_if_unchanged(folder, "f.json", b"new", expected=b"old", mode=0o644)
    assert not files.write_if_unchanged(folder, "f.json", b"newer", expected=b"old", mode=0o644)
    assert files.write_if_unchanged(folder, "g.json", b"made", expected=None, mode=0o644)  # a hard link, then
    assert not files.write_if_unchanged(folder, "g.json", b"again", expected=None, mode=0o644)
    assert (tmp_path / "f.json").read_bytes() == b"new" and (tmp_path / "g.json").read_bytes() == b"made"
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may give a file to someone else")
def test_the_owner_given_is_the_files_before_anyone_sees_it(tmp_path: Path, folder: int) -> None:
    (tmp_path / "f.json").write_bytes(b"old")
    assert files.write_if_unchanged(folder, "f.json", b"new", expected=b"old", mode=0o600, owner=(4321, 4322))
    info = (tmp_path / "f.json").stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (4321, 4322, 0o600)
