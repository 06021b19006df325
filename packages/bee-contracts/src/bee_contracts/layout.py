"""Where a Bee instance lives: the ``.bee`` directory name, the variable that selects another, how to find one, and
the checkout a stdio host serves with the instance it selects (:class:`Checkout`).

Shared by every package that keeps state in an instance (the core and design hosts' checkout instance, the tracker's
home), so that all of them agree on which instance a command in a given directory means. The `bee` front end resolves
a checkout with :class:`Checkout` before anything heavy loads, so this module runs on strings and ``os.path``:
no pathlib, typing or dataclasses at import, and :class:`~bee_contracts.errors.BeeError` only when one is raised.
"""

from __future__ import annotations

import os

# Annotations only (mypy reads this name as True): the front end need not load what they name.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Final, TypeAlias

    from bee_contracts.errors import BeeError

    #: A refusal: its contracts code, message and details (raised as a :class:`BeeError` by :func:`_error`).
    _Refused: TypeAlias = tuple[str, str, dict[str, str]]

#: The instance directory inside a checkout.
INSTANCE_DIRNAME: Final = ".bee"

#: Environment variable naming the instance to use instead of one found from the working directory.
ENV_INSTANCE_ROOT: Final = "BEE_INSTANCE_ROOT"


def _error(refused: _Refused) -> BeeError:
    from bee_contracts.errors import BeeError, ErrorCode

    code, message, details = refused
    return BeeError(ErrorCode(code), message, details=details)


def _dot_bee(directory: str) -> str | _Refused:
    """``directory/.bee``, unless it is a symlink that leads out of ``directory`` (see :func:`checkout_instance`)."""
    candidate = os.path.join(directory, INSTANCE_DIRNAME)
    if os.path.islink(candidate):
        target, real = os.path.realpath(candidate), os.path.realpath(directory)
        if os.path.commonpath([target, real]) != real:
            return (
                "outside_root",
                f"{candidate} is a symlink to {target}, outside the checkout; Bee does not follow it (a checkout "
                f"could point it at another checkout's instance and its settings). To use that instance on purpose, "
                f"pass --instance-root {target} or set ${ENV_INSTANCE_ROOT}",
                {"instance": candidate, "target": target},
            )
    return candidate


def checkout_instance(directory: Path) -> Path:
    """``directory/.bee``: the instance a checkout keeps, unless it is a symlink that leads out of ``directory``.

    A checkout can commit ``.bee`` as a symlink to another checkout's instance; followed, that instance's per-user
    settings (its skill servers and tokens, its tracker binding) and its tracker home would serve this checkout.
    A ``.bee`` that points elsewhere inside the checkout is followed.

    Raises:
        BeeError: ``outside_root`` naming the link, its target, and how to use that instance on purpose.
    """
    found = _dot_bee(str(directory))
    if isinstance(found, tuple):
        raise _error(found)
    return directory / INSTANCE_DIRNAME


def _instance(checkout: str, instance_root: str | None, environ: Mapping[str, str]) -> str | _Refused:
    chosen = instance_root or environ.get(ENV_INSTANCE_ROOT)
    found = chosen if chosen else _dot_bee(checkout)
    return found if isinstance(found, tuple) else os.path.realpath(os.path.expanduser(found))


def select_instance(checkout: str, instance_root: str | None, environ: Mapping[str, str]) -> str:
    """The instance ``checkout`` (a resolved directory) selects: ``instance_root``, else ``$BEE_INSTANCE_ROOT``, else
    :func:`checkout_instance`; absolute, symlinks resolved. It may not exist yet (`bee init` creates it).

    Raises:
        BeeError: ``outside_root`` for a ``.bee`` that is a symlink out of the checkout, when no instance is chosen.
    """
    found = _instance(checkout, instance_root, environ)
    if isinstance(found, tuple):
        raise _error(found)
    return found


class Checkout:
    """The checkout a stdio host serves, resolved once at start: ``path`` (absolute, symlinks resolved, a directory)
    and ``instance``, the Bee instance it selects (:func:`select_instance`; absolute, resolved, maybe not there yet).

    Both stdio hosts and the front end that finds their warm host resolve a checkout here, so all three agree on it.
    """

    __slots__ = ("instance", "path")

    def __init__(self, path: str, instance: str) -> None:
        self.path = path
        self.instance = instance

    def __repr__(self) -> str:
        return f"Checkout({self.path!r}, {self.instance!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Checkout) and (self.path, self.instance) == (other.path, other.instance)

    def __hash__(self) -> int:
        return hash((self.path, self.instance))

    @classmethod
    def select(
        cls, given: str, instance_root: str | None, environ: Mapping[str, str], *, absolute: bool = False
    ) -> Checkout:
        """The checkout ``given`` names (``~`` expanded; with ``absolute``, it must be an absolute path) and the
        instance it selects with ``instance_root`` and ``environ``.

        Raises:
            BeeError: ``invalid_argument`` for a checkout that is empty, relative (with ``absolute``), missing or
                not a directory; ``outside_root`` as :func:`select_instance`.
        """
        found = cls._resolve(given, instance_root, environ, absolute)
        if isinstance(found, tuple):
            raise _error(found)
        return found

    @classmethod
    def find(
        cls, given: str, instance_root: str | None, environ: Mapping[str, str], *, absolute: bool = False
    ) -> Checkout | None:
        """What :meth:`select` returns, or None where it raises (the front end then leaves the host to say why)."""
        found = cls._resolve(given, instance_root, environ, absolute)
        return None if isinstance(found, tuple) else found

    @classmethod
    def _resolve(
        cls, given: str, instance_root: str | None, environ: Mapping[str, str], absolute: bool
    ) -> Checkout | _Refused:
        if absolute and not given:
            return ("invalid_argument", "the checkout is empty; pass --checkout /absolute/path/to/checkout", {})
        if absolute and not os.path.isabs(given):
            return (
                "invalid_argument",
                f"the checkout {given!r} is relative; pass an absolute path (--checkout /absolute/path/to/checkout)",
                {"checkout": given},
            )
        path = os.path.realpath(os.path.expanduser(given))
        if not os.path.exists(path):
            return ("invalid_argument", f"the checkout {given!r} does not exist; pass an existing directory", {})
        if not os.path.isdir(path):
            return ("invalid_argument", f"the checkout {given!r} is not a directory; pass the checkout's directory", {})
        instance = _instance(path, instance_root, environ)
        return instance if isinstance(instance, tuple) else cls(path, instance)


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
    from pathlib import Path

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
    from pathlib import Path

    chosen = os.environ.get(ENV_TRACKER_HOME)
    if chosen:
        return Path(chosen).expanduser()
    instance = selected_instance(start)
    return (instance if instance is not None else start / INSTANCE_DIRNAME) / TRACKER_HOME_DIRNAME
