"""Who wrote an evidence folder: the MAC `bee design capture` puts in ``evidence.json``, from a key of this root.

The key is 32 random bytes Bee creates on the first capture in a root, in ``.bee/design/keys/evidence`` (the
``keys`` directory 0700, the file 0600, owned by the user). It never leaves this machine: no tool serves anything
under ``keys/`` (the design state is opened with it hidden), and ``.bee/design`` is kept out of git. A key that
is not a regular file of the user's own, or that group or others may read or write, is refused — a checkout (or a
zip of one) cannot bring a key of its author's with it.

The MAC is HMAC-SHA256 over the canonical JSON of ``evidence.json`` without its ``mac`` field (keys sorted, no
spaces, UTF-8), so it covers the browser, the settings and every screenshot's recorded sha256 and size — and,
through those, the images. It is written as ``hmac-sha256:<key id>:<hex>``; the key id (a MAC of a fixed text)
tells evidence sealed elsewhere from evidence changed here, and reveals nothing of the key. Evidence without a
valid MAC from this root's key is not Bee's as far as this root can tell: written by hand, copied from another
machine or checkout, or changed after capture.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import os
import secrets
import stat
from typing import Any, Final

from bee_contracts import BeeError, ErrorCode
from bee_design import layout
from bee_design.layout import DesignFiles

#: The field of ``evidence.json`` that holds the MAC.
MAC_FIELD: Final = "mac"
_ALGORITHM: Final = "hmac-sha256"
_KEY_BYTES: Final = 32
# Domain separation: this key's MACs mean "Bee's evidence.json, format 1" and nothing else.
_CONTEXT: Final = b"bee design evidence.json v1\n"
_KEY_ID_TEXT: Final = b"bee design evidence key id"
_KEYS: Final = f"{layout.STATE_DIR}/{layout.KEYS_DIR}"
_KEY_PATH: Final = f"{_KEYS}/{layout.EVIDENCE_KEY}"


def _refused(why: str) -> BeeError:
    return BeeError(
        ErrorCode.FORBIDDEN,
        f"the evidence key {_KEY_PATH} {why}, so Bee will not use it (a checkout must not bring its own key); "
        "remove it and capture again (evidence sealed with it then reads unverified)",
        details={"key": _KEY_PATH},
    )


def read_key(files: DesignFiles) -> bytes | None:
    """This root's evidence key, or None when there is none yet; never creates one.

    Raises:
        BeeError: ``forbidden`` for a key that is a symlink or not a regular file, is not owned by the user, may
            be read or written by group or others, or is damaged; ``outside_root`` when ``.bee/design/keys`` is
            not a real directory inside the root.
    """
    folder = files.directory(_KEYS)  # refuses a .bee, design or keys that is a symlink
    try:
        fd = os.open(
            folder / layout.EVIDENCE_KEY, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
        )
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refused("is a symlink") from None
        raise _refused(f"cannot be read ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refused("is not a regular file")
        if info.st_uid != os.geteuid():
            raise _refused(f"is owned by uid {info.st_uid}, not by you (uid {os.geteuid()})")
        if info.st_mode & 0o077:
            raise _refused(f"may be read or written by group or others (mode {stat.S_IMODE(info.st_mode):04o})")
        text = file.read(4 * _KEY_BYTES)
    try:
        key = bytes.fromhex(text.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) != _KEY_BYTES:
        raise _refused(f"is damaged (expected {2 * _KEY_BYTES} hex digits)")
    return key


def ensure_key(files: DesignFiles) -> bytes:
    """This root's evidence key, created (0600, in a 0700 ``keys`` directory) when there is none.

    The key is written to a private temporary file and linked into place, so a concurrent capture never reads a
    half-written key and two captures starting together agree on one.

    Raises:
        BeeError: as :func:`read_key` for a key that is there but refused.
    """
    key = read_key(files)
    if key is not None:
        return key
    files.state_dir(create=True)  # with its .gitignore
    folder = files.directory(_KEYS, create=True)
    with contextlib.suppress(PermissionError):  # a directory someone else owns: the key's own checks decide
        folder.chmod(0o700)
    temporary = folder / f".{layout.EVIDENCE_KEY}.{secrets.token_hex(8)}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(secrets.token_bytes(_KEY_BYTES).hex() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):  # another capture made one first: theirs is the key
            os.link(temporary, folder / layout.EVIDENCE_KEY)
    finally:
        temporary.unlink()
    made = read_key(files)
    if made is None:  # removed between the link and the read: someone is racing us on purpose
        raise _refused("disappeared while it was being created")
    return made


def _key_id(key: bytes) -> str:
    return hmac.new(key, _KEY_ID_TEXT, hashlib.sha256).hexdigest()[:16]


def _canonical(record: dict[str, Any]) -> bytes:
    body = {name: value for name, value in record.items() if name != MAC_FIELD}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def sign(record: dict[str, Any], key: bytes) -> str:
    """The MAC of an ``evidence.json`` record (its ``mac`` field, if any, left out), as ``evidence.json`` holds it."""
    digest = hmac.new(key, _CONTEXT + _canonical(record), hashlib.sha256).hexdigest()
    return f"{_ALGORITHM}:{_key_id(key)}:{digest}"


def unverified(files: DesignFiles, record: dict[str, Any]) -> str | None:
    """Why ``record`` (a parsed, schema-checked ``evidence.json``) is not vouched for by this root's key; None
    when its MAC is valid. The reason reads after the file's name and says what to do."""
    again = "capture again here with `bee design capture`"
    given = record.get(MAC_FIELD)
    if not isinstance(given, str):
        return (
            f"carries no MAC, so nothing vouches that `bee design capture` wrote it in this root (it may have been "
            f"written by hand, or by a Bee before MACs); {again}"
        )
    try:
        key = read_key(files)
    except BeeError as exc:
        return f"cannot be verified: {exc.message}"
    if key is None:
        return (
            f"cannot be verified: this root has no evidence key ({_KEY_PATH}), so nothing was captured here; "
            f"evidence captured on another machine or in another checkout reads unverified — {again}"
        )
    expected = sign(record, key)
    if hmac.compare_digest(given, expected):
        return None
    if given.split(":")[1:2] != [_key_id(key)]:
        return (
            "was sealed with another evidence key than this root's: it was captured on another machine or in "
            f"another checkout (or this root's key was replaced since); {again}"
        )
    return f"does not match its MAC: it was changed after `bee design capture` wrote it; {again}"
