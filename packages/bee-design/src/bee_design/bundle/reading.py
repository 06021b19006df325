"""Reading a design bundle — a folder or a zip of one — into named files, safely.

Every name must be a plain relative path (no ``..``, no absolute or drive names, no backslashes, no NUL), no entry
may be a symlink or a special file, and the file count and total size are bounded before any content is read: a
zip's declared sizes are checked first, and reading never takes more than an entry declares, so a zip bomb is
refused without being inflated. Platform clutter (``__MACOSX/``, ``.DS_Store``, ``Thumbs.db``) is skipped. A zip
whose entries all sit in one top-level folder is read from inside that folder.
"""

from __future__ import annotations

import os
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from bee_contracts import BeeError, ErrorCode, invalid

#: Most files a bundle may hold.
MAX_FILES: Final = 5000
#: Most bytes all files of a bundle may hold together, and one file alone.
MAX_TOTAL_BYTES: Final = 256 * 1024 * 1024
MAX_FILE_BYTES: Final = 64 * 1024 * 1024

_CLUTTER_DIRS = frozenset({"__MACOSX"})
_CLUTTER_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class BundleFile:
    """One file of a bundle: its path relative to the bundle root (forward slashes) and its bytes."""

    path: str
    data: bytes


@dataclass(frozen=True)
class RawBundle:
    """What was read: where from, and the files in path order."""

    kind: Literal["folder", "zip"]
    name: str
    files: tuple[BundleFile, ...]


def _refuse(name: str, why: str) -> BeeError:
    return BeeError(
        ErrorCode.OUTSIDE_ROOT,
        f"bundle entry {name!r} {why}; a bundle holds only plain files under relative paths",
        details={"entry": name},
    )


def clean_name(name: str) -> str | None:
    """The entry's relative path with forward slashes, or None for clutter to skip.

    Raises:
        BeeError: ``outside_root`` for an absolute name, ``..``, a backslash or a NUL byte.
    """
    if "\x00" in name:
        raise _refuse(name.replace("\x00", "\\0"), "contains a NUL byte")
    if "\\" in name:
        raise _refuse(name, "contains a backslash")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise _refuse(name, "is absolute")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise _refuse(name, "climbs out with '..'")
    if not parts or _CLUTTER_DIRS.intersection(parts) or parts[-1] in _CLUTTER_FILES:
        return None
    return "/".join(parts)


class _Tally:
    """Counts files and bytes against the bundle limits."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.files = 0
        self.bytes = 0

    def add(self, name: str, size: int) -> None:
        self.files += 1
        self.bytes += size
        if self.files > MAX_FILES:
            raise invalid(f"{self.source} holds more than {MAX_FILES} files; split the design into several bundles")
        if size > MAX_FILE_BYTES:
            raise invalid(
                f"{self.source}: {name!r} is {size} bytes, over the {MAX_FILE_BYTES}-byte limit for one file",
                entry=name,
            )
        if self.bytes > MAX_TOTAL_BYTES:
            raise invalid(
                f"{self.source} holds more than {MAX_TOTAL_BYTES} bytes (uncompressed); refusing to import it "
                "(a zip bomb, or a bundle to split)"
            )


def read_folder(folder: Path) -> RawBundle:
    """Read every regular file under ``folder``.

    Raises:
        BeeError: ``outside_root`` for a symlink or special file inside the folder; ``invalid_argument`` over a
            limit or for an empty folder.
    """
    tally = _Tally(f"folder {str(folder)!r}")
    found: list[tuple[str, Path]] = []
    for directory, subdirs, names in os.walk(folder, followlinks=False):
        base = Path(directory)
        for name in sorted(subdirs):
            if (base / name).is_symlink():
                raise _refuse((base / name).relative_to(folder).as_posix(), "is a symlink")
        subdirs[:] = sorted(d for d in subdirs if d not in _CLUTTER_DIRS)
        for name in sorted(names):
            path = base / name
            rel = path.relative_to(folder).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                raise _refuse(rel, "is a symlink")
            if not stat.S_ISREG(info.st_mode):
                raise _refuse(rel, "is not a regular file")
            cleaned = clean_name(rel)
            if cleaned is None:
                continue
            tally.add(cleaned, info.st_size)
            found.append((cleaned, path))
    if not found:
        raise invalid(f"folder {str(folder)!r} holds no files; point at the exported design folder")
    files = tuple(BundleFile(name, path.read_bytes()) for name, path in sorted(found))
    return RawBundle("folder", folder.name, files)


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def read_zip(archive: Path) -> RawBundle:
    """Read every file of the zip at ``archive``.

    Raises:
        BeeError: ``outside_root`` for an unsafe name or a symlink entry; ``invalid_argument`` for a file that is
            not a zip, an encrypted or duplicated entry, or a bundle over the limits.
    """
    source = f"zip {archive.name!r}"
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise invalid(f"{source} cannot be read as a zip ({exc}); pass a folder or a .zip file") from None
    with zf:
        tally = _Tally(source)
        entries: dict[str, zipfile.ZipInfo] = {}
        for info in zf.infolist():
            if _is_symlink(info):
                raise _refuse(info.filename, "is a symlink")
            cleaned = clean_name(info.filename)
            if info.is_dir() or cleaned is None:
                continue
            if info.flag_bits & 0x1:
                raise invalid(f"{source}: {info.filename!r} is encrypted; export the bundle without a password")
            if cleaned in entries:
                raise invalid(f"{source} holds {cleaned!r} twice; every path must be unique", entry=cleaned)
            tally.add(cleaned, info.file_size)  # declared sizes, all checked before anything is inflated
            entries[cleaned] = info
        if not entries:
            raise invalid(f"{source} holds no files; zip the exported design folder")
        prefix = _common_folder(list(entries))
        files = []
        for name in sorted(entries):
            files.append(BundleFile(name[len(prefix) :], _read_entry(zf, entries[name], source)))
    return RawBundle("zip", archive.name, tuple(sorted(files, key=lambda f: f.path)))


def _read_entry(zf: zipfile.ZipFile, info: zipfile.ZipInfo, source: str) -> bytes:
    # ZipExtFile never returns more than the declared size; the checksum is verified when the end is reached.
    chunks = []
    try:
        with zf.open(info) as stream:
            while chunk := stream.read(_CHUNK):
                chunks.append(chunk)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as exc:
        raise invalid(f"{source}: {info.filename!r} is damaged ({exc})", entry=info.filename) from None
    return b"".join(chunks)


def _common_folder(names: list[str]) -> str:
    """``"top/"`` when every name sits inside the one folder ``top``, else ``""``."""
    tops = {name.split("/", 1)[0] for name in names}
    if len(tops) == 1 and all("/" in name for name in names):
        return tops.pop() + "/"
    return ""


def read_bundle(path: Path) -> RawBundle:
    """Read a bundle from a folder or a ``.zip`` file.

    Raises:
        BeeError: ``not_found`` when nothing is at ``path``; the errors of :func:`read_folder`/:func:`read_zip`.
    """
    if path.is_dir():
        return read_folder(path)
    if path.is_file():
        return read_zip(path)
    raise BeeError(
        ErrorCode.NOT_FOUND,
        f"no bundle at {str(path)!r}; pass an exported design folder or a .zip of one",
        details={"path": str(path)},
    )
