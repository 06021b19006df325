"""What a checkout ships that would choose whom Bee talks to: found, reported, and adopted only on purpose.

Settings that reach the network, send a token or read a file outside the instance live in the user's own
configuration directory (:mod:`bee_contracts.userconfig`). The files where an instance used to keep them —
``<instance>/skills/bridge.json`` and ``<instance>/collab.json`` — are never read as configuration: a repository
that committed its ``.bee`` would otherwise choose the server and the token. When one is there (shipped by a
checkout, or written by an older Bee), the core host logs a note at start, the tools' errors carry it, and the CLI
prints it once per command: what the checkout ships, that Bee ignores it, and the command that shows it and adopts
it on confirmation (``bee skill bridge trust``, ``bee collab trust``). Adopting records the file's digest in the
user's settings, so the note stops until the file changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from bee_contracts.userconfig import UserSettings
from bee_core.instance import Instance

#: The user's record of the shipped files adopted on purpose, by kind, with the digest adopted.
ADOPTED_FILE = "adopted.json"
#: A shipped file larger than this is not a setting (nor read to be adopted).
MAX_SHIPPED_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Kind:
    """A kind of setting an instance once kept in itself."""

    name: str
    #: Where the instance kept it.
    parts: tuple[str, ...]
    #: What it is, for the note: "a skill bridge configuration (…)".
    what: str
    #: The command that shows it and adopts it on confirmation.
    command: str


BRIDGE = Kind(
    "bridge",
    ("skills", "bridge.json"),
    "a skill bridge configuration (skill servers and their tokens)",
    "bee skill bridge trust",
)
BINDING = Kind("binding", ("collab.json",), "a collaboration binding (a tracker URL and its token)", "bee collab trust")
KINDS = (BRIDGE, BINDING)


@dataclass(frozen=True)
class Shipped:
    """A file of ``kind`` found in the instance: its bytes, or why they cannot be read."""

    kind: Kind
    path: Path
    data: bytes | None
    problem: str = ""

    @property
    def digest(self) -> str | None:
        return None if self.data is None else "sha256:" + hashlib.sha256(self.data).hexdigest()

    def note(self) -> str:
        """The one sentence every place that reports it says."""
        return (
            f"this checkout ships {self.kind.what} in {self.path}; Bee ignores it. To adopt it on purpose after "
            f"reading it, run `{self.kind.command}`"
        )


def _read(path: Path) -> tuple[bytes | None, str]:
    """The bytes of ``path``, never following a symlink or opening a FIFO or device; or why not."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return None, "it is a symlink" if os.path.islink(path) else f"it cannot be read ({exc.strerror or exc})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, "it is not a regular file"
        data = os.read(fd, MAX_SHIPPED_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_SHIPPED_BYTES:
        return None, f"it is larger than {MAX_SHIPPED_BYTES} bytes"
    return data, ""


def _adopted(instance: Instance) -> dict[str, str]:
    raw = UserSettings(instance.root).read(ADOPTED_FILE)
    try:
        record = json.loads(raw) if raw is not None else {}
    except ValueError:
        record = {}
    return {str(k): str(v) for k, v in record.items()} if isinstance(record, dict) else {}


def find(instance: Instance, kind: Kind, *, adopted_too: bool = False) -> Shipped | None:
    """The file of ``kind`` in ``instance``, unless it is absent or (without ``adopted_too``) adopted as it is now.

    Raises:
        BeeError: ``forbidden`` when the user's settings folder is not private to them (see
            :class:`~bee_contracts.userconfig.UserSettings`).
    """
    path = instance.path(*kind.parts)
    if not os.path.lexists(path):
        return None
    data, problem = _read(path)
    found = Shipped(kind, path, data, problem)
    if not adopted_too and found.digest is not None and _adopted(instance).get(kind.name) == found.digest:
        return None
    return found


def shipped(instance: Instance) -> list[Shipped]:
    """Every kind the instance ships and the user has not adopted as it is, in :data:`KINDS` order."""
    return [found for kind in KINDS if (found := find(instance, kind)) is not None]


def adopt(instance: Instance, found: Shipped) -> None:
    """Record that the user adopted ``found`` as its bytes are now (the note then stops until they change)."""
    if found.digest is None:
        raise ValueError("a file that cannot be read cannot be adopted")
    record = {**_adopted(instance), found.kind.name: found.digest}
    UserSettings(instance.root).write(ADOPTED_FILE, (json.dumps(record, indent=2) + "\n").encode("utf-8"))
