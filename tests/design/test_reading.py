"""Reading a bundle safely: names, symlinks, limits and zip bombs are refused before anything is imported."""

import os
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_design.bundle import reading
from bee_design.bundle.reading import read_bundle
from bee_hostkit import ConfinedRoot
from bee_hostkit.paths import WalkEntry
from tests.design.helpers import SHOP, zip_with_raw_name


def zip_of(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def test_a_folder_is_read_in_path_order_without_clutter(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "b.css").write_text("b")
    (folder / "a.html").write_text("a")
    (folder / ".DS_Store").write_text("junk")
    (folder / "__MACOSX").mkdir()
    (folder / "__MACOSX" / "x").write_text("junk")
    raw = read_bundle(folder)
    assert raw.kind == "folder" and [f.path for f in raw.files] == ["a.html", "b.css"]


def test_a_zip_with_one_top_folder_is_read_from_inside_it(tmp_path: Path) -> None:
    raw = read_bundle(zip_of(tmp_path / "shop.zip", {"shop/index.html": b"<p>", "shop/css/a.css": b"a{}"}))
    assert raw.kind == "zip" and raw.name == "shop.zip"
    assert [f.path for f in raw.files] == ["css/a.css", "index.html"]


def test_the_fixture_folder_and_its_zip_read_the_same(tmp_path: Path) -> None:
    entries = {f"shop/{p.relative_to(SHOP).as_posix()}": p.read_bytes() for p in SHOP.rglob("*") if p.is_file()}
    zipped = read_bundle(zip_of(tmp_path / "shop.zip", entries))
    assert zipped.files == read_bundle(SHOP).files


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../evil.html", "'..'"),
        ("shop/../../evil.html", "'..'"),
        ("/etc/passwd", "absolute"),
        ("C:/windows/evil.html", "absolute"),
        ("shop\\evil.html", "backslash"),
    ],
)
def test_a_zip_entry_that_leaves_the_bundle_is_refused(tmp_path: Path, name: str, why: str) -> None:
    archive = zip_of(tmp_path / "bad.zip", {"index.html": b"ok", name: b"evil"})
    with pytest.raises(BeeError) as caught:
        read_bundle(archive)
    assert caught.value.code == "outside_root" and why in caught.value.message


def test_a_zip_symlink_entry_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "link.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("index.html", b"ok")
        info = zipfile.ZipInfo("styles.css")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(BeeError) as caught:
        read_bundle(archive)
    assert caught.value.code == "outside_root" and "symlink" in caught.value.message


def test_a_folder_with_a_symlink_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "index.html").write_text("ok")
    (folder / "secret.css").symlink_to("/etc/hostname")
    with pytest.raises(BeeError) as caught:
        read_bundle(folder)
    assert caught.value.code == "outside_root" and "'secret.css' is a symlink" in caught.value.message


def test_a_zip_bomb_is_refused_from_its_declared_sizes_without_inflating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("index.html", b"ok")
        with zf.open("huge.png", "w", force_zip64=True) as stream:
            chunk = bytes(1024 * 1024)
            for _ in range(300):  # 300 MiB of zeros: a ~300 KiB file on disk
                stream.write(chunk)
    assert archive.stat().st_size < 2 * 1024 * 1024
    inflated: list[str] = []

    def counted(zf: zipfile.ZipFile, info: zipfile.ZipInfo, source: object) -> bytes:
        inflated.append(info.filename)
        return b""

    monkeypatch.setattr(reading, "_read_entry", counted)
    with pytest.raises(BeeError) as caught:
        read_bundle(archive)
    assert caught.value.code == "invalid_argument"
    assert "'huge.png' is 314572800 bytes, over the 67108864-byte limit" in caught.value.message
    assert inflated == []


def test_a_bundle_over_the_total_size_is_refused_before_inflating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reading, "MAX_TOTAL_BYTES", 1000)
    inflated: list[str] = []

    def counted(zf: zipfile.ZipFile, info: zipfile.ZipInfo, source: object) -> bytes:
        inflated.append(info.filename)
        return b""

    monkeypatch.setattr(reading, "_read_entry", counted)
    archive = zip_of(tmp_path / "big.zip", {f"f{i}.css": bytes(400) for i in range(3)})
    with pytest.raises(BeeError, match=r"more than 1000 bytes.*zip bomb"):
        read_bundle(archive)
    assert inflated == []


def test_too_many_files_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "MAX_FILES", 3)
    archive = zip_of(tmp_path / "many.zip", {f"f{i}.css": b"x" for i in range(4)})
    with pytest.raises(BeeError, match="more than 3 files"):
        read_bundle(archive)


def test_a_file_that_is_not_a_zip_and_an_empty_zip_are_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.zip").write_text("not a zip")
    with pytest.raises(BeeError, match="cannot be read as a zip"):
        read_bundle(tmp_path / "notes.zip")
    with pytest.raises(BeeError, match="holds no files"):
        read_bundle(zip_of(tmp_path / "empty.zip", {}))
    with pytest.raises(BeeError) as caught:
        read_bundle(tmp_path / "missing")
    assert caught.value.code == "not_found"


def test_duplicate_zip_entries_are_refused(tmp_path: Path) -> None:
    import warnings

    archive = tmp_path / "dup.zip"
    with warnings.catch_warnings(), zipfile.ZipFile(archive, "w") as zf:
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name we write on purpose
        zf.writestr("a.css", b"1")
        zf.writestr("a.css", b"2")
    with pytest.raises(BeeError, match="twice"):
        read_bundle(archive)


# -- names, depth and races ----------------------------------------------------------------------------------------


def refusal(path: Path) -> BeeError:
    with pytest.raises(BeeError) as caught:
        read_bundle(path)
    return caught.value


@pytest.mark.parametrize(
    ("raw", "utf8_flag", "shown"),
    [
        (b"caf\xe9.png", True, r"caf\xe9.png"),  # flagged UTF-8, but Latin-1
        (b"caf\x82.png", False, r"caf\x82.png"),  # cp437 (what DOS and old Windows zips write)
        (b"\x83\x65\x83\x58\x83\x67.png", False, r"\x83e\x83X\x83g.png"),  # Shift JIS
    ],
)
def test_a_zip_name_that_is_not_utf8_is_refused_naming_the_entry(
    tmp_path: Path, raw: bytes, utf8_flag: bool, shown: str
) -> None:
    archive = zip_with_raw_name(tmp_path / "names.zip", raw, utf8_flag=utf8_flag)
    refused = refusal(archive)
    assert refused.code == "invalid_argument"
    assert f"zip 'names.zip': entry '{shown}' has a name that is not UTF-8" in refused.message
    assert refused.details == {"entry": shown}


def test_a_zip_name_in_utf8_without_the_flag_is_read_as_utf8(tmp_path: Path) -> None:
    # macOS's Archive Utility writes UTF-8 names without setting the flag; cp437 would turn them into mojibake.
    archive = zip_with_raw_name(tmp_path / "mac.zip", "café.png".encode(), utf8_flag=False)
    assert [f.path for f in read_bundle(archive).files] == ["café.png", "index.html"]


@pytest.mark.parametrize("raw", [b"evil\x00.html", b"\x00vil.html", b"img/\x00.png"])
def test_a_zip_name_with_a_nul_byte_is_refused_not_cut_or_dropped(tmp_path: Path, raw: bytes) -> None:
    archive = zip_with_raw_name(tmp_path / "nul.zip", raw, utf8_flag=False)
    refused = refusal(archive)
    assert refused.code == "invalid_argument" and "has a NUL byte in its name" in refused.message
    assert "'" + raw.decode().replace("\x00", r"\x00") + "'" in refused.message  # the whole name, the NUL escaped


def test_zip_names_too_deep_or_too_long_are_refused(tmp_path: Path) -> None:
    deep = "/".join(["d"] * (reading.MAX_DEPTH + 1)) + "/x.css"
    long = "n" * (reading.MAX_PATH_BYTES + 1) + ".css"
    assert reading.MAX_DEPTH == 64 and reading.MAX_PATH_BYTES == 1024
    refused = refusal(zip_of(tmp_path / "deep.zip", {"index.html": b"ok", deep: b"x"}))
    assert refused.code == "invalid_argument" and "lies more than 64 folders deep" in refused.message
    refused = refusal(zip_of(tmp_path / "long.zip", {"index.html": b"ok", long: b"x"}))
    assert refused.code == "invalid_argument" and "1029-byte path, over the 1024-byte limit" in refused.message
    assert "…" in refused.message and len(refused.message) < 400  # the name is shown cut short


def test_a_folder_name_that_is_not_utf8_is_refused_naming_the_entry(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    (folder / "img").mkdir(parents=True)
    (folder / "index.html").write_text("<p>ok</p>")
    (folder / "img" / os.fsdecode(b"caf\xe9.png")).write_bytes(b"png")
    refused = refusal(folder)
    assert refused.code == "invalid_argument"
    assert r"entry 'img/caf\xe9.png' has a name that is not UTF-8; rename it" in refused.message


def test_a_folder_1100_deep_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "index.html").write_text("<p>ok</p>")
    # Made (and removed) level by level from each parent's fd: pathlib's, os's and shutil's own helpers recurse
    # and overflow the stack this deep, and a path resolved from / each time makes it quadratic.
    fds = [os.open(folder, os.O_RDONLY | os.O_DIRECTORY)]
    for _ in range(1100):
        os.mkdir("d", dir_fd=fds[-1])
        fds.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
    os.close(os.open("x.css", os.O_WRONLY | os.O_CREAT, dir_fd=fds[-1]))
    try:
        refused = refusal(folder)
    finally:
        os.unlink("x.css", dir_fd=fds[-1])
        while len(fds) > 1:
            os.close(fds.pop())
            os.rmdir("d", dir_fd=fds[-1])
        os.close(fds.pop())
    assert refused.code == "invalid_argument"
    assert "'" + "d/" * 64 + "d' lies more than 64 folders deep; flatten the tree" in refused.message


def test_git_and_bee_folders_are_not_bundle_files(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    (folder / ".git" / "objects").mkdir(parents=True)
    (folder / ".git" / "config").write_text("[core]")
    (folder / ".bee").mkdir()
    (folder / ".bee" / "state").write_text("x")
    (folder / "index.html").write_text("<p>ok</p>")
    assert [f.path for f in read_bundle(folder).files] == ["index.html"]


@pytest.fixture
def swapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, dict[str, Callable[[Path], object]]]:
    """A bundle folder and a hook that changes ``styles/a.css`` after the walk, just before it is read."""
    folder = tmp_path / "export"
    (folder / "styles").mkdir(parents=True)
    (folder / "index.html").write_text('<link rel="stylesheet" href="styles/a.css">')
    (folder / "styles" / "a.css").write_text("p { color: red }")
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret outside the bundle")
    real = reading._read_file
    changes: dict[str, Callable[[Path], object]] = {}

    def read_after_change(root: ConfinedRoot, entry: WalkEntry, source: str) -> bytes:
        if entry.path in changes:
            changes.pop(entry.path)(folder / entry.path)
        return real(root, entry, source)

    monkeypatch.setattr(reading, "_read_file", read_after_change)
    return folder, secret, changes


def test_a_file_swapped_for_a_symlink_after_the_walk_is_refused_not_followed(
    swapped: tuple[Path, Path, dict[str, Callable[[Path], object]]],
) -> None:
    folder, secret, changes = swapped

    def to_symlink(path: Path) -> None:
        path.unlink()
        path.symlink_to(secret)

    changes["styles/a.css"] = to_symlink
    refused = refusal(folder)
    assert refused.code == "outside_root"
    assert "'styles/a.css' is a symlink (swapped in while the bundle was read)" in refused.message


def test_a_folder_swapped_for_a_symlink_after_the_walk_is_refused_not_followed(
    swapped: tuple[Path, Path, dict[str, Callable[[Path], object]]],
) -> None:
    folder, secret, changes = swapped
    (secret.parent / "elsewhere").mkdir()
    (secret.parent / "elsewhere" / "a.css").write_text(secret.read_text())

    def folder_to_symlink(path: Path) -> None:
        path.unlink()
        path.parent.rmdir()
        path.parent.symlink_to(secret.parent / "elsewhere")

    changes["styles/a.css"] = folder_to_symlink
    refused = refusal(folder)
    assert refused.code == "outside_root" and "'styles/a.css' is a symlink" in refused.message


@pytest.mark.parametrize(
    "change",
    [
        lambda path: path.write_text("p { color: blue; margin: 0 }"),  # rewritten in place, another size
        lambda path: (path.unlink(), path.write_text("p { color: red }")),  # replaced by another file
    ],
    ids=["rewritten", "replaced"],
)
def test_a_file_changed_after_the_walk_is_refused_as_changed(
    swapped: tuple[Path, Path, dict[str, Callable[[Path], object]]], change: Callable[[Path], object]
) -> None:
    folder, _, changes = swapped
    changes["styles/a.css"] = change
    refused = refusal(folder)
    assert refused.code == "conflict" and "'styles/a.css' changed while the bundle was read" in refused.message


@pytest.mark.timeout(20)  # opening a FIFO for reading without a writer blocks: this must not
def test_a_file_swapped_for_a_fifo_or_removed_after_the_walk_is_refused(
    swapped: tuple[Path, Path, dict[str, Callable[[Path], object]]],
) -> None:
    folder, _, changes = swapped

    def to_fifo(path: Path) -> None:
        path.unlink()
        os.mkfifo(path)

    changes["styles/a.css"] = to_fifo
    refused = refusal(folder)
    assert refused.code == "invalid_argument" and "is a FIFO, not a regular file" in refused.message
    (folder / "styles" / "a.css").unlink()
    (folder / "styles" / "a.css").write_text("p {}")
    changes["styles/a.css"] = lambda path: path.unlink()
    refused = refusal(folder)
    assert refused.code == "not_found" and "went away while the bundle was read" in refused.message
