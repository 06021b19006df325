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
from pathlib import Path

from bee_contracts import BeeError, ErrorCode

KEY_FILE = "signing-key"
_KEY_BYTES = 32


def init_home(home: Path) -> None:
    """Create ``home`` (0700) with its ``.gitignore`` if missing; tighten an existing home to 0700. Idempotent."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(PermissionError):  # a home someone else owns is theirs to protect
        home.chmod(0o700)
    with contextlib.suppress(FileExistsError):
        fd = os.open(home / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write("*\n")


def ensure_key(home: Path) -> tuple[bytes, bool]:
    """The signing key in ``home``, created (with the home) when missing: (key, whether it was created now).

    The key is written to a private temporary file and linked into place, so a concurrent reader never sees a
    half-written key and two servers starting together agree on one key.
    """
    init_home(home)
    path = home / KEY_FILE
    if path.exists():
        with contextlib.suppress(PermissionError):
            path.chmod(0o600)
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
            ``invalid_argument`` when the key file is damaged.
    """
    path = home / KEY_FILE
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        raise BeeError(
            ErrorCode.NOT_INITIALIZED,
            f"no signing key in the tracker home {home} (looked for {path}); create one with "
            f"`bee tracker init --home {home}` (or start `bee tracker serve` there), or point --home or "
            "$BEE_TRACKER_HOME at the home your tracker serves from",
            details={"home": str(home)},
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BeeError(ErrorCode.INVALID_ARGUMENT, f"cannot read the signing key {path}: {exc}") from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) < _KEY_BYTES:
        raise BeeError(
            ErrorCode.INVALID_ARGUMENT,
            f"the signing key {path} is damaged (expected {_KEY_BYTES * 2} hex digits); remove it and run "
            f"`bee tracker init --home {home}` (tokens minted from the old key stop working)",
        )
    return key
