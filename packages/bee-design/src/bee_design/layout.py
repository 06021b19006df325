"""Where the design host's files live under its root, and the one way to reach a path the caller named.

Two places, on purpose:

- ``.bee/design/`` holds what `bee design import` and `bee design capture` write on this machine (bundle manifests,
  content-addressed bundle files, evidence folders). It is Bee's local state, ignored by git.
- ``bee-design/`` holds what belongs to the repository and is committed with it: the mapping from design elements
  to source (``bee-design/map.json``) and the visual specs (``bee-design/specs/<name>/``).

Every path is resolved through :func:`bee_hostkit.confine`, so symlinks that leave the root are refused.
"""

from __future__ import annotations

from pathlib import Path

from bee_contracts import BeeError, ErrorCode
from bee_hostkit import confine

#: Local state (git-ignored): manifests, bundle files by sha256, evidence.
STATE_DIR = ".bee/design"
BUNDLES_DIR = f"{STATE_DIR}/bundles"
BLOBS_DIR = f"{STATE_DIR}/blobs"
EVIDENCE_DIR = f"{STATE_DIR}/evidence"
LOCK_FILE = f"{STATE_DIR}/.lock"

#: Repository-owned design files (committed).
REPO_DIR = "bee-design"
MAP_FILE = f"{REPO_DIR}/map.json"
SPECS_DIR = f"{REPO_DIR}/specs"

#: Bee's own state directory; callers may name paths inside it only where a tool says so.
_PRIVATE = ".bee"


def manifest_path(bundle: str) -> str:
    return f"{BUNDLES_DIR}/{bundle}/manifest.json"


def blob_path(sha256: str) -> str:
    """The stored copy of a bundle file, by its ``sha256:<hex>`` digest."""
    hexdigest = sha256.removeprefix("sha256:")
    return f"{BLOBS_DIR}/{hexdigest[:2]}/{hexdigest}"


def spec_dir(name: str) -> str:
    return f"{SPECS_DIR}/{name}"


def state(root: Path, relative: str, *, must_exist: bool = True) -> Path:
    """A path of Bee's own state under ``root``, resolved and confined (a symlinked ``.bee`` cannot lead out).

    Raises:
        BeeError: ``outside_root`` or ``not_found`` (see :func:`bee_hostkit.confine`).
    """
    return confine(root, relative, must_exist=must_exist)


def user_path(root: Path, path: str, *, must_exist: bool = True, allow_evidence: bool = False) -> Path:
    """A path a caller named, relative to ``root``: confined, and never inside Bee's state (``.bee/``).

    ``allow_evidence`` admits the evidence folders `bee design capture` writes by default (``.bee/design/evidence``).

    Raises:
        BeeError: ``outside_root`` for ``..``, absolute paths, symlinks leaving the root, ``.git`` or ``.bee``
            internals; ``not_found`` when ``must_exist`` and nothing is there.
    """
    named = tuple(part for part in path.split("/") if part not in ("", "."))
    _refuse_private(path, named, allow_evidence)  # before the file system is asked anything
    resolved = confine(root, path, must_exist=must_exist)
    _refuse_private(path, resolved.relative_to(root).parts if resolved != root else (), allow_evidence)
    return resolved


def _refuse_private(path: str, parts: tuple[str, ...], allow_evidence: bool) -> None:
    if not parts or parts[0] != _PRIVATE:
        return
    evidence = Path(EVIDENCE_DIR).parts
    if allow_evidence and parts[: len(evidence)] == evidence and len(parts) > len(evidence):
        return
    raise BeeError(
        ErrorCode.OUTSIDE_ROOT,
        f"path {path!r} names Bee's own state (.bee/); its contents are served only through the tools",
        details={"path": path},
    )


def relative(root: Path, path: Path) -> str:
    """``path`` relative to ``root``, with forward slashes (how every result names a path)."""
    return path.relative_to(root).as_posix()
