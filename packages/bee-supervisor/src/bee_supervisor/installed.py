"""What Bee is installed, and whether that changed under a running supervisor.

The supervisor polls a cheap fingerprint of the installation about once a second: the size and modification time
of every file of the installed ``bee_contracts`` package (its version, catalogs, limits and error codes; in an
editable install, the sources) and of the ``METADATA`` and ``RECORD`` of every installed Bee distribution (an
install, upgrade or reinstall of any of them rewrites those; installing something else touches none). When the
fingerprint changes, the version triple is read afresh in a new interpreter — the supervisor's
own imports are as old as the supervisor — and the hosts are restarted one at a time.

``BEE_INSTALLED_VERSION_FILE`` replaces all of that with one JSON file holding the triple (``version``,
``contractVersion``, ``contractDigest``): its content is the installed version and any change to its bytes is an
upgrade. Tests use it to simulate an upgrade without reinstalling; an operator can use it to roll the hosts by
hand. It is never needed otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path

from bee_contracts import BeeError, ErrorCode
from bee_supervisor.contract import VersionInfo, triple

#: Names a JSON file whose content stands for the installed version (a test and operations knob).
ENV_INSTALLED_FILE = "BEE_INSTALLED_VERSION_FILE"

_READ = "import json, bee_contracts; print(json.dumps(bee_contracts.version_info()))"


@dataclass(frozen=True)
class Installed:
    """The installation at one moment: its fingerprint and version triple."""

    fingerprint: str
    info: VersionInfo


def _seam() -> Path | None:
    chosen = os.environ.get(ENV_INSTALLED_FILE)
    return Path(chosen) if chosen else None


def fingerprint() -> str:
    """A digest that changes whenever the installed Bee changes; cheap enough to take every second."""
    seam = _seam()
    if seam is not None:
        try:
            return "file:" + hashlib.sha256(seam.read_bytes()).hexdigest()
        except OSError:
            return "file:unreadable"
    digest = hashlib.sha256()
    for path in _watched():
        try:
            stat = path.stat()
        except OSError:
            digest.update(f"{path}:gone\n".encode())
            continue
        digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return "stat:" + digest.hexdigest()


def _watched() -> list[Path]:
    import bee_contracts

    package = Path(bee_contracts.__file__).parent
    # Folders too: a file added to or removed from one changes the folder's modification time.
    paths = sorted(p for p in package.rglob("*") if "__pycache__" not in p.parts and p.suffix in ("", ".py", ".json"))
    return [package, *paths, *_distribution_records()]


@cache
def _distribution_records() -> list[Path]:
    """The METADATA and RECORD files of every installed Bee distribution.

    Finding them reads every distribution's metadata, the slow part, so the list is kept until
    :func:`read_installed` looks again (an upgrade renames the ``.dist-info`` folders: the old files are then gone,
    which is itself a change).
    """
    found = []
    for dist in metadata.distributions():
        if not (dist.metadata["Name"] or "").lower().startswith("bee-"):
            continue
        for file in dist.files or []:
            if file.name in ("METADATA", "RECORD") and file.parent.name.endswith(".dist-info"):
                found.append(Path(str(file.locate())))
    return sorted(found)


def read_installed() -> Installed:
    """The installation now: fingerprint and version triple (read in a fresh interpreter, or from the seam file).

    Raises:
        BeeError: ``internal`` when the triple cannot be read (an install in progress, a damaged file).
    """
    _distribution_records.cache_clear()  # look for the distributions afresh: an upgrade renames their folders
    before = fingerprint()
    seam = _seam()
    if seam is not None:
        try:
            info = triple(json.loads(seam.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise BeeError(ErrorCode.INTERNAL, f"cannot read {ENV_INSTALLED_FILE}={seam}: {exc}") from None
        if info is None or len(info) != 3:
            raise BeeError(ErrorCode.INTERNAL, f"{seam} ({ENV_INSTALLED_FILE}) holds no complete version triple")
        return Installed(before, info)
    completed = subprocess.run(  # noqa: S603 -- our own interpreter and a constant program
        [sys.executable, "-c", _READ], capture_output=True, text=True, timeout=60, check=False
    )
    found = triple(json.loads(completed.stdout)) if completed.returncode == 0 else None
    if found is None or len(found) != 3:
        raise BeeError(ErrorCode.INTERNAL, f"cannot read the installed version: {completed.stderr.strip()[-300:]}")
    after = fingerprint()
    if after != before:  # it changed while we read: an install is still running, try again at the next poll
        raise BeeError(ErrorCode.INTERNAL, "the installation changed while it was read", retryable=True)
    return Installed(after, found)


def current_installed() -> Installed:
    """The installation as this process imported it (at start-up this is what is installed), or the seam file."""
    if _seam() is not None:
        return read_installed()
    from bee_contracts import version_info

    return Installed(fingerprint(), version_info())
