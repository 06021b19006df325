"""The tracker home: a private directory holding the embedded database and the signing key of local tokens.

The home is created with mode 0700 and a ``.gitignore`` of ``*`` (it sits inside a checkout's ``.bee`` and must
never be committed); the key file is created with mode 0600. Only ``bee tracker init`` and ``bee tracker serve``
create them; ``bee tracker token`` only reads the key, so running it in the wrong directory can never mint tokens
from a key no server uses.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from bee_contracts import BeeError, ErrorCode
from bee_contracts.gitindex import UnreadableIndex, tracked
from bee_contracts.layout import TRACKER_KEY_FILE

KEY_FILE = TRACKER_KEY_FILE
#: The embedded SQLite database's file in the home.
STORE_FILE = "tracker.db"
_KEY_BYTES = 32
#: More than a key file ever holds (64 hex digits and a newline).
_MAX_KEY_FILE_BYTES = 4096


def init_home(home: Path) -> None:
    """Create ``home`` (0700) with its ``.gitignore`` if missing; tighten an existing home to 0700. Idempotent.

    Raises:
        BeeError: ``forbidden`` when git tracks the home's database (it came with the checkout).
    """
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(PermissionError):  # a home someone else owns is theirs to protect
        home.chmod(0o700)
    with contextlib.suppress(FileExistsError):
        fd = os.open(home / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write("*\n")
    store = home / STORE_FILE
    if os.path.lexists(store) and _tracked(store):
        raise BeeError(
            ErrorCode.FORBIDDEN,
            f"the tracker database {store} is tracked by git: it came with the checkout, and holds someone else's "
            f"tasks, claims and sign-ins. Bee does not serve it; serve from a home of your own (--home DIR or "
            "$BEE_TRACKER_HOME)",
            details={"home": str(home), "file": str(store)},
        )


def ensure_key(home: Path) -> tuple[bytes, bool]:
    """The signing key in ``home``, created (with the home) when missing: (key, whether it was created now).

    The key is written to a private temporary file and linked into place, so a concurrent reader never sees a
    half-written key and two servers starting together agree on one key.
    """
    init_home(home)
    path = home / KEY_FILE
    if os.path.lexists(path):  # a dangling symlink too: read_key refuses it rather than writing through it
        return read_key(home), False
    temporary = home / f".{KEY_FILE}.{secrets.token_hex(8)}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(secrets.token_bytes(_KEY_BYTES).hex() + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    try:
        os.link(temporary, path)
        created = True
    except FileExistsError:  # another process created it first: use theirs
        created = False
    finally:
        temporary.unlink()
    return read_key(home), created


def read_key(home: Path) -> bytes:
    """The signing key in ``home``; never creates one.

    Raises:
        BeeError: ``not_initialized`` naming the home looked in and the command that creates the key;
            ``forbidden`` when the key is not one Bee made on this machine (a symlink or special file, owned by
            someone else, readable by others, or tracked by git); ``invalid_argument`` when the key file is damaged.
    """
    path = home / KEY_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise BeeError(
            ErrorCode.NOT_INITIALIZED,
            f"no signing key in the tracker home {home} (looked for {path}); create one with "
            f"`bee tracker init --home {home}` (or start `bee tracker serve` there), or point --home or "
            "$BEE_TRACKER_HOME at the home your tracker serves from",
            details={"home": str(home)},
        ) from None
    except OSError as exc:
        if os.path.islink(path):
            raise _not_bees(home, path, "it is a symlink") from None
        raise BeeError(ErrorCode.INVALID_ARGUMENT, f"cannot read the signing key {path}: {exc}") from None
    try:
        info = os.fstat(fd)
        problem = _foreign(info)
        if problem:
            raise _not_bees(home, path, problem)
        raw = os.read(fd, _MAX_KEY_FILE_BYTES)
    except OSError as exc:
        raise BeeError(ErrorCode.INVALID_ARGUMENT, f"cannot read the signing key {path}: {exc}") from None
    finally:
        os.close(fd)
    if _tracked(path):
        raise _not_bees(home, path, "git tracks it, so it came with the checkout (and whoever committed it knows it)")
    try:
        key = bytes.fromhex(raw.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) < _KEY_BYTES:
        raise BeeError(
            ErrorCode.INVALID_ARGUMENT,
            f"the signing key {path} is damaged (expected {_KEY_BYTES * 2} hex digits); remove it and run "
            f"`bee tracker init --home {home}` (tokens minted from the old key stop working)",
        )
    return key


def _foreign(info: os.stat_result) -> str:
    """Why the open key file is not one Bee made here, or ``""`` when it may be."""
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    if info.st_uid != os.geteuid():
        return f"it is owned by uid {info.st_uid}, not by you (uid {os.geteuid()})"
    if info.st_mode & 0o077:
        return f"others may read it (mode {stat.S_IMODE(info.st_mode):04o}, where Bee makes its keys 0600)"
    return ""


def _tracked(path: Path) -> bool:
    """Whether git tracks ``path``; an index that cannot be read counts as tracking it (Bee cannot tell)."""
    try:
        return tracked(path)
    except UnreadableIndex:
        return True


def _not_bees(home: Path, path: Path, problem: str) -> BeeError:
    return BeeError(
        ErrorCode.FORBIDDEN,
        f"the signing key {path} was not made by Bee on this machine: {problem}. Bee never signs or accepts tokens "
        f"with a key that may have come with a checkout; remove it and run `bee tracker init --home {home}` for a "
        "new one (tokens minted from the old key stop working), or serve from a home of your own (--home DIR)",
        details={"home": str(home), "file": str(path)},
    )
