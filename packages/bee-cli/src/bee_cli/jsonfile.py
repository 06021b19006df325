"""Editors' configuration files: found without leaving their folder, edited by splicing, and written back only
over the bytes that were read.

Where: an editor's file lies in the project (or, for a per-user editor, in the home folder), and it stays there. A
symlink on its way — the file itself, or a folder — is followed only when where it leads is inside that folder
(and not in ``.git`` or ``.bee``); a dangling one too, but no folder is ever created for a symlink's target. Folders
Bee does create (``.cursor/``) are made one at a time from their parent's open descriptor, never through a symlink.

What: the file must be valid JSON (JSONC for an editor that reads comments) holding an object, with no key
repeated in an object, a regular file of at most :data:`MAX_BYTES`, and writable — a read-only file is refused, not
replaced. :mod:`bee_cli.jsonedit` makes the change, so every byte the change does not touch stays as it was.

When: the new bytes replace the old only while the file still holds what was read
(:func:`bee_contracts.files.write_if_unchanged`); when another program saved it in between, the change is made
again on what it saved, up to :data:`ATTEMPTS` times, and then refused. The file keeps its permission bits (and,
when Bee runs as root, its owner).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bee_cli.jsonedit import EditFailed, JsonText
from bee_cli.jsontree import JsonSyntaxError
from bee_contracts import BeeError, ErrorCode
from bee_contracts.files import KeptAside, write_if_unchanged
from bee_contracts.jsonvalues import Lexeme
from bee_contracts.layout import INSTANCE_DIRNAME

#: The largest configuration file Bee reads (editors' MCP files are a few KiB; a mebibyte parses in about a second).
MAX_BYTES = 1024 * 1024
#: How many times a change is made again on a file another program keeps saving, before it is refused.
ATTEMPTS = 8
#: Folders a symlink may not lead into: a repository's internals and Bee's own state.
NEVER_WRITTEN = frozenset({".git", INSTANCE_DIRNAME})

_BOM = b"\xef\xbb\xbf"
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class ConfigFileError(BeeError):
    """A configuration file Bee will not change; the message names the file, the place and what to do."""

    def __init__(
        self,
        path: Path,
        problem: str,
        line: int | None = None,
        column: int | None = None,
        *,
        code: ErrorCode = ErrorCode.INVALID_ARGUMENT,
    ) -> None:
        where = f" at line {line}, column {column}" if line is not None else ""
        details: dict[str, Any] = {"path": str(path)}
        if line is not None:
            details |= {"line": line, "column": column}
        super().__init__(code, f"{path}{where}: {problem}", details=details)
        self.path = path
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Place:
    """Where an editor's file is: the folder it must stay inside and its path below that folder."""

    #: The project, or the home folder for a per-user editor.
    root: Path
    relative: str
    #: How messages name the root ("the project", "your home folder").
    scope: str

    @property
    def path(self) -> Path:
        return self.root / self.relative


#: Given the document (None: there is no file), make the change in it and return it, or None to write nothing.
Edit = Callable[[JsonText | None], JsonText | None]


def json_type(value: Any) -> str:
    """The JSON name of ``value``'s type, for messages (numbers are spellings: :class:`str` subclasses)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, Lexeme):
        return "number"
    names: dict[type, str] = {dict: "object", list: "array", str: "string"}
    return names.get(type(value), type(value).__name__)


def rewrite(place: Place, edit: Edit, *, jsonc: bool, secret: bool = False) -> bool:
    """Make ``edit``'s change to the file at ``place`` and write it, if it changes anything; whether it was written.

    A new file gets permission bits 0644; an existing one keeps its own. With ``secret`` (it holds a credential)
    the file is made readable by its owner only.

    Raises:
        ConfigFileError: the file is not valid JSON (JSONC with ``jsonc``) holding an object, repeats a key, is not
            a regular file, is too large, is read-only, lies (through a symlink) outside ``place.root``, or kept
            changing while Bee wrote it; ``edit``'s own errors pass through.
        OSError: the file or a folder cannot be written; the file is then unchanged.
    """
    for _ in range(ATTEMPTS):
        target = _Target.locate(place)
        folder = target.find_folder()
        try:
            found = None if folder is None else target.read(folder)
            document = edit(None if found is None else _document(place.path, found.raw, jsonc))
            if document is None or not document.changed:
                return False
            data = _encoded(place.path, document, bom=found is not None and found.raw.startswith(_BOM))
            if folder is None:
                folder = target.make_folder()
            if _publish(place, target, folder, found, data, secret=secret):
                return True
        finally:
            if folder is not None:
                os.close(folder)
    raise ConfigFileError(
        place.path,
        f"another program kept saving it while Bee was changing it ({ATTEMPTS} tries); nothing was written: "
        "run the command again once it is quiet",
        code=ErrorCode.CONFLICT,
    )


def _publish(place: Place, target: _Target, folder: int, found: _Found | None, data: bytes, *, secret: bool) -> bool:
    """Write ``data`` over what was ``found`` (nothing: a new file); False when the file changed since."""
    mode, owner = 0o644, None
    if found is not None:
        target.check_writable(folder, found.info)
        mode = stat.S_IMODE(found.info.st_mode)
        if os.geteuid() == 0:  # root editing someone's file: it stays theirs
            owner = (found.info.st_uid, found.info.st_gid)
    if secret:
        mode &= ~0o077
    try:
        expected = None if found is None else found.raw
        return write_if_unchanged(folder, target.name, data, expected=expected, mode=mode, owner=owner)
    except KeptAside as aside:
        raise ConfigFileError(
            place.path,
            "another program saved it twice in the instant Bee was replacing it, so Bee left its change out: the "
            f"file holds one of that program's versions and the other is kept beside it as {aside.name}; compare "
            "the two, then run the command again",
            code=ErrorCode.CONFLICT,
        ) from None


def _document(path: Path, raw: bytes, jsonc: bool) -> JsonText:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigFileError(path, f"not UTF-8 (byte {exc.start}); Bee does not overwrite it") from None
    try:
        document = JsonText(text, jsonc=jsonc)
    except JsonSyntaxError as exc:
        kind = "JSON with comments" if jsonc else "JSON"
        raise ConfigFileError(
            path, f"not valid {kind} ({exc.problem}); fix it, Bee does not overwrite it", exc.line, exc.column
        ) from None
    top = document.get(())
    if not isinstance(top, dict):
        raise ConfigFileError(path, f"the top level is a JSON {json_type(top)}, not an object; fix it")
    return document


def _encoded(path: Path, document: JsonText, *, bom: bool) -> bytes:
    try:
        text = document.result()
    except EditFailed as exc:
        raise ConfigFileError(
            path,
            f"Bee could not make this change faithfully ({exc}), so the file was left as it is; this is a defect in "
            "Bee: please report it",
            code=ErrorCode.INTERNAL,
        ) from None
    return (_BOM if bom else b"") + text.encode("utf-8")


@dataclass(frozen=True)
class _Found:
    raw: bytes
    info: os.stat_result


@dataclass(frozen=True)
class _Target:
    """Where the file really is: the folders from the root to it, and its name there."""

    place: Place
    root: Path
    folders: tuple[str, ...]
    name: str
    #: Whether a symlink took the path elsewhere (then no folder is created for it).
    linked: bool

    @classmethod
    def locate(cls, place: Place) -> _Target:
        """Follow the symlinks on the way to the file, which must stay inside ``place.root``.

        Raises:
            ConfigFileError: they lead out of the root, into ``.git`` or ``.bee``, or to the root itself.
        """
        root = place.root.resolve()
        literal = root / place.relative
        real = Path(os.path.realpath(literal))  # dangling links are followed as far as they go
        if not real.is_relative_to(root):
            raise ConfigFileError(
                place.path,
                f"leads through a symlink to {real}, outside {place.scope} ({root}); Bee writes only inside it: "
                "remove the link, or make it point inside",
                code=ErrorCode.OUTSIDE_ROOT,
            )
        parts = real.relative_to(root).parts
        forbidden = next((part for part in parts if part in NEVER_WRITTEN), None)
        if forbidden is not None or not parts:
            into = f"into {forbidden}" if forbidden else f"to {place.scope} itself"
            raise ConfigFileError(
                place.path,
                f"leads through a symlink {into} ({real}); Bee does not write there: remove the link",
                code=ErrorCode.OUTSIDE_ROOT,
            )
        return cls(place, root, parts[:-1], parts[-1], real != literal)

    def _shown(self, count: int) -> str:
        return str(self.root.joinpath(*self.folders[:count]))

    def find_folder(self) -> int | None:
        """The open folder the file is in, walked from the root with no symlink followed; None when a folder on the
        way does not exist.

        Raises:
            ConfigFileError: as :meth:`make_folder`.
            OSError: a folder cannot be opened.
        """
        return self._walk(create=False)

    def make_folder(self) -> int:
        """The open folder the file is in, creating the folders on the way that do not exist.

        Raises:
            ConfigFileError: a folder is missing for a symlink's target, is not a folder, or turned into a symlink
                since it was looked at.
            OSError: a folder cannot be opened or created.
        """
        fd = self._walk(create=True)
        assert fd is not None
        return fd

    def _walk(self, *, create: bool) -> int | None:
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for count, part in enumerate(self.folders, 1):
                try:
                    child = os.open(part, _FOLDER_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        os.close(fd)
                        return None
                    if self.linked:
                        raise ConfigFileError(
                            self.place.path,
                            f"is a symlink into a folder that does not exist ({self._shown(count)}); Bee creates "
                            "no folders for a symlink: create it, or remove the link",
                        ) from None
                    with contextlib.suppress(FileExistsError):  # made by someone else just now: looked at next
                        os.mkdir(part, 0o755, dir_fd=fd)
                    child = self._open_again(fd, part, count)
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise
                    child = self._open_again(fd, part, count)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _open_again(self, parent: int, part: str, count: int) -> int:
        try:
            return os.open(part, _FOLDER_FLAGS, dir_fd=parent)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            kind = stat.S_IFMT(os.stat(part, dir_fd=parent, follow_symlinks=False).st_mode)
            problem = (
                "turned into a symlink while Bee was looking at it: run the command again"
                if kind == stat.S_IFLNK
                else "is not a folder: move it away"
            )
            raise ConfigFileError(self.place.path, f"{self._shown(count)} {problem}") from None

    def read(self, folder: int) -> _Found | None:
        """The file's bytes and status, or None when there is no file.

        Raises:
            ConfigFileError: it is not a regular file (a symlink here is a loop, or changed since it was followed),
                is over :data:`MAX_BYTES`, or cannot be read.
        """
        try:
            fd = os.open(self.name, _FILE_FLAGS, dir_fd=folder)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ConfigFileError(
                    self.place.path,
                    "is a symlink Bee cannot follow (a loop, or it changed while Bee looked at it); fix the link",
                ) from None
            raise ConfigFileError(self.place.path, f"unreadable: {exc.strerror}") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise ConfigFileError(self.place.path, "is not a regular file; Bee only edits files")
            with os.fdopen(os.dup(fd), "rb") as stream:
                raw = stream.read(MAX_BYTES + 1)
        finally:
            os.close(fd)
        if len(raw) > MAX_BYTES:
            raise ConfigFileError(
                self.place.path,
                f"is over {MAX_BYTES // (1024 * 1024)} MiB, far more than an MCP configuration; check it is the "
                "right file",
            )
        return _Found(raw, info)

    def check_writable(self, folder: int, info: os.stat_result) -> None:
        """Refuse a file protected from writing (no owner write bit, or not writable by this user).

        Raises:
            ConfigFileError: it is.
        """
        mode = stat.S_IMODE(info.st_mode)
        if mode & stat.S_IWUSR and (os.geteuid() == 0 or os.access(self.name, os.W_OK, dir_fd=folder)):
            return
        raise ConfigFileError(
            self.place.path,
            f"is read-only (mode {mode:04o}); Bee does not replace a file that is protected from writing: make it "
            "writable (chmod u+w) and run the command again, or make the change by hand",
            code=ErrorCode.FORBIDDEN,
        )
