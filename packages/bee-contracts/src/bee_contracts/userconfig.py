"""Per-user settings of an instance: the ones that choose whom Bee talks to, kept out of every checkout.

A setting that makes Bee contact a network address, send a token or read a file outside the instance (a skill
provider, the collaboration binding, anything later of that kind) must come from the user on this machine, never
from bytes that arrived with a checkout: a cloned repository can carry any file in its ``.bee``. So these settings
live in the user's configuration directory, one folder per instance::

    $XDG_CONFIG_HOME/bee/              (~/.config/bee when XDG_CONFIG_HOME is unset or not absolute)
      instances/<key>/                 <key>: the first 32 hex digits of sha256 over the instance root's real path
        instance.json                  {"instance": "/real/path/of/.bee", "created": …}: whose folder this is
        bridge.json, collab.json, …    the settings themselves

The record in ``instance.json`` lets a person (and ``bee skill bridge list``) see which checkout a folder serves,
and makes a folder that does not belong to the instance (copied by hand, or a digest collision) an error rather
than someone else's settings. A checkout that moves gets a new key and starts without settings.

Bee creates every folder 0700 and every file 0600, and on every read refuses a folder or file that is not owned by
the user running Bee or that group or others may write: another local user could otherwise choose for them.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from bee_contracts.errors import BeeError, ErrorCode
from bee_contracts.files import write_atomic

#: The XDG base-directory variable the configuration directory is found from.
ENV_CONFIG_HOME: Final = "XDG_CONFIG_HOME"
APP_DIRNAME: Final = "bee"
INSTANCES_DIRNAME: Final = "instances"
#: The record, in each instance's folder, of the instance it belongs to.
OWNER_FILE: Final = "instance.json"
#: Hex digits of the instance key (128 bits: collisions are detected through the record, never expected).
KEY_DIGITS: Final = 32
#: A settings file larger than this is not one Bee wrote.
MAX_SETTINGS_BYTES: Final = 1024 * 1024


def config_home() -> Path:
    """Bee's folder in the user's configuration directory: ``$XDG_CONFIG_HOME/bee``, else ``~/.config/bee``.

    A relative ``XDG_CONFIG_HOME`` is ignored, as the XDG base-directory specification says.
    """
    chosen = os.environ.get(ENV_CONFIG_HOME, "")
    base = Path(chosen) if chosen and os.path.isabs(chosen) else Path.home() / ".config"
    return base / APP_DIRNAME


def instance_key(root: Path) -> str:
    """The key of the instance at ``root``: a digest of its real path (symlinks resolved), the same from anywhere."""
    return hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:KEY_DIGITS]


def _refused(path: Path, problem: str, fix: str) -> BeeError:
    return BeeError(
        ErrorCode.FORBIDDEN,
        f"Bee refuses its per-user settings {path}: {problem}; {fix}",
        details={"settings": str(path)},
    )


def _check_private(path: Path, info: os.stat_result, *, folder: bool, secret: bool = False) -> None:
    """Refuse ``path`` unless it is a folder (or regular file) of the current user that only they may write (and,
    for a ``secret``, only they may read)."""
    kind = "folder" if folder else "file"
    if not (stat.S_ISDIR(info.st_mode) if folder else stat.S_ISREG(info.st_mode)):
        raise _refused(path, f"it is not a {kind}", "move it away; Bee makes a new one when a setting is saved")
    if info.st_uid != os.geteuid():
        raise _refused(
            path,
            f"it is owned by uid {info.st_uid}, not by you (uid {os.geteuid()}), so someone else chooses for you",
            "move it away (Bee makes a new one of yours when a setting is saved), or chown it to yourself after "
            "reading it",
        )
    if secret and info.st_mode & 0o077:
        raise _refused(
            path,
            f"it is a secret, and group or others may read or write it (mode {stat.S_IMODE(info.st_mode):04o})",
            f"chmod 600 {path}",
        )
    if info.st_mode & 0o022:
        mode = stat.S_IMODE(info.st_mode)
        raise _refused(
            path,
            f"group or others may write it (mode {mode:04o})",
            f"chmod {'700' if folder else '600'} {path}",
        )


class UserSettings:
    """The per-user settings folder of one instance; nothing is created until a setting is written."""

    def __init__(self, instance_root: Path) -> None:
        #: The instance root as the folder records it: its real path.
        self.instance = Path(os.path.realpath(instance_root))
        self.home = config_home()
        self.folder = self.home / INSTANCES_DIRNAME / instance_key(self.instance)

    def path(self, name: str) -> Path:
        """Where setting file ``name`` lives (it may not exist)."""
        return self.folder / name

    def _chain(self) -> tuple[Path, ...]:
        return (self.home, self.home / INSTANCES_DIRNAME, self.folder)

    def _checked_folders(self) -> bool:
        """Whether the folder exists, after refusing any folder on the way that is not private to this user."""
        for folder in self._chain():
            try:
                info = folder.stat()
            except FileNotFoundError:
                return False
            except OSError as exc:
                raise _refused(folder, f"it cannot be read ({exc.strerror or exc})", "fix its permissions") from None
            _check_private(folder, info, folder=True)
        return True

    def _read_file(self, path: Path, *, secret: bool = False) -> bytes | None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as exc:
            problem = "it is a symlink" if os.path.islink(path) else f"it cannot be read ({exc.strerror or exc})"
            raise _refused(path, problem, "move it away; Bee writes its settings as plain files") from None
        try:
            _check_private(path, os.fstat(fd), folder=False, secret=secret)
            data = os.read(fd, MAX_SETTINGS_BYTES + 1)
        finally:
            os.close(fd)
        if len(data) > MAX_SETTINGS_BYTES:
            raise _refused(
                path, f"it is larger than any settings file Bee writes ({MAX_SETTINGS_BYTES} bytes)", "move it away"
            )
        return data

    def _check_owner(self) -> None:
        """Refuse a folder whose record names another instance, or that has no record."""
        record = self.path(OWNER_FILE)
        raw = self._read_file(record)
        try:
            owner = json.loads(raw)["instance"] if raw is not None else None
        except (ValueError, TypeError, KeyError):
            owner = None
        if owner != str(self.instance):
            problem = (
                f"it records no instance ({record} is missing or damaged)"
                if owner is None
                else f"it belongs to the instance {owner}, not to {self.instance}"
            )
            raise _refused(self.folder, problem, "move the folder away; Bee starts a new one for this instance")

    def read(self, name: str, *, secret: bool = False) -> bytes | None:
        """The bytes of setting ``name``, or None when it was never written; a ``secret`` must also be unreadable
        by group and others.

        Raises:
            BeeError: ``forbidden`` naming the file or folder and the fix, when one is not owned by this user, is
                writable by group or others, is a symlink or special file, is too large, or when the folder belongs
                to another instance.
        """
        if not self._checked_folders():
            return None
        data = self._read_file(self.path(name), secret=secret)
        if data is not None:
            self._check_owner()
        return data

    def write(self, name: str, data: bytes) -> Path:
        """Write setting ``name`` atomically (mode 0600), creating the folders (0700) and the record; its path.

        Raises:
            BeeError: ``forbidden`` as :meth:`read` says, for a folder on the way that is not private to this user.
            OSError: the folder cannot be created or written.
        """
        self._prepare()
        target = self.path(name)
        write_atomic(target, data, mode=0o600)
        return target

    def create(self, name: str, data: bytes, *, secret: bool = False) -> bytes:
        """Setting ``name``, written with ``data`` when it does not exist yet; what it holds afterwards.

        The new file is written aside and linked into place, so of two processes creating it at once both get the
        one that landed first (as a key must be: two captures starting together seal with the same one).

        Raises:
            BeeError: ``forbidden`` as :meth:`read` says.
            OSError: the folder cannot be created or written.
        """
        found = self.read(name, secret=secret)
        if found is not None:
            return found
        self._prepare()
        aside = self.path(f".{name}.{os.getpid()}.{os.urandom(4).hex()}")
        write_atomic(aside, data, mode=0o600)
        try:
            os.link(aside, self.path(name))
        except FileExistsError:
            pass  # another process made it first: theirs is the setting
        finally:
            aside.unlink()
        made = self.read(name, secret=secret)
        if made is None:  # removed between the link and the read: someone is racing us on purpose
            raise _refused(self.path(name), "it disappeared while it was being created", "try again")
        return made

    def _prepare(self) -> None:
        """The folders (0700) and the record, made when missing and checked when there."""
        self.home.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        for folder in self._chain():
            folder.mkdir(mode=0o700, exist_ok=True)
        self._checked_folders()
        record = self.path(OWNER_FILE)
        if self._read_file(record) is None:
            stamp = {"instance": str(self.instance), "created": datetime.now(UTC).isoformat(timespec="seconds")}
            write_atomic(record, (json.dumps(stamp, indent=2) + "\n").encode("utf-8"), mode=0o600)
        self._check_owner()

    def remove(self, name: str) -> bool:
        """Remove setting ``name``; whether it was there.

        Raises:
            BeeError: ``forbidden`` as :meth:`read` says.
        """
        if not self._checked_folders():
            return False
        try:
            self.path(name).unlink()
        except FileNotFoundError:
            return False
        return True
