"""Where a Bee instance lives: the ``.bee`` directory name, the variable that selects another, and how to find one.

Shared by every package that keeps state in an instance (the core host's checkout instance, the tracker's home),
so that all of them agree on which instance a command in a given directory means.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from bee_contracts.errors import BeeError, ErrorCode

#: The instance directory inside a checkout.
INSTANCE_DIRNAME: Final = ".bee"

#: Environment variable naming the instance to use instead of one found from the working directory.
ENV_INSTANCE_ROOT: Final = "BEE_INSTANCE_ROOT"


def checkout_instance(directory: Path) -> Path:
    """``directory/.bee``: the instance a checkout keeps, unless it is a symlink that leads out of ``directory``.

    A checkout can commit ``.bee`` as a symlink to another checkout's instance; followed, that instance's per-user
    settings (its skill servers and tokens, its tracker binding) and its tracker home would serve this checkout.
    A ``.bee`` that points elsewhere inside the checkout is followed.

    Raises:
        BeeError: ``outside_root`` naming the link, its target, and how to use that instance on purpose.
    """
    candidate = directory / INSTANCE_DIRNAME
    if candidate.is_symlink():
        target = candidate.resolve()
        if not target.is_relative_to(directory.resolve()):
            raise BeeError(
                ErrorCode.OUTSIDE_ROOT,
                f"{candidate} is a symlink to {target}, outside the checkout; Bee does not follow it (a checkout "
                f"could point it at another checkout's instance and its settings). To use that instance on purpose, "
                f"pass --instance-root {target} or set ${ENV_INSTANCE_ROOT}",
                details={"instance": str(candidate), "target": str(target)},
            )
    return candidate


def nearest_instance(start: Path) -> Path | None:
    """The closest ``.bee`` directory in ``start`` or one of its parents, or None when there is none.

    This is how a command run in a subdirectory of a checkout finds the checkout's instance.

    Raises:
        BeeError: ``outside_root`` for a ``.bee`` on the way that is a symlink out of its checkout
            (:func:`checkout_instance`).
    """
    here = start.resolve()
    for directory in (here, *here.parents):
        candidate = checkout_instance(directory)
        if candidate.is_dir():
            return candidate
    return None


def selected_instance(start: Path) -> Path | None:
    """$BEE_INSTANCE_ROOT when set, else :func:`nearest_instance` from ``start``.

    Raises:
        BeeError: as :func:`nearest_instance` does.
    """
    chosen = os.environ.get(ENV_INSTANCE_ROOT)
    if chosen:
        return Path(chosen).expanduser()
    return nearest_instance(start)


#: Environment variable naming the tracker home to use instead of the instance's.
ENV_TRACKER_HOME: Final = "BEE_TRACKER_HOME"

#: The tracker's directory inside a Bee instance.
TRACKER_HOME_DIRNAME: Final = "tracker"

#: The file in a tracker home holding the key that signs local tokens.
TRACKER_KEY_FILE: Final = "signing-key"


def tracker_home(start: Path) -> Path:
    """Where the tracker keeps its state (embedded database, signing key) for a command run in ``start``, when no
    ``--home`` is given: the same for every `bee tracker` command and for what other commands print about it.

    $BEE_TRACKER_HOME; else ``<instance>/tracker``, where the instance is :func:`selected_instance` from ``start``
    (so a command run in a subdirectory of a checkout finds the checkout's key); else ``start/.bee/tracker``.

    Raises:
        BeeError: as :func:`nearest_instance` does.
    """
    chosen = os.environ.get(ENV_TRACKER_HOME)
    if chosen:
        return Path(chosen).expanduser()
    instance = selected_instance(start)
    return (instance if instance is not None else start / INSTANCE_DIRNAME) / TRACKER_HOME_DIRNAME
