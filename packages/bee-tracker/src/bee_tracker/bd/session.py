"""Where a `bee bd` command works: the local store (the tools run in this process) or a tracker over HTTP.

Either way a command sees one small seam, :class:`Tracker`: :meth:`~Tracker.call` runs one tracker tool and returns
its ``data``, :meth:`~Tracker.each` runs many calls of one read tool. Locally a call is :func:`bee_tracker.calls.call`
on the store, as the actor the command names; remotely it is the same tool over MCP as the token's actor
(:mod:`.remote`). There is no second implementation of any tool: what a command writes goes through the tools' own
code (claims, compare-and-swap, the history), and what it reads it reads from their answers, so the two places give
the same answers.

The place is chosen once per command (:class:`Options`): ``--url`` (or ``$BEE_TRACKER_URL``) for a tracker over HTTP,
else the local store of ``--home``/``--store`` (as every `bee tracker` command finds them). A local command never
creates a tracker: without one it says how to make one.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from bee_contracts import BeeError, ErrorCode, load_catalog

#: The variable naming the team's tracker (the one `bee setup-mcp` reads too).
ENV_URL = "BEE_TRACKER_URL"
#: Who writes locally without ``--actor``: bd's variables, in bd's order of precedence.
ENV_ACTORS = ("BEADS_ACTOR", "BD_ACTOR")


class Tracker(Protocol):
    """The tools of one tracker, local or remote."""

    #: The tracker as messages name it.
    where: str

    def call(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """The ``data`` of one call of ``tool``.

        Raises:
            BeeError: the tool's failure, with its code and message.
        """
        ...

    def each(self, tool: str, many: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The ``data`` of each call of the read tool ``tool``, in the order of ``many``.

        Raises:
            BeeError: the first failure.
        """
        ...

    def session_start(self, ready: int) -> str:
        """The session-start context of this tracker's actor (:mod:`bee_tracker.session_start`), listing ``ready``
        ready issues: the MCP prompt ``session_start``'s text.

        Raises:
            BeeError: the tracker's failure.
        """
        ...


@cache
def read_only_tools() -> dict[str, bool]:
    """Each tracker tool and whether it only reads (its ``readOnlyHint``)."""
    return {spec.name: bool(spec.annotations["readOnlyHint"]) for spec in load_catalog("tracker")}


class LocalTracker:
    """The tools run in this process on a store, as ``actor``."""

    def __init__(self, store: Any, actor: str, where: str) -> None:
        self._store = store
        self.actor = actor
        self.where = where

    def call(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        from bee_tracker import calls

        data: dict[str, Any] = calls.call(self._store, tool, self.actor, dict(args))["data"]
        return data

    def each(self, tool: str, many: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return [self.call(tool, args) for args in many]

    def session_start(self, ready: int) -> str:
        from bee_tracker.session_start import context

        return context(self.call, self.actor, ready=ready)


def default_actor() -> str:
    """Who writes locally when ``--actor`` is not given: ``$BEADS_ACTOR``, ``$BD_ACTOR``, else the login name."""
    for name in ENV_ACTORS:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name for this uid (a bare container)
        return f"uid-{os.getuid()}"


def checked(actor: str) -> str:
    """Raises: BeeError: ``invalid_argument`` for an actor no tracker accepts."""
    from bee_tracker.auth import MAX_ACTOR_CHARS, AuthError, checked_actor

    try:
        return checked_actor(actor.strip(" "))
    except AuthError:
        raise BeeError(
            ErrorCode.INVALID_ARGUMENT,
            f"--actor must be printable text of at most {MAX_ACTOR_CHARS} characters (no control or format "
            "characters, lone surrogates or line breaks), such as an e-mail address",
        ) from None


@dataclass
class Options:
    """What the `bee bd` group was told about where to work, and how to answer."""

    home: Path | None = None
    store_url: str | None = None
    url: str | None = None
    token_file: Path | None = None
    actor: str | None = None
    as_json: bool = False
    _stack: ExitStack = field(default_factory=ExitStack)
    _tracker: Tracker | None = None

    def tracker(self) -> Tracker:
        """The tracker this command works on, opened on first use and closed when the command ends.

        Raises:
            BeeError: ``invalid_argument`` when both a URL and a local store are named; ``not_found`` when there is
                no local tracker; whatever opening the store or the session raises.
        """
        if self._tracker is None:
            self._tracker = self._open()
        return self._tracker

    def close(self) -> None:
        self._stack.close()

    def _open(self) -> Tracker:
        url = self.url or os.environ.get(ENV_URL) or None
        if url and (self.home is not None or self.store_url is not None):
            raise BeeError(
                ErrorCode.INVALID_ARGUMENT,
                "give either --url (a tracker over HTTP) or --home/--store (a local store), not both"
                + ("" if self.url else f" (--url came from ${ENV_URL})"),
            )
        if url:
            if self.actor is not None:
                raise BeeError(
                    ErrorCode.INVALID_ARGUMENT,
                    "--actor names who writes to a local store; a tracker over HTTP writes as its token's actor",
                )
            return self._stack.enter_context(_remote(url, self.token_file))
        return self._stack.enter_context(_local(self.home, self.store_url, checked(self.actor or default_actor())))


@contextmanager
def _remote(url: str, token_file: Path | None) -> Iterator[Tracker]:
    from bee_tracker.bd.remote import check_url, connect, read_token

    check_url(url)
    with connect(url, read_token(token_file), read_only_tools()) as tracker:
        yield tracker


@contextmanager
def _local(home: Path | None, store_url: str | None, actor: str) -> Iterator[Tracker]:
    from bee_tracker.cli_common import config_of
    from bee_tracker.home import STORE_FILE, init_home
    from bee_tracker.store import open_store

    config = config_of(home, store_url)
    if config.store_in_home:
        if not (config.home / STORE_FILE).exists():
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"no tracker here: {config.home / STORE_FILE} does not exist. Import your Beads data with `bee tracker "
                "import .beads` (or start an empty one with `bee tracker serve`), name a store with --home or --store, "
                f"or reach a team's tracker with --url (or ${ENV_URL})",
            )
        init_home(config.home)  # refuses a database git tracks (it came with the checkout)
    store = open_store(config.store)
    try:
        yield LocalTracker(store, actor, f"the store at {config.store}")
    finally:
        store.close()
