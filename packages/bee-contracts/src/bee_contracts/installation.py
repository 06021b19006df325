"""What of Bee is installed here, as cheap stat readings: whether it may have changed since a process started.

A process that serves many commands from one start (the warm supervisor, :mod:`bee_supervisor.installed`; `bee bd`'s
warm answerer, :mod:`bee_cli.answerer`) must not go on serving code older than what is installed. Both take
:func:`fingerprint` about once a second: the size and modification time of every file in the Bee packages' folders
(caches never: ``__pycache__``, ``.pyc``, hidden files, backups ending in ``~``) and of every Bee distribution's
``METADATA`` and ``RECORD``, which an install rewrites. ``BEE_INSTALLED_VERSION_FILE`` replaces it with that one file's
content (a test and operations seam: see :mod:`bee_supervisor.installed`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from collections.abc import Iterable, Iterator
from functools import cache
from importlib import metadata
from pathlib import Path

#: Names a JSON file whose content stands for the installed version (a test and operations knob).
ENV_INSTALLED_FILE = "BEE_INSTALLED_VERSION_FILE"

#: Folders an ordinary run writes into a package's folder, and never part of what it serves.
_CACHE_FOLDERS = frozenset({"__pycache__"})
#: Files an ordinary run (or an editor) writes there.
_CACHE_SUFFIXES = (".pyc", ".pyo", "~")


def seam() -> Path | None:
    chosen = os.environ.get(ENV_INSTALLED_FILE)
    return Path(chosen) if chosen else None


def served_files(folders: Iterable[Path]) -> Iterator[Path]:
    """Every file under ``folders`` that a host could serve or run, in a stable order; caches never."""
    for folder in folders:
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in _CACHE_FOLDERS and not d.startswith("."))
            for name in sorted(files):
                if not name.startswith(".") and not name.endswith(_CACHE_SUFFIXES):
                    yield Path(root, name)


def stat_fingerprint(paths: Iterable[Path]) -> str:
    """A digest of the names, sizes and modification times of ``paths``: cheap, and changed by any write."""
    digest = hashlib.sha256()
    for path in paths:
        try:
            info = path.stat()
        except OSError:
            digest.update(f"{path}:gone\n".encode())
            continue
        digest.update(f"{path}:{info.st_size}:{info.st_mtime_ns}\n".encode())
    return "stat:" + digest.hexdigest()


def fingerprint() -> str:
    """A digest that changes whenever the installed Bee may have changed; cheap enough to take every second."""
    chosen = seam()
    if chosen is not None:
        try:
            return "file:" + hashlib.sha256(chosen.read_bytes()).hexdigest()
        except OSError:
            return "file:unreadable"
    return stat_fingerprint([*served_files(package_folders()), *distribution_records()])


def top_level(distribution: str) -> str:
    """The package a Bee distribution installs: ``bee-core`` installs ``bee_core``."""
    return distribution.lower().replace("-", "_")


@cache
def distributions() -> tuple[tuple[str, Path, bool], ...]:
    """Every installed Bee distribution: its package name, its ``.dist-info`` folder, and whether it is editable.

    Finding them reads every distribution's metadata, the slow part, so the list is kept until
    :func:`read_installed` looks again (an upgrade renames the ``.dist-info`` folders: the old files are then gone,
    which is itself a change).
    """
    found = []
    for dist in metadata.distributions():
        name = dist.metadata["Name"] or ""
        if not name.lower().startswith("bee-"):
            continue
        files = [Path(str(file.locate())) for file in dist.files or [] if file.parent.name.endswith(".dist-info")]
        info = next((f.parent for f in files if f.name == "METADATA"), None)
        if info is None:
            continue
        try:
            direct = json.loads(dist.read_text("direct_url.json") or "{}")
        except ValueError:
            direct = {}
        editable = bool(isinstance(direct, dict) and (direct.get("dir_info") or {}).get("editable"))
        found.append((top_level(name), info, editable))
    return tuple(sorted(found))


def distribution_records() -> list[Path]:
    """The METADATA and RECORD files of every installed Bee distribution."""
    return [info / name for _, info, _ in distributions() for name in ("METADATA", "RECORD")]


def package_folders(*, editable_only: bool = False) -> list[Path]:
    """The folders of the installed Bee packages (of the editable ones only, with ``editable_only``)."""
    folders = []
    for package, _, editable in distributions():
        if editable_only and not editable:
            continue
        spec = importlib.util.find_spec(package)
        for location in (spec.submodule_search_locations or []) if spec else []:
            folders.append(Path(location))
    return folders
