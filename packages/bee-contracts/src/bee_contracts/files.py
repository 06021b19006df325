"""The one atomic file write: readers see the old file or the whole new one, never a part, even after a crash.

:func:`write_atomic` replaces a file Bee owns; :func:`write_if_unchanged` replaces one someone else may be saving at
the same moment (an editor's configuration), only over the bytes that were read.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import secrets
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path


def write_atomic(
    path: Path, data: bytes | Iterable[bytes], *, scratch: Path | None = None, mode: int | None = None
) -> None:
    """Write ``data`` to ``path`` through a temporary file, fsync it, rename it over ``path``, fsync the directory.

    ``data`` is the bytes, or pieces of them written as they come (an export larger than memory); if producing a
    piece fails, ``path`` is unchanged.

    ``scratch`` is where the temporary file lives (default: beside ``path``; it must be on the same file system),
    for stores that sweep their own leftovers after an interrupted write. The file gets permission bits ``mode``
    (default 0600, those of the temporary file), set before the rename so it is never readable more widely.

    Raises:
        OSError: the folder cannot be created or written; ``path`` is then unchanged.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = scratch or path.parent
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            if mode is not None:
                os.fchmod(stream.fileno(), mode)
            if isinstance(data, bytes | bytearray | memoryview):
                stream.write(data)
            else:
                for piece in data:
                    stream.write(piece)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            _sync_directory(directory)
        finally:
            os.close(directory)


class KeptAside(Exception):
    """A file was saved by someone else twice in the instant Bee swapped it; one of those versions is kept aside
    (at :attr:`name`, beside the file) rather than discarded."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_UNSUPPORTED = frozenset({errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP})


@functools.cache
def _libc_renameat2() -> Callable[..., int] | None:
    try:
        import ctypes  # only where a conditional write is made: ctypes costs an import the rest never pays

        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # not glibc (or not Linux): no renameat2
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int

    def call(folder: int, source: str, target: str, flags: int) -> int:
        if function(folder, os.fsencode(source), folder, os.fsencode(target), flags) == 0:
            return 0
        return ctypes.get_errno()

    return call


def _rename2(folder: int, source: str, target: str, flags: int) -> bool:
    """renameat2(2) of ``source`` to ``target`` in the directory ``folder``; False when this system or its file
    system does not offer ``flags``.

    Raises:
        OSError: the rename failed (FileExistsError for RENAME_NOREPLACE onto an existing file).
    """
    rename = _libc_renameat2()
    if rename is None:
        return False
    failure = rename(folder, source, target, flags)
    if failure == 0:
        return True
    if failure in _UNSUPPORTED:
        return False
    raise OSError(failure, os.strerror(failure), target)


def _stage(folder: int, name: str, data: bytes, mode: int, owner: tuple[int, int] | None) -> str:
    """A new temporary file beside ``name`` holding ``data`` (synced), with ``mode`` and ``owner``; its name."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        temporary = f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            handle = os.open(temporary, flags, 0o600, dir_fd=folder)
        except FileExistsError:
            continue
        break
    try:
        with os.fdopen(handle, "wb") as stream:
            if owner is not None:
                os.fchown(stream.fileno(), *owner)
            os.fchmod(stream.fileno(), mode)
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
    except BaseException:
        os.unlink(temporary, dir_fd=folder)
        raise
    return temporary


def _holds(folder: int, name: str, data: bytes) -> bool:
    """Whether the regular file ``name`` (no symlink followed) holds exactly ``data``; reads at most one byte more."""
    try:
        handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    except OSError:  # gone, or a symlink or something else in its place: not what was read
        return False
    with os.fdopen(handle, "rb") as stream:
        return stat.S_ISREG(os.fstat(handle).st_mode) and stream.read(len(data) + 1) == data


def write_if_unchanged(
    folder: int,
    name: str,
    data: bytes,
    *,
    expected: bytes | None,
    mode: int,
    owner: tuple[int, int] | None = None,
) -> bool:
    """Replace the file ``name`` in the directory ``folder`` (an open fd) with ``data`` atomically, if it still holds
    ``expected`` (None: if there is no such file), without ever discarding bytes that were not ``expected``.

    This is how a file someone else may be saving at the same time (an editor's configuration) is rewritten: read
    it, compute ``data`` from it, then call this; on False read again and retry. The new file is written beside the
    old one, synced, and checked to be unchanged just before it takes the old one's place. Where the system offers
    it (Linux's renameat2), the swap is an exchange, so the bytes it displaces are looked at once more: if a save
    landed between the check and the swap, that save is put back at once and False returned. A new file is created
    only if none has appeared meanwhile. Elsewhere the check just before the rename is the guard.

    The file gets permission bits ``mode`` and, when given, ``owner`` (uid, gid), before anyone can see it.

    Returns:
        True when ``data`` replaced ``expected``; False, with nothing changed, when the file no longer held it.

    Raises:
        KeptAside: a second save landed in the instant of the swap; that version is kept beside the file.
        OSError: the file or the folder cannot be written; the file is then unchanged.
    """
    temporary = _stage(folder, name, data, mode, owner)
    keep = False
    try:
        if expected is None:
            try:
                if not _rename2(folder, temporary, name, _RENAME_NOREPLACE):
                    os.link(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
            except FileExistsError:
                return False
            return True
        if not _holds(folder, name, expected):
            return False
        if not _rename2(folder, temporary, name, _RENAME_EXCHANGE):
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
            return True
        if _holds(folder, temporary, expected):
            return True
        # A save landed between the check and the exchange: it goes back where it was, and the caller reads it.
        _rename2(folder, temporary, name, _RENAME_EXCHANGE)
        if _holds(folder, temporary, data):
            return False
        keep = True
        raise KeptAside(temporary)
    finally:
        if not keep:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary, dir_fd=folder)
        _sync_directory(folder)


def _sync_directory(folder: int) -> None:
    # A rename is durable only once the directory entry is on disk.
    with contextlib.suppress(OSError):
        os.fsync(folder)
