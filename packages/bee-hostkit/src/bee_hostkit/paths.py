"""The one path-confinement helper: every repository-relative file a tool reads is opened through here.

A :class:`ConfinedRoot` opens its directory once. Each path is then walked one component at a time from that
directory's fd with ``O_NOFOLLOW``, and a symlink met on the way is resolved here, in user space, under the same
rules as the path itself. What is checked is what is opened, so there is no window between the two for a swapped
symlink or directory to slip through. The file is opened non-blocking and ``fstat``-ed, and only a regular file is
ever read, never more than ``fstat`` said: a FIFO, socket or device swapped in is refused at once instead of
blocking a worker or streaming without end.

Never served, whatever the route (a name in the path, a symlink's target, a symlink inside the root pointing
back in): anything outside the root, any component named ``.git`` or ``.bee`` (a repository's internals, Bee's
own state) and the ``hidden`` directories a host names at startup (such as a Bee instance root that lies inside
the checkout).

:meth:`ConfinedRoot.walk` lists a whole tree the same way: each directory is opened from its parent's fd with
``O_NOFOLLOW`` and listed through that fd, iteratively (a deep tree costs a bounded list, not the interpreter's
stack), and a symlink is reported, never followed. Opening what the walk reported with ``follow_symlinks=False``
then refuses a symlink swapped in meanwhile instead of following it.
"""

from __future__ import annotations

import errno
import os
import stat
import weakref
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bee_contracts import BeeError, ErrorCode, invalid

#: Path components that are never served: a repository's internals and Bee's own state.
FORBIDDEN_NAMES = frozenset({".git", ".bee"})

#: Symlinks one path may pass through (Linux's own limit); more is a loop or an attack.
MAX_SYMLINKS = 40

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO or device must never wait; O_NOCTTY: a terminal must never become ours.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CHUNK = 1024 * 1024

#: Characters of a name shown in a message before it is cut short (names can be 64 KiB long in a zip).
SHOWN_NAME_CHARS = 200

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def shown(name: str | bytes) -> str:
    """``name`` as a message shows it (between single quotes): escaped as Python escapes a string — ``\\\\`` for a
    backslash, ``\\'`` for a quote, ``\\n``, ``\\x00``, ``\\u200b`` for what does not print — with the bytes that
    are not UTF-8 (a file system's surrogate escapes, or raw bytes) as ``\\xNN``, and cut to
    :data:`SHOWN_NAME_CHARS` characters (then ``…``)."""
    text = name.decode("utf-8", "surrogateescape") if isinstance(name, bytes) else name
    cut = text[:SHOWN_NAME_CHARS]
    escaped = "".join(_escaped(char) for char in cut)
    return escaped + "…" if len(text) > SHOWN_NAME_CHARS else escaped


def _escaped(char: str) -> str:
    if "\udc80" <= char <= "\udcff":  # a byte that is not UTF-8, as surrogateescape carries it
        return f"\\x{ord(char) - 0xDC00:02x}"
    if char == "'":
        return "\\'"
    if char == "\\" or not char.isprintable():
        return repr(char)[1:-1]
    return char


def _outside(path: str, why: str) -> BeeError:
    return BeeError(
        ErrorCode.OUTSIDE_ROOT,
        f"path {path!r} {why}; give a repository-relative path with forward slashes inside the checkout",
        details={"path": path},
    )


#: What a refusal of a path into ``.git``, ``.bee`` or a hidden directory says: those are refused whatever the path's
#: spelling, so the usual advice (a repository-relative path inside the checkout) would not help.
_NEVER_SERVED = (
    "repository internals (.git) and Bee's own state (.bee) are never served; select one of the project's own files"
)


def _never_served(path: str, why: str) -> BeeError:
    return BeeError(ErrorCode.OUTSIDE_ROOT, f"path {path!r} {why}: {_NEVER_SERVED}", details={"path": path})


def _not_found(path: str, why: str = "") -> BeeError:
    return BeeError(
        ErrorCode.NOT_FOUND,
        f"no file at {path!r} in the checkout{why}; check the spelling or list the directory first",
        details={"path": path},
    )


def _not_a_file(path: str, kind: str) -> BeeError:
    if kind == "a directory":
        return invalid(f"{path!r} is a directory; select a file inside it", path=path)
    return invalid(f"{path!r} is {kind}, not a regular file; only regular files are read", path=path)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _parts(path: str) -> list[str]:
    """The components of ``path``, refusing what no walk may start with (checked before any system call)."""
    if not path or not path.strip():
        raise invalid("path is empty; give a repository-relative file path")
    if "\x00" in path:
        raise _outside(path.replace("\x00", "\\0"), "contains a NUL byte")
    if "\\" in path:
        raise _outside(path, "contains a backslash")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise _outside(path, "is absolute")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise _outside(path, "climbs out with '..'")
    for at, part in enumerate(parts):
        if part in FORBIDDEN_NAMES:
            raise _never_served(path, _forbidden_why(parts[: at + 1], inside=at + 1 < len(parts), via_link=False))
    return parts


def _forbidden_why(where: list[str], *, inside: bool, via_link: bool) -> str:
    """Why a path is refused whose components (the real ones, after symlinks) reach ``where``, ending in a name
    never served: ``inside`` when the path goes on below it."""
    reached = shown("/".join(where))
    if via_link:
        return f"resolves through a symlink to {reached}"
    return f"lies in {reached}" if inside else f"names {reached}"


@dataclass(frozen=True)
class WalkEntry:
    """A file, symlink or special file met by :meth:`ConfinedRoot.walk`.

    ``path`` is relative to the root with forward slashes, spelled as the file system spells it (a name that is not
    UTF-8 keeps its bytes as surrogate escapes: see :func:`shown`); ``info`` is its ``lstat`` when the walk met it.
    """

    path: str
    kind: Literal["file", "symlink", "other"]
    info: os.stat_result

    def unchanged(self, info: os.stat_result) -> bool:
        """Whether ``info`` (the ``fstat`` of what was opened at :attr:`path`) is the file the walk met, as it was."""
        mine = self.info
        return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns) == (
            mine.st_dev,
            mine.st_ino,
            mine.st_size,
            mine.st_mtime_ns,
        )


def _changed(path: str, why: str) -> BeeError:
    return BeeError(
        ErrorCode.CONFLICT,
        f"'{shown(path)}' {why} while the tree was walked; try again once nothing is changing it",
        details={"path": shown(path)},
    )


class ConfinedFile:
    """A regular file opened through a :class:`ConfinedRoot`; reads never go past the size ``fstat`` gave.

    Use it as a context manager (or call :meth:`close`): it owns an open file descriptor.
    """

    def __init__(self, fd: int, path: str, size: int) -> None:
        self.fd = fd
        self.path = path
        #: The size ``fstat`` reported when the file was opened; a file growing meanwhile is read up to here.
        self.size = size

    def read(self) -> bytes:
        """The file's bytes: at most :attr:`size`, fewer if it was truncated since it was opened."""
        pieces: list[bytes] = []
        remaining = self.size
        while remaining > 0:
            piece = os.read(self.fd, remaining)
            if not piece:
                break
            pieces.append(piece)
            remaining -= len(piece)
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    def chunks(self, chunk_bytes: int = _CHUNK) -> Iterator[bytes]:
        """The file's bytes in pieces of at most ``chunk_bytes``, at most :attr:`size` in total (for streaming)."""
        remaining = self.size
        while remaining > 0:
            piece = os.read(self.fd, min(chunk_bytes, remaining))
            if not piece:
                return
            remaining -= len(piece)
            yield piece

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> ConfinedFile:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class ConfinedRoot:
    """A directory, opened once, whose files are opened relative to its fd and never outside it.

    ``path`` must be an existing directory; it is resolved once here. ``hidden`` names further directories that
    are never served when they lie inside the root (those outside it are unreachable anyway).

    Raises:
        OSError: ``path`` cannot be opened as a directory.
    """

    def __init__(self, path: Path, *, hidden: Iterable[Path] = ()) -> None:
        resolved = path.resolve()
        self._adopt_directory(resolved, os.open(resolved, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
        self._hidden = tuple(
            inside.parts for inside in (self._relative(str(p.resolve())) for p in hidden) if inside is not None
        )

    def _adopt_directory(self, path: Path, fd: int) -> None:
        self.path = path
        self._prefix = str(self.path).rstrip(os.sep) + os.sep
        self._fd = fd
        self._closer = weakref.finalize(self, os.close, self._fd)

    def close(self) -> None:
        """Close the directory fd (also done when the root is garbage collected)."""
        self._closer()

    def _relative(self, absolute: str) -> Path | None:
        if absolute == str(self.path):
            return Path()
        if absolute.startswith(self._prefix):
            return Path(absolute[len(self._prefix) :])
        return None

    def open(self, path: str, *, follow_symlinks: bool = True) -> ConfinedFile:
        """Open ``path`` (repository-relative, forward slashes) for reading, without a race.

        Symlinks inside the root are followed (at most :data:`MAX_SYMLINKS`) as long as every step stays inside
        it; with ``follow_symlinks=False`` any symlink on the way is refused instead. The file itself is opened
        non-blocking and must be a regular file.

        Raises:
            BeeError: ``outside_root`` when the path or a symlink on its way leaves the root or reaches ``.git``,
                ``.bee`` or a hidden directory, or (``follow_symlinks=False``) is or passes through a symlink;
                ``not_found`` when nothing is there; ``invalid_argument`` for an empty path, a directory, a FIFO,
                socket or device, a symlink loop, or a file the host may not read.
        """
        fd, _ = self._walk(path, directory=False, follow=follow_symlinks)
        return self._adopt(fd, path)

    def walk(self, *, max_depth: int, max_entries: int, skip: Collection[str] = ()) -> Iterator[WalkEntry]:
        """Every file, symlink and special file below the root, depth first in name order; no symlink is followed.

        Each directory is opened from its parent's fd with ``O_NOFOLLOW`` and listed through its own fd, so the walk
        never leaves the root, whatever is renamed or swapped meanwhile. Directories named in ``skip`` are not
        entered, nor anything :meth:`open` never serves (``.git``, ``.bee``, hidden directories); none of them is
        reported. The walk is iterative and holds one fd per level.

        Raises:
            BeeError: ``invalid_argument`` for a directory more than ``max_depth`` levels below the root, more than
                ``max_entries`` names listed in all, or a directory that cannot be read; ``conflict`` when an entry
                goes away or stops being a directory while it is walked.
        """
        listed = 0

        def listing(fd: int, where: tuple[str, ...]) -> list[str]:
            nonlocal listed
            names = []
            try:
                with os.scandir(fd) as entries:
                    for entry in entries:
                        listed += 1
                        if listed > max_entries:
                            raise invalid(
                                f"the tree holds more than {max_entries} files and folders; point at a smaller one",
                                limit=max_entries,
                            )
                        names.append(entry.name)
            except OSError as exc:
                raise invalid(f"cannot list '{shown('/'.join(where) or '.')}': {exc.strerror}") from None
            return sorted(names, reverse=True)  # a stack: the next name is at the end

        stack: list[tuple[int, tuple[str, ...], list[str]]] = []
        try:
            # A new open of the root, not a dup: a dup would share its listing position with every other walk.
            top = os.open(".", _DIRECTORY_FLAGS, dir_fd=self._fd)
            stack.append((top, (), []))  # on the stack first, so a failed listing still closes it
            stack[-1] = (top, (), listing(top, ()))
            while stack:
                fd, parts, names = stack[-1]
                if not names:
                    os.close(stack.pop()[0])
                    continue
                where = (*parts, names.pop())
                if where[-1] in FORBIDDEN_NAMES or any(where[: len(h)] == h for h in self._hidden):
                    continue
                path = "/".join(where)
                try:
                    info = os.stat(where[-1], dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    raise _changed(path, "went away") from None
                except OSError as exc:
                    raise invalid(f"cannot look at '{shown(path)}': {exc.strerror}", path=shown(path)) from None
                if stat.S_ISDIR(info.st_mode):
                    if where[-1] in skip:
                        continue
                    if len(where) > max_depth:
                        raise invalid(
                            f"'{shown(path)}' lies more than {max_depth} folders deep; flatten the tree",
                            path=shown(path),
                            limit=max_depth,
                        )
                    try:
                        child = os.open(where[-1], _DIRECTORY_FLAGS, dir_fd=fd)
                    except OSError as exc:
                        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                            raise _changed(path, "stopped being a directory") from None
                        raise invalid(f"cannot open '{shown(path)}': {exc.strerror}", path=shown(path)) from None
                    stack.append((child, where, []))  # on the stack first, so a failed listing still closes it
                    stack[-1] = (child, where, listing(child, where))
                    continue
                kind: Literal["file", "symlink", "other"] = (
                    "file" if stat.S_ISREG(info.st_mode) else "symlink" if stat.S_ISLNK(info.st_mode) else "other"
                )
                yield WalkEntry(path, kind, info)
        finally:
            for fd, _, _ in stack:
                os.close(fd)

    def directory(self, path: str) -> ConfinedRoot:
        """Open the directory ``path`` (relative, forward slashes) as a root of its own, without a race.

        The walk is :meth:`open`'s, so the directory is inside this root by construction; the new root then
        confines every path opened through it to that directory (a symlink in it leading out, even to elsewhere
        in this root, is refused). Directories this root hides stay hidden.

        Raises:
            BeeError: as :meth:`open`, and ``not_found`` when a component is not a directory.
        """
        fd, names = self._walk(path, directory=True)
        inner = ConfinedRoot.__new__(ConfinedRoot)
        inner._adopt_directory(self.path.joinpath(*names), fd)
        inner._hidden = tuple(h[len(names) :] for h in self._hidden if h[: len(names)] == tuple(names))
        return inner

    def _walk(self, path: str, *, directory: bool, follow: bool = True) -> tuple[int, list[str]]:
        """Walk ``path`` from the root's fd; return the fd of what it names and its real components."""
        pending = list(reversed(_parts(path)))  # a stack: the next component is at the end
        walked: list[tuple[str, int]] = []  # directories opened below the root: (name, fd)
        links = 0
        try:
            while pending:
                name = pending.pop()
                if name == "..":  # only a symlink's target brings these
                    if not walked:
                        raise _outside(path, "resolves through a symlink to a place outside the checkout")
                    os.close(walked.pop()[1])
                    continue
                self._check(path, [*(n for n, _ in walked), name], via_link=links > 0)
                parent = walked[-1][1] if walked else self._fd
                final = not pending
                opens_file = final and not directory
                try:
                    fd = os.open(name, _FILE_FLAGS if opens_file else _DIRECTORY_FLAGS, dir_fd=parent)
                except OSError as exc:
                    # O_NOFOLLOW refuses a symlink (ELOOP; ENOTDIR with O_DIRECTORY): resolve it ourselves.
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise self._open_error(path, name, parent, exc) from None
                    links += 1
                    if links > MAX_SYMLINKS:
                        raise invalid(
                            f"{path!r} passes through more than {MAX_SYMLINKS} symlinks (a loop?); "
                            "select the file by its real path",
                            path=path,
                        ) from None
                    instead = self._resolve_link(path, name, parent, exc, final=final, follow=follow, walked=walked)
                    pending.extend(reversed(instead))
                    continue
                if opens_file:
                    return fd, [n for n, _ in walked]
                walked.append((name, fd))
            # Every component was a directory (or the walk ended back in one through a symlink).
            return self._walked_directory(path, walked, directory=directory)
        finally:
            for _, fd in walked:
                os.close(fd)

    def _resolve_link(
        self,
        path: str,
        name: str,
        parent: int,
        refused: OSError,
        *,
        final: bool,
        follow: bool,
        walked: list[tuple[str, int]],
    ) -> list[str]:
        """What :meth:`_walk` walks instead of ``name``, which ``O_NOFOLLOW`` refused to open (``refused``): the
        components of its target, or ``name`` itself again when it is no longer a symlink.

        An absolute target inside the root restarts the walk at the root: the directories in ``walked`` are closed
        and taken off it. A relative one goes on from ``parent``.

        Raises:
            BeeError: as :meth:`open`, for the symlink (``follow=False``), its target, or what is there instead.
        """
        try:
            target = self._readlink(name, parent)
        except OSError as unreadable:
            raise self._open_error(path, name, parent, unreadable) from None
        if target is None:
            if refused.errno == errno.ENOTDIR and not self._is_directory(name, parent):
                raise _not_found(path, f" ({name!r} is not a directory)") from None
            # It stopped being a symlink just now (a directory again, say): look at it again. A race that keeps
            # this up ends at MAX_SYMLINKS, since every pass counts as one.
            return [name]
        if not follow:
            why = "is a symlink" if final else f"passes through the symlink {name!r}"
            raise _outside(path, why) from None
        if not target.startswith("/"):
            return [p for p in target.split("/") if p not in ("", ".")]
        inside = self._relative(target)  # '..' in it is walked like any other, by _walk
        if inside is None:
            raise _outside(path, "resolves through a symlink to a place outside the checkout") from None
        while walked:
            os.close(walked.pop()[1])
        return list(inside.parts)

    def _walked_directory(self, path: str, walked: list[tuple[str, int]], *, directory: bool) -> tuple[int, list[str]]:
        """The end of a walk whose every component was a directory: the fd of the last one (taken off ``walked``,
        so the caller's cleanup leaves it open) and the real components, or the root's own fd duplicated.

        Raises:
            BeeError: ``invalid_argument`` when a file was wanted (``directory=False``).
        """
        if not directory:
            raise _not_a_file(path, "a directory")
        if not walked:
            return os.dup(self._fd), []
        name, fd = walked.pop()  # handed to the caller, so not closed by _walk
        return fd, [*(n for n, _ in walked), name]

    def _check(self, path: str, where: list[str], *, via_link: bool) -> None:
        if where[-1] in FORBIDDEN_NAMES:
            raise _never_served(path, _forbidden_why(where, inside=False, via_link=via_link))
        for hidden in self._hidden:
            if tuple(where[: len(hidden)]) == hidden:
                raise _never_served(path, "lies in Bee's instance state")

    @staticmethod
    def _is_directory(name: str, parent: int) -> bool:
        try:
            return stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
        except OSError:
            return False

    @staticmethod
    def _readlink(name: str, parent: int) -> str | None:
        """The target of the symlink ``name``, or None when it is not (or no longer) a symlink."""
        try:
            return os.readlink(name, dir_fd=parent)
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.ENOENT):
                return None
            raise

    @staticmethod
    def _open_error(path: str, name: str, parent: int, exc: OSError) -> BeeError:
        if exc.errno == errno.ENOENT:
            return _not_found(path)
        if exc.errno == errno.ENXIO:  # a socket (or a device without its driver): say which
            try:
                return _not_a_file(path, _kind(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode))
            except OSError:
                pass
        return invalid(f"cannot open {path!r}: {exc.strerror}; select a file the host can read", path=path)

    @staticmethod
    def _adopt(fd: int, path: str) -> ConfinedFile:
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise _not_a_file(path, _kind(info.st_mode))
        except BaseException:
            os.close(fd)
            raise
        return ConfinedFile(fd, path, info.st_size)
