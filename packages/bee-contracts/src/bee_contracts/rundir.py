"""The user's private directory for Bee's sockets, and the installation each folder in it belongs to.

Stdlib only and cheap (``os``, ``stat`` and ``sys``, which every Python has loaded by the time it runs a script): the
warm front ends import this before anything else — `bee mcp serve`'s (:mod:`bee_contracts.warm`) and `bee bd`'s
(:mod:`bee_cli.answering`), whose whole cost is the wait of an editor or of an agent's shell.
"""

from __future__ import annotations

import os
import stat
import sys

# Annotations only: the typing module is a megabyte the front end need not load (mypy reads this name as True).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


#: ``0`` serves every command in its own process (cold): no warm host for `bee mcp serve`, no answerer for `bee bd`.
ENV_WARM = "BEE_WARM"


class WarmUnavailable(Exception):
    """No warm process can be used; ``str()`` says why, in one line (the front end serves cold)."""


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` in hex."""
    try:
        # CPython's builtin sha256: hashlib would load OpenSSL, megabytes of memory for one digest.
        from _sha256 import sha256  # type: ignore[import-not-found]  # a private module typeshed does not describe
    except ImportError:  # pragma: no cover - a Python built without it
        from hashlib import sha256
    return str(sha256(data).hexdigest())


def private_problem(path: str, uid: int, *, create: bool) -> str | None:
    """None when ``path`` is a real directory owned by ``uid`` with no group or other bits; else why not."""
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            return f"cannot create {path}: {exc.strerror or exc}"
    try:
        info = os.lstat(path)
    except OSError as exc:
        return f"cannot use {path}: {exc.strerror or exc}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a directory (a symlink or a file is never followed)"
    if info.st_uid != uid:
        return f"{path} belongs to uid {info.st_uid}, not to this user (uid {uid})"
    if info.st_mode & 0o077:
        return f"{path} is open to other users (mode {stat.S_IMODE(info.st_mode):04o}; it must be 0700)"
    return None


def runtime_dir(environ: Mapping[str, str], uid: int | None = None) -> str:
    """The user's private directory for Bee's sockets, created 0700 when missing.

    ``$XDG_RUNTIME_DIR/bee`` when ``$XDG_RUNTIME_DIR`` is an absolute directory of the user's with mode 0700, else
    ``/tmp/bee-<uid>``.

    Raises:
        WarmUnavailable: the directory exists but is not the user's, is open to others, or cannot be created.
    """
    uid = os.getuid() if uid is None else uid
    base = environ.get("XDG_RUNTIME_DIR", "")
    if base and os.path.isabs(base) and private_problem(base, uid, create=False) is None:
        path = os.path.join(base, "bee")
    else:
        path = f"/tmp/bee-{uid}"  # noqa: S108 -- created 0700 and checked: owner, no group/other bits, no symlink
    problem = private_problem(path, uid, create=True)
    if problem is not None:
        raise WarmUnavailable(problem)
    return path


def installation_key() -> str:
    """12 hex digits naming this installation of Bee (its interpreter and environment)."""
    where = f"{os.path.realpath(sys.prefix)}\n{os.path.realpath(sys.executable)}"
    return sha256_hex(where.encode("utf-8", "surrogateescape"))[:12]


def seconds_setting(environ: Mapping[str, str], name: str, default: float) -> float:
    """``$name`` when it is a positive, finite number of seconds, else ``default`` (the warm processes' timings)."""
    try:
        value = float(environ.get(name, "") or default)
    except ValueError:
        return default
    return value if 0 < value < float("inf") else default


def peer_uid(sock: object) -> int:
    """The uid of the process at the other end of Unix socket ``sock`` (``socket.socket`` or ``_socket.socket``),
    as the kernel saw it (SO_PEERCRED: pid, uid and gid, three native ints)."""
    import _socket

    credentials = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)  # type: ignore[attr-defined]
    return int.from_bytes(credentials[4:8], sys.byteorder, signed=True)
