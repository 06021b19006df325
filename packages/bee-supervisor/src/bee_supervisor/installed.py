"""What Bee is installed, and whether what a host would serve changed under a running supervisor.

An upgrade is a change of what a host would serve, and nothing else:

- the **version triple** (``version``, ``contractVersion``, ``contractDigest``), read afresh in a new interpreter
  (the supervisor's own imports are as old as the supervisor);
- in an **editable** install (a developer's checkout of Bee), the **sources** too: a digest of the content of every
  file in the Bee packages' folders — code, catalogs, templates, the skill — so that an edit is served without a new
  version number. In a regular install a file can change only with a new install, which carries a new triple if
  anything served changed; the same triple is never a rolling restart there.

What an ordinary run writes is never part of it: ``__pycache__`` folders and ``.pyc`` files (a first import in a
shell without ``PYTHONDONTWRITEBYTECODE`` writes them beside the sources), hidden files (tools' caches, editors'
swap files) and backups ending in ``~``. Folders' modification times are not looked at (writing a cache changes
them); a file added or removed is seen in the listing instead.

The supervisor polls a cheap stat fingerprint about once a second (:func:`fingerprint`: the size and modification
time of those files, and of every Bee distribution's ``METADATA`` and ``RECORD``, which an install rewrites). Only
when it changes is the installation read (:func:`read_installed`), and the hosts are restarted only when the triple
or the sources differ from what they serve (:meth:`Installed.serves_as`).

``BEE_INSTALLED_VERSION_FILE`` replaces all of that with one JSON file: its triple is the installed version, and
whatever else it holds stands for the sources (``{"build": 2}`` beside the triple is a changed editable install);
new bytes with the same content are no upgrade. Tests use it to simulate an upgrade without reinstalling; an operator
can use it to roll the hosts by hand. It is never needed otherwise.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bee_contracts import BeeError, ErrorCode, launch
from bee_contracts.installation import (
    ENV_INSTALLED_FILE,
    distributions,
    fingerprint,
    package_folders,
    seam,
    served_files,
)
from bee_supervisor.contract import VERSION_KEYS, VersionInfo, triple

_READ = "import json, bee_contracts; print(json.dumps(bee_contracts.version_info()))"


@dataclass(frozen=True)
class Installed:
    """The installation at one moment: its stat fingerprint, version triple and, for an editable install (or the
    seam file), the digest of the sources it serves."""

    fingerprint: str
    info: VersionInfo
    sources: str | None = None

    def serves_as(self, other: Installed) -> bool:
        """Whether a host started from ``other`` serves what one started from this would: the same triple and, in
        an editable install, the same sources."""
        return self.info == other.info and self.sources == other.sources

    def change_from(self, before: Installed) -> str:
        """What changed since ``before``, in words (for the log)."""
        if self.info != before.info:
            return "a new version"
        return "the sources of an editable install"


def sources_digest(folders: Iterable[Path]) -> str:
    """A digest of the names and content of every served file under ``folders``: what a host would serve."""
    digest = hashlib.sha256()
    for path in served_files(folders):
        try:
            content = path.read_bytes()
        except OSError:
            content = b"\0gone"
        digest.update(f"{path}\n{len(content)}\n".encode())
        digest.update(content)
    return "sha256:" + digest.hexdigest()


def _seam_installed(seam: Path) -> Installed:
    try:
        document = json.loads(seam.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BeeError(ErrorCode.INTERNAL, f"cannot read {ENV_INSTALLED_FILE}={seam}: {exc}") from None
    info = triple(document)
    if info is None or len(info) != 3:
        raise BeeError(ErrorCode.INTERNAL, f"{seam} ({ENV_INSTALLED_FILE}) holds no complete version triple")
    rest = {key: value for key, value in document.items() if key not in VERSION_KEYS}
    sources = json.dumps(rest, sort_keys=True) if rest else None
    return Installed(fingerprint(), info, sources)


def _editable_sources() -> str | None:
    folders = package_folders(editable_only=True)
    return sources_digest(folders) if folders else None


def read_installed() -> Installed:
    """The installation now: fingerprint, version triple (read in a fresh interpreter, or from the seam file) and
    the sources of an editable install.

    Raises:
        BeeError: ``internal`` when the triple cannot be read (an install in progress, a damaged file).
    """
    distributions.cache_clear()  # look for the distributions afresh: an upgrade renames their folders
    chosen = seam()
    if chosen is not None:
        return _seam_installed(chosen)
    before = fingerprint()
    completed = subprocess.run(  # noqa: S603 -- our own interpreter and a constant program
        launch.python("-c", _READ), capture_output=True, text=True, timeout=60, check=False, cwd=launch.NEUTRAL_CWD
    )
    found = triple(json.loads(completed.stdout)) if completed.returncode == 0 else None
    if found is None or len(found) != 3:
        raise BeeError(ErrorCode.INTERNAL, f"cannot read the installed version: {completed.stderr.strip()[-300:]}")
    sources = _editable_sources()
    after = fingerprint()
    if after != before:  # it changed while we read: an install is still running, try again at the next poll
        raise BeeError(ErrorCode.INTERNAL, "the installation changed while it was read", retryable=True)
    return Installed(after, found, sources)


def current_installed() -> Installed:
    """The installation as this process imported it (at start-up this is what is installed), or the seam file."""
    chosen = seam()
    if chosen is not None:
        return _seam_installed(chosen)
    from bee_contracts import version_info

    return Installed(fingerprint(), version_info(), _editable_sources())
