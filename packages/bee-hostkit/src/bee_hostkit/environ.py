"""The environment a handler reads at call time: its session's, which in a warm host is not the process's.

A cold host serves one session, started by the editor with the editor's environment, so ``os.environ`` is the
session's. A warm host serves many front ends, each started by its own editor window: a token a handler sends
(``$BEE_TRACKER_TOKEN``, a skill provider's ``tokenEnv``) must come from the environment of the front end that asked,
never from whichever front end happened to start the host. Every read of the environment at call time goes through
:func:`environ` (or :func:`getenv`); the warm host sets each session's environment with :func:`use_environ` around
that session, and a context variable carries it to every task and worker thread of the session (anyio copies the
context into both).

What a host reads once at start (deadlines, the instance root, the log level) is part of a warm host's identity
instead (:mod:`bee_contracts.warm`), so it is the same for every session of that host.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

_SESSION: ContextVar[Mapping[str, str] | None] = ContextVar("bee_session_environ", default=None)


def environ() -> Mapping[str, str]:
    """The calling session's environment: what :func:`use_environ` set for it, else the process's."""
    found = _SESSION.get()
    return os.environ if found is None else found


def getenv(name: str, default: str | None = None) -> str | None:
    """``name`` in the calling session's environment (:func:`environ`), else ``default``."""
    return environ().get(name, default)


@contextmanager
def use_environ(values: Mapping[str, str]) -> Iterator[None]:
    """Make ``values`` the environment of everything this context runs (and the tasks and threads it starts)."""
    token = _SESSION.set(dict(values))
    try:
        yield
    finally:
        _SESSION.reset(token)
