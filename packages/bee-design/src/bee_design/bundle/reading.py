"""Reading a design bundle — a folder or a zip of one — into named files, safely.

Every name must be a plain relative path (no ``..``, no absolute or drive names, no backslashes) of UTF-8 text
without NUL, at most :data:`MAX_DEPTH` folders deep and :data:`MAX_PATH_BYTES` long; no entry may be a symlink or a
special file; and the file count and total size are bounded before any content is read: a zip's declared sizes are
checked first, and reading never takes more than an entry declares, so a zip bomb is refused without being
inflated. Platform clutter (``__MACOSX/``, ``.DS_Store``, ``Thumbs.db``) is skipped, and so are ``.git`` and
``.bee`` in a folder (a repository's internals and Bee's own state are never design files). A zip whose entries
all sit in one top-level folder is read from inside that folder.

A folder is walked and read through one :class:`~bee_hostkit.ConfinedRoot`: every directory and file is opened
from its parent's fd with ``O_NOFOLLOW``, so a file or folder swapped for a symlink between the walk and the read
is refused, never followed out of the bundle, and a file that is not the one the walk met (replaced, grown or
rewritten meanwhile) is refused as changed.
"""

from __future__ import annotations

import os
import stat
import struct
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from bee_contracts import BeeError, ErrorCode, invalid
from bee_hostkit import ConfinedRoot
from bee_hostkit.paths import WalkEntry, shown

#: Most files a bundle may hold.
MAX_FILES: Final = 5000
#: Most files and folders a bundle folder may hold in all, clutter included (a guard on the walk itself).
MAX_ENTRIES: Final = 4 * MAX_FILES
#: Most folders a bundle file may sit in, one inside the other.
MAX_DEPTH: Final = 64
#: Longest relative path of a bundle file, in UTF-8 bytes.
MAX_PATH_BYTES: Final = 1024
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
        f"bundle entry '{shown(name)}' {why}; a bundle holds only plain files under relative paths",
        details={"entry": shown(name)},
    )


def _malformed(name: str | bytes, why: str, source: str) -> BeeError:
    return invalid(f"{source}: entry '{shown(name)}' {why}", entry=shown(name))


def clean_name(name: str, source: str) -> str | None:
    """The entry's relative path with forward slashes, or None for clutter to skip.

    Raises:
        BeeError: ``outside_root`` for an absolute name, ``..`` or a backslash; ``invalid_argument`` for a NUL
            byte, a name that is not UTF-8 (a folder's name, as the file system keeps it), one more than
            :data:`MAX_DEPTH` folders deep or longer than :data:`MAX_PATH_BYTES`.
    """
    if "\x00" in name:
        raise _malformed(name, "has a NUL byte in its name; rename it", source)
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:  # surrogate escapes: bytes of a file system name that are not UTF-8
        raise _malformed(name, "has a name that is not UTF-8; rename it", source) from None
    if "\\" in name:
        raise _refuse(name, "contains a backslash")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise _refuse(name, "is absolute")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise _refuse(name, "climbs out with '..'")
    if not parts or _CLUTTER_DIRS.intersection(parts) or parts[-1] in _CLUTTER_FILES:
        return None
    if len(parts) - 1 > MAX_DEPTH:
        raise _malformed(name, f"lies more than {MAX_DEPTH} folders deep; flatten the bundle", source)
    if size > MAX_PATH_BYTES:
        raise _malformed(name, f"has a {size}-byte path, over the {MAX_PATH_BYTES}-byte limit; shorten it", source)
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
        BeeError: ``outside_root`` for a symlink or special file inside the folder (a symlink swapped in after the
            walk too); ``invalid_argument`` for a malformed name (see :func:`clean_name`), over a limit, for an
            empty folder or one that cannot be read, or a special file swapped in after the walk; ``conflict`` for a
            file that changes while the bundle is read; ``not_found`` for one that goes away meanwhile.
    """
    source = f"folder {str(folder)!r}"
    tally = _Tally(source)
    try:
        root = ConfinedRoot(folder)
    except OSError as exc:
        raise invalid(f"{source} cannot be opened ({exc.strerror}); pass a folder you can read") from None
    try:
        found: list[tuple[str, WalkEntry]] = []
        for entry in _walked(root, source):
            cleaned = clean_name(entry.path, source)
            if entry.kind == "symlink":
                raise _refuse(entry.path, "is a symlink")
            if entry.kind != "file":
                raise _refuse(entry.path, "is not a regular file")
            if cleaned is None:
                continue
            tally.add(cleaned, entry.info.st_size)
            found.append((cleaned, entry))
        if not found:
            raise invalid(f"{source} holds no files; point at the exported design folder")
        files = tuple(BundleFile(name, _read_file(root, entry, source)) for name, entry in sorted(found))
    finally:
        root.close()
    return RawBundle("folder", _display_name(folder), files)


def _display_name(path: Path) -> str:
    """The folder's or zip's own name for the manifest: the user's to choose, but it must be text (UTF-8)."""
    return os.fsencode(path.name).decode("utf-8", "replace")


def _walked(root: ConfinedRoot, source: str) -> Iterator[WalkEntry]:
    """The walk of a bundle folder, its refusals (too deep, too many entries, changed meanwhile) naming the folder."""
    try:
        yield from root.walk(max_depth=MAX_DEPTH, max_entries=MAX_ENTRIES, skip=_CLUTTER_DIRS)
    except BeeError as exc:
        raise BeeError(exc.code, f"{source}: {exc.message}", details=exc.details) from None


def _read_file(root: ConfinedRoot, entry: WalkEntry, source: str) -> bytes:
    """The bytes of the file the walk met at ``entry.path``, opened again without following any symlink.

    Raises:
        BeeError: ``outside_root`` when a symlink was swapped in on its path; ``not_found`` when it went away;
            ``conflict`` when it is no longer the file the walk met, or changed while it was read.
    """
    try:
        with root.open(entry.path, follow_symlinks=False) as file:
            if entry.unchanged(os.fstat(file.fd)):
                data = file.read()
                if len(data) == entry.info.st_size and entry.unchanged(os.fstat(file.fd)):
                    return data
    except OSError as exc:  # a read error of the device under the folder (EIO, say)
        raise invalid(f"{source}: '{shown(entry.path)}' cannot be read ({exc.strerror})") from None
    except BeeError as exc:
        if exc.code is ErrorCode.OUTSIDE_ROOT:
            raise _refuse(entry.path, "is a symlink (swapped in while the bundle was read)") from None
        if exc.code is ErrorCode.NOT_FOUND:
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"{source}: '{shown(entry.path)}' went away while the bundle was read; import it again once "
                "nothing is changing the folder",
                details={"entry": shown(entry.path)},
            ) from None
        raise BeeError(exc.code, f"{source}: '{shown(entry.path)}' cannot be read: {exc.message}") from None
    raise BeeError(
        ErrorCode.CONFLICT,
        f"{source}: '{shown(entry.path)}' changed while the bundle was read; import it again once nothing is "
        "changing the folder",
        details={"entry": shown(entry.path)},
    )


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def _open_zip(archive: Path, source: str) -> zipfile.ZipFile:
    """The zip at ``archive``, its names read as UTF-8 (flagged so or not: see the docs on zip names).

    Raises:
        BeeError: ``invalid_argument`` naming the entry whose name is not UTF-8, or for a file that is not a zip.
    """
    try:
        # metadata_encoding: a name not flagged UTF-8 is still read as UTF-8 (what macOS and most tools write),
        # strictly, so a name in some other code page (cp437, Shift JIS, ...) is refused, never guessed at.
        return zipfile.ZipFile(archive, metadata_encoding="utf-8")
    except UnicodeDecodeError as exc:
        raw = exc.object if isinstance(exc.object, bytes) else bytes(exc.object)
        raise _malformed(
            raw,
            "has a name that is not UTF-8 (written in another code page, or flagged UTF-8 wrongly); zip the "
            "folder again with a tool that writes UTF-8 names (Info-ZIP zip 3, 7-Zip, bsdtar, Python's zipfile)",
            source,
        ) from None
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, ValueError, struct.error) as exc:
        raise invalid(f"{source} cannot be read as a zip ({exc}); pass a folder or a .zip file") from None


def read_zip(archive: Path) -> RawBundle:
    """Read every file of the zip at ``archive``.

    Raises:
        BeeError: ``outside_root`` for an unsafe name or a symlink entry; ``invalid_argument`` for a file that is
            not a zip, a malformed name (see :func:`clean_name`; a name that is not UTF-8 included), an encrypted
            or duplicated entry, or a bundle over the limits.
    """
    source = f"zip {archive.name!r}"
    with _open_zip(archive, source) as zf:
        tally = _Tally(source)
        entries: dict[str, zipfile.ZipInfo] = {}
        for info in zf.infolist():
            if "\x00" in info.orig_filename:  # zipfile cuts the name at the NUL; the original shows it
                raise _malformed(info.orig_filename, "has a NUL byte in its name; zip the folder again", source)
            if _is_symlink(info):
                raise _refuse(info.filename, "is a symlink")
            cleaned = clean_name(info.filename, source)
            if info.is_dir() or cleaned is None:
                continue
            if info.flag_bits & 0x1:
                raise invalid(
                    f"{source}: '{shown(info.filename)}' is encrypted; export the bundle without a password",
                    entry=shown(info.filename),
                )
            if cleaned in entries:
                raise invalid(f"{source} holds '{shown(cleaned)}' twice; every path must be unique", entry=cleaned)
            tally.add(cleaned, info.file_size)  # declared sizes, all checked before anything is inflated
            entries[cleaned] = info
        if not entries:
            raise invalid(f"{source} holds no files; zip the exported design folder")
        prefix = _common_folder(list(entries))
        files = []
        for name in sorted(entries):
            files.append(BundleFile(name[len(prefix) :], _read_entry(zf, entries[name], source)))
    return RawBundle("zip", _display_name(archive), tuple(sorted(files, key=lambda f: f.path)))


def _read_entry(zf: zipfile.ZipFile, info: zipfile.ZipInfo, source: str) -> bytes:
    # ZipExtFile never returns more than the declared size; the checksum is verified when the end is reached.
    chunks = []
    try:
        with zf.open(info) as stream:
            while chunk := stream.read(_CHUNK):
                chunks.append(chunk)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, ValueError, struct.error) as exc:
        # ValueError: a local header whose name is not UTF-8 (UnicodeDecodeError), or other malformed fields.
        raise invalid(f"{source}: '{shown(info.filename)}' is damaged ({exc})", entry=shown(info.filename)) from None
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
