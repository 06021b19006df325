"""The one path-confinement helper: every repository-relative path any tool touches goes through here."""

from __future__ import annotations

import os
from pathlib import Path

from bee_contracts import BeeError, ErrorCode

#: Path components that are never served: a repository's own internals.
FORBIDDEN_PARTS = frozenset({".git"})


def _outside(path: str, why: str) -> BeeError:
    return BeeError(
        ErrorCode.OUTSIDE_ROOT,
        f"path {path!r} {why}; give a repository-relative path with forward slashes inside the checkout",
        details={"path": path},
    )


def confine(root: Path, path: str, *, must_exist: bool = True) -> Path:
    """Resolve ``path`` (repository-relative, forward slashes) to a real path inside ``root``.

    ``root`` must already be resolved. Symlinks are followed and must stay inside the root; ``..``, absolute
    paths, backslashes, NUL bytes and ``.git`` internals are refused before the file system is touched.

    Raises:
        BeeError: ``outside_root`` when the path escapes or names forbidden internals, ``invalid_argument`` when
            it is empty, ``not_found`` when ``must_exist`` and nothing is there.
    """
    if not path or not path.strip():
        raise BeeError(ErrorCode.INVALID_ARGUMENT, "path is empty; give a repository-relative file path")
    if "\x00" in path:
        raise _outside(path.replace("\x00", "\\0"), "contains a NUL byte")
    if "\\" in path:
        raise _outside(path, "contains a backslash")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise _outside(path, "is absolute")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise _outside(path, "climbs out with '..'")
    if FORBIDDEN_PARTS.intersection(parts):
        raise _outside(path, "names repository internals (.git)")
    # os.path rather than pathlib: this runs for every file of every packet, and pathlib's parsing dominates.
    base = str(root)
    try:
        resolved = os.path.realpath(os.path.join(base, *parts), strict=False)
    except (OSError, ValueError) as exc:
        raise _outside(path, f"cannot be resolved ({exc.__class__.__name__})") from None
    if resolved != base:
        if not resolved.startswith(base.rstrip(os.sep) + os.sep):
            raise _outside(path, "resolves through a symlink to a place outside the checkout")
        if FORBIDDEN_PARTS.intersection(resolved[len(base) :].split(os.sep)):
            raise _outside(path, "resolves to repository internals (.git)")
    if must_exist and not os.path.exists(resolved):
        raise BeeError(
            ErrorCode.NOT_FOUND,
            f"no file at {path!r} in the checkout; check the spelling or list the directory first",
            details={"path": path},
        )
    return Path(resolved)
