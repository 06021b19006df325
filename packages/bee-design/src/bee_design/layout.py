"""Where the design host's files live under its root, and the one way each is reached.

Two places, on purpose:

- the ``design`` folder of the root's Bee instance (``.bee/design/``, unless ``--instance-root`` or
  $BEE_INSTANCE_ROOT selects another instance, as for the core host) holds what `bee design import` and
  `bee design capture` write on this machine (bundle manifests, content-addressed bundle files, evidence folders).
  It is Bee's local state, ignored by git. Answers name it ``.bee/design/…`` whichever instance holds it.
- ``bee-design/`` holds what belongs to the repository and is committed with it: the mapping from design elements
  to source (``bee-design/map.json``) and the visual specs (``bee-design/specs/<name>/``).

Every file a caller names (a mapped source, a spec, an evidence screenshot) is read through the checkout opened
once as a :class:`bee_hostkit.ConfinedRoot`: race-free, inside the root, never ``.git``, ``.bee`` or the instance.
Bee's design state is read through its own :class:`~bee_hostkit.ConfinedRoot` at ``<instance>/design``, which must
be a real directory (no part of the way from the root to it, or from an instance chosen outside the root, may be a
symlink), so the state cannot be redirected elsewhere either.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Final

from bee_contracts import BeeError, ErrorCode
from bee_contracts.layout import INSTANCE_DIRNAME, checkout_instance
from bee_hostkit import ConfinedRoot
from bee_hostkit.paths import ConfinedFile

#: The design state's folder in an instance.
STATE_FOLDER: Final = "design"
#: Local state (git-ignored) in the root's Bee instance, as answers name it; paths below are relative to it.
STATE_DIR: Final = f"{INSTANCE_DIRNAME}/{STATE_FOLDER}"
BUNDLES_DIR: Final = "bundles"
BLOBS_DIR: Final = "blobs"
EVIDENCE_DIR: Final = "evidence"
LOCK_FILE: Final = ".lock"
#: Keys of this root that never leave the machine (hidden from every read through the state), and the one in it.
KEYS_DIR: Final = "keys"

#: Repository-owned design files (committed), relative to the root.
REPO_DIR: Final = "bee-design"
MAP_FILE: Final = f"{REPO_DIR}/map.json"
SPECS_DIR: Final = f"{REPO_DIR}/specs"

#: Where evidence in Bee's state is, as a caller names it (relative to the root).
STATE_EVIDENCE: Final = f"{STATE_DIR}/{EVIDENCE_DIR}/"


def manifest_path(bundle: str) -> str:
    """A bundle's manifest, relative to the state directory."""
    return f"{BUNDLES_DIR}/{bundle}/manifest.json"


def blob_path(sha256: str) -> str:
    """The stored copy of a bundle file, by its ``sha256:<hex>`` digest, relative to the state directory."""
    hexdigest = sha256.removeprefix("sha256:")
    return f"{BLOBS_DIR}/{hexdigest[:2]}/{hexdigest}"


def spec_dir(name: str) -> str:
    return f"{SPECS_DIR}/{name}"


def _outside(what: str, why: str) -> BeeError:
    return BeeError(ErrorCode.OUTSIDE_ROOT, f"{what} {why}; it must be a real directory inside the root")


class DesignFiles:
    """One root's files: the checkout (confined, race-free reads) and Bee's design state in the instance's
    ``design`` folder (``instance``: the selected Bee instance; ``<root>/.bee`` when none is given)."""

    def __init__(self, root: Path, instance: Path | None = None) -> None:
        """Raises: BeeError: ``outside_root`` when no instance is given and ``root/.bee`` is a symlink out of it
        (:func:`bee_contracts.layout.checkout_instance`)."""
        self.root = root.resolve()
        self.instance = checkout_instance(self.root).resolve() if instance is None else instance

    @cached_property
    def checkout(self) -> ConfinedRoot:
        """The root opened once: every caller-named file is read through it (never the instance)."""
        return ConfinedRoot(self.root, hidden=[self.instance])

    def open(self, path: str) -> ConfinedFile:
        """Open a file a caller named (relative to the root) for reading.

        Raises:
            BeeError: ``outside_root``, ``not_found`` or ``invalid_argument`` (see :meth:`ConfinedRoot.open`).
        """
        return self.checkout.open(path)

    def read(self, path: str) -> bytes:
        with self.open(path) as file:
            return file.read()

    # -- real directories inside the root ------------------------------------------------------------------------

    def directory(self, relative: str, *, create: bool = False, base: Path | None = None) -> Path:
        """``base/relative`` (``base``: the root by default) after checking that no part of ``relative`` is a
        symlink (or other non-directory).

        With ``create``, missing directories are made. The result may not exist when ``create`` is false.

        Raises:
            BeeError: ``outside_root`` when a part of the path is a symlink or a file.
        """
        current = start = self.root if base is None else base
        for part in relative.split("/"):
            current = current / part
            if current.is_symlink():
                raise _outside(f"{relative} (at {part})", "is a symlink")
            if not current.exists():
                if not create:
                    return start / relative
                with contextlib.suppress(FileExistsError):  # made meanwhile: checked again below
                    current.mkdir()
                if current.is_symlink():
                    raise _outside(f"{relative} (at {part})", "is a symlink")
            if not current.is_dir():
                raise _outside(f"{relative} (at {part})", "is not a directory")
        return current

    def state_dir(self, *, create: bool = False) -> Path:
        """The instance's ``design`` folder (checked; made with ``create``, with a ``.gitignore`` that keeps it out
        of commits)."""
        if self.instance.is_relative_to(self.root):  # walked from the root: no symlink on the way to it
            inside = self.instance.relative_to(self.root).as_posix()
            folder = self.directory(f"{inside}/{STATE_FOLDER}", create=create)
        else:  # an instance chosen outside the root, on purpose: walked from there
            if create:
                self.instance.mkdir(parents=True, exist_ok=True)
            folder = self.directory(STATE_FOLDER, create=create, base=self.instance)
        if create:
            ignore = folder / ".gitignore"
            if not ignore.exists():
                # Local state: imported bundles and evidence stay out of commits (the mapping and specs are committed).
                ignore.write_text("*\n", encoding="utf-8")
        return folder

    def _state(self) -> ConfinedRoot | None:
        folder = self.state_dir()
        # keys/ held the evidence key before it became a per-user setting (bee_design.capture.seal); a key an older
        # Bee left there is never served, whatever path or symlink leads to it.
        return ConfinedRoot(folder, hidden=[folder / KEYS_DIR]) if folder.is_dir() else None

    def open_state(self, relative: str) -> ConfinedFile:
        """Open a file of Bee's design state (``relative`` to ``.bee/design``).

        Raises:
            BeeError: ``not_found`` when it is not there; ``outside_root`` when the state directory is a symlink.
        """
        state = self._state()
        if state is None:
            raise BeeError(ErrorCode.NOT_FOUND, f"nothing is imported here yet ({STATE_DIR} does not exist)")
        try:
            return state.open(relative)
        finally:
            state.close()

    def state_entries(self, relative: str) -> Iterator[Path]:
        """The entries of a directory of the design state (none when it does not exist)."""
        folder = self.state_dir() / relative
        if folder.is_dir() and not folder.is_symlink():
            yield from sorted(folder.iterdir())

    # -- evidence, wherever the caller keeps it --------------------------------------------------------------------

    def open_evidence(self, folder: str, name: str) -> ConfinedFile:
        """Open file ``name`` of the evidence folder ``folder`` (relative to the root; evidence in Bee's state, under
        ``.bee/design/evidence/``, is read through the state directory — nothing else of ``.bee`` is reachable).

        Raises:
            BeeError: ``outside_root``, ``not_found`` or ``invalid_argument`` as for any caller-named file.
        """
        clean = folder.strip("/")
        if clean.startswith(STATE_EVIDENCE) or clean + "/" == STATE_EVIDENCE:
            inside = clean[len(STATE_DIR) + 1 :]
            return self.open_state(f"{inside}/{name}")
        return self.open(f"{clean}/{name}")

    def evidence_exists(self, folder: str) -> bool:
        """Whether the evidence folder exists (call after a read through it has checked the path)."""
        clean = folder.strip("/")
        return os.path.isdir(self.root / clean) and not os.path.islink(self.root / clean)
