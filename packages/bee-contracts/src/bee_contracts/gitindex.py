"""Whether git tracks a file, read from its repository's index without running git.

A file git tracks arrived with (or will leave with) the checkout, so Bee never takes a secret from one — a signing
key that came with a clone is a key its author knows. Running ``git`` for this would be a subprocess on every read
(and would run whatever ``git`` the PATH names); the index answers it directly.

The index format (``gitformat-index``): a header ``DIRC``, a version (2, 3 or 4) and an entry count, then one entry
per tracked path — 40 bytes of file status, the object hash (20 bytes, or 32 in a SHA-256 repository), 16 bits of
flags (and 16 more in version 3 when the extended flag is set), then the path: NUL-terminated and padded to a
multiple of 8 bytes in versions 2 and 3, prefix-compressed against the previous path in version 4. A split index
(``core.splitIndex``) keeps most entries in a shared index named by its ``link`` extension; both are read.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
from pathlib import Path

#: An index larger than this is not read (a million tracked paths take about 100 MB).
MAX_INDEX_BYTES = 512 * 1024 * 1024

_SHA256_CONFIG = re.compile(rb"^\s*objectformat\s*=\s*sha256\s*$", re.IGNORECASE | re.MULTILINE)
_EXTENDED = 0x4000


class UnreadableIndex(ValueError):
    """The repository's index exists but cannot be read as one; whether git tracks the file is unknown."""


def repository(path: Path) -> tuple[Path, Path] | None:
    """The work tree holding ``path`` (a real path) and its git directory, or None outside any repository.

    The nearest ``.git`` above ``path`` decides: a directory, or a file ``gitdir: DIR`` (linked worktrees and
    submodules).
    """
    for directory in path.parents:
        dot = directory / ".git"
        if dot.is_dir():
            return directory, dot
        if dot.is_file():
            try:
                text = dot.read_bytes()[:4096].decode("utf-8", "replace")
            except OSError:
                return None
            if not text.startswith("gitdir:"):
                return None
            target = Path(text.removeprefix("gitdir:").strip())
            return directory, target if target.is_absolute() else directory / target
    return None


def tracked(path: Path) -> bool:
    """Whether git tracks ``path``: it is in the index of the repository whose work tree holds it.

    Raises:
        UnreadableIndex: the index exists but is not one this reader understands, or is too large to read.
    """
    real = Path(os.path.realpath(path.parent)) / path.name
    found = repository(real)
    if found is None:
        return False
    worktree, gitdir = found
    index = gitdir / "index"
    if not index.is_file():
        return False
    target = os.fsencode(real.relative_to(worktree).as_posix())
    hash_size = 32 if _sha256_repository(gitdir) else 20
    data = _read(index)
    if _surely_absent(data, target, hash_size):
        return False
    names, shared = _parse(data, hash_size)
    if target in names:
        return True
    if shared is None:
        return False
    shared_index = gitdir / f"sharedindex.{shared}"
    if not shared_index.is_file():
        raise UnreadableIndex(f"{index} is a split index whose shared part {shared_index} is missing")
    return target in _parse(_read(shared_index), hash_size)[0]


def _read(index: Path) -> bytes:
    try:
        size = index.stat().st_size
        if size > MAX_INDEX_BYTES:
            raise UnreadableIndex(f"{index} is larger than {MAX_INDEX_BYTES} bytes")
        return index.read_bytes()
    except OSError as exc:
        raise UnreadableIndex(f"{index} cannot be read ({exc.strerror or exc})") from None


def _surely_absent(data: bytes, target: bytes, hash_size: int) -> bool:
    """Whether ``target`` cannot be in the index ``data``, found without walking its entries.

    Versions 2 and 3 store every path whole and NUL-terminated, and a split index always carries the bytes
    ``link``: in an intact index (its trailing checksum matches) whose bytes hold neither, the path is not tracked.
    One search in C instead of a walk in Python over every entry (tens of milliseconds for 50,000 paths). Anything
    else — version 4, a checksum that does not match or was not written — is walked.
    """
    if data[:4] != b"DIRC" or data[4:8] not in (b"\0\0\0\2", b"\0\0\0\3") or len(data) < 12 + hash_size:
        return False
    digest = hashlib.sha256 if hash_size == 32 else hashlib.sha1
    if digest(data[:-hash_size]).digest() != data[-hash_size:]:
        return False
    return target + b"\0" not in data and b"link" not in data


def _sha256_repository(gitdir: Path) -> bool:
    """Whether the repository's objects are named by SHA-256 (``extensions.objectformat``), in its common config."""
    common = gitdir
    try:
        pointer = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        pointer = ""
    if pointer:
        common = Path(pointer) if os.path.isabs(pointer) else gitdir / pointer
    try:
        config = (common / "config").read_bytes()[: 1024 * 1024]
    except OSError:
        return False
    return _SHA256_CONFIG.search(config) is not None


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """Git's offset varint (each continuation adds one before shifting) at ``at``: the value and where it ends."""
    byte = data[at]
    at += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[at]
        at += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, at


def _parse(data: bytes, hash_size: int) -> tuple[set[bytes], str | None]:
    """The paths in the index ``data``, and the name of its shared index when it is a split index.

    Raises:
        UnreadableIndex: ``data`` is not an index of version 2, 3 or 4, or is cut short.
    """
    if len(data) < 12 + hash_size or data[:4] != b"DIRC":
        raise UnreadableIndex("it is not a git index (no DIRC header)")
    version, count = struct.unpack_from(">II", data, 4)
    if version not in (2, 3, 4):
        raise UnreadableIndex(f"it is a version {version} index; Bee reads versions 2 to 4")
    end = len(data) - hash_size  # the trailing checksum
    at, previous, names, shared = 12, b"", set(), None
    try:
        for _ in range(count):
            flags_at = at + 40 + hash_size
            (flags,) = struct.unpack_from(">H", data, flags_at)
            name_at = flags_at + 2 + (2 if version >= 3 and flags & _EXTENDED else 0)
            if version == 4:
                strip, name_at = _varint(data, name_at)
                if strip > len(previous):
                    raise UnreadableIndex("an entry strips more of the previous path than it has")
                nul = data.index(b"\0", name_at, end)
                name = previous[: len(previous) - strip] + data[name_at:nul]
                at = nul + 1
            else:
                nul = data.index(b"\0", name_at, end)
                name = data[name_at:nul]
                at += (nul - at + 8) & ~7  # 1 to 8 NULs pad the entry to a multiple of 8 bytes
            names.add(name)
            previous = name
        while at + 8 <= end:
            signature, (size,) = data[at : at + 4], struct.unpack_from(">I", data, at + 4)
            link = data[at + 8 : at + 8 + hash_size]
            if signature == b"link" and link.strip(b"\0"):
                shared = link.hex()
            at += 8 + size
    except UnreadableIndex:
        raise
    except (struct.error, ValueError, IndexError) as exc:  # data.index finds no NUL; a byte read past the end
        raise UnreadableIndex(f"it is cut short or damaged ({exc})") from None
    return names, shared
