"""Reading a bundle safely: names, symlinks, limits and zip bombs are refused before anything is imported."""

import stat
import zipfile
from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_design.bundle import reading
from bee_design.bundle.reading import read_bundle
from tests.design.helpers import SHOP


def zip_of(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def test_a_folder_is_read_in_path_order_without_clutter(tmp_path):
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "b.css").write_text("b")
    (folder / "a.html").write_text("a")
    (folder / ".DS_Store").write_text("junk")
    (folder / "__MACOSX").mkdir()
    (folder / "__MACOSX" / "x").write_text("junk")
    raw = read_bundle(folder)
    assert raw.kind == "folder" and [f.path for f in raw.files] == ["a.html", "b.css"]


def test_a_zip_with_one_top_folder_is_read_from_inside_it(tmp_path):
    raw = read_bundle(zip_of(tmp_path / "shop.zip", {"shop/index.html": b"<p>", "shop/css/a.css": b"a{}"}))
    assert raw.kind == "zip" and raw.name == "shop.zip"
    assert [f.path for f in raw.files] == ["css/a.css", "index.html"]


def test_the_fixture_folder_and_its_zip_read_the_same(tmp_path):
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
def test_a_zip_entry_that_leaves_the_bundle_is_refused(tmp_path, name, why):
    archive = zip_of(tmp_path / "bad.zip", {"index.html": b"ok", name: b"evil"})
    with pytest.raises(BeeError) as caught:
        read_bundle(archive)
    assert caught.value.code == "outside_root" and why in caught.value.message


def test_a_zip_symlink_entry_is_refused(tmp_path):
    archive = tmp_path / "link.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("index.html", b"ok")
        info = zipfile.ZipInfo("styles.css")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(BeeError) as caught:
        read_bundle(archive)
    assert caught.value.code == "outside_root" and "symlink" in caught.value.message


def test_a_folder_with_a_symlink_is_refused(tmp_path):
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "index.html").write_text("ok")
    (folder / "secret.css").symlink_to("/etc/hostname")
    with pytest.raises(BeeError) as caught:
        read_bundle(folder)
    assert caught.value.code == "outside_root" and "'secret.css' is a symlink" in caught.value.message


def test_a_zip_bomb_is_refused_from_its_declared_sizes_without_inflating(tmp_path, monkeypatch):
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("index.html", b"ok")
        with zf.open("huge.png", "w", force_zip64=True) as stream:
            chunk = bytes(1024 * 1024)
            for _ in range(300):  # 300 MiB of zeros: a ~300 KiB file on disk
                stream.write(chunk)
    assert archive.stat().st_size < 2 * 1024 * 1024
    inflated: list[str] = []
    monkeypatch.setattr(reading, "_read_entry", lambda zf, info, source: inflated.append(info.filename) or b"")
    with pytest.raises(BeeError) as caught:
        read_bundle(archive)
    assert caught.value.code == "invalid_argument"
    assert "'huge.png' is 314572800 bytes, over the 67108864-byte limit" in caught.value.message
    assert inflated == []


def test_a_bundle_over_the_total_size_is_refused_before_inflating(tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "MAX_TOTAL_BYTES", 1000)
    inflated: list[str] = []
    monkeypatch.setattr(reading, "_read_entry", lambda zf, info, source: inflated.append(info.filename) or b"")
    archive = zip_of(tmp_path / "big.zip", {f"f{i}.css": bytes(400) for i in range(3)})
    with pytest.raises(BeeError, match=r"more than 1000 bytes.*zip bomb"):
        read_bundle(archive)
    assert inflated == []


def test_too_many_files_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "MAX_FILES", 3)
    archive = zip_of(tmp_path / "many.zip", {f"f{i}.css": b"x" for i in range(4)})
    with pytest.raises(BeeError, match="more than 3 files"):
        read_bundle(archive)


def test_a_file_that_is_not_a_zip_and_an_empty_zip_are_refused(tmp_path):
    (tmp_path / "notes.zip").write_text("not a zip")
    with pytest.raises(BeeError, match="cannot be read as a zip"):
        read_bundle(tmp_path / "notes.zip")
    with pytest.raises(BeeError, match="holds no files"):
        read_bundle(zip_of(tmp_path / "empty.zip", {}))
    with pytest.raises(BeeError) as caught:
        read_bundle(tmp_path / "missing")
    assert caught.value.code == "not_found"


def test_duplicate_zip_entries_are_refused(tmp_path):
    import warnings

    archive = tmp_path / "dup.zip"
    with warnings.catch_warnings(), zipfile.ZipFile(archive, "w") as zf:
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name we write on purpose
        zf.writestr("a.css", b"1")
        zf.writestr("a.css", b"2")
    with pytest.raises(BeeError, match="twice"):
        read_bundle(archive)
