"""What the access log (``--access-log``) keeps of a request: who asked, the method, the path and the status; never
the query string, and nothing shaped like a token.

A query string is the caller's data: a one-time sign-in link's token, a search's words (task text), filter values.
uvicorn's access line carries the path with its query, so :class:`HideQueries`, which the HTTP edge installs on
uvicorn's access logger before it serves a connection, rewrites every line: the query becomes
:data:`QUERY_HIDDEN`, and a run in the path that has a JWT's shape (three base64url parts, the first one starting
``eyJ``, a JSON object's ``{"``) becomes :data:`TOKEN_HIDDEN`. The rule is about the line, not about routes: a doubled
or trailing slash, a percent-encoded separator, any casing and any path at all, answered or refused, log the same way.
"""

from __future__ import annotations

import logging
import re

#: What a logged request target shows instead of its query string.
QUERY_HIDDEN = "?(query hidden)"
#: What a logged path shows instead of anything shaped like a JWT.
TOKEN_HIDDEN = "(token hidden)"  # noqa: S105 -- the words a log shows in place of a token, not a secret
#: The logger uvicorn writes request lines to.
ACCESS_LOGGER = "uvicorn.access"

# A JWS compact serialisation: base64url of a JSON object (so "eyJ"), a dot, the payload, a dot, the signature.
_TOKEN_SHAPED = re.compile(r"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*")
#: The argument that holds the request target in uvicorn's access line ('%s - "%s %s HTTP/%s" %d').
_TARGET = 2
_ACCESS_ARGS = 5


def logged_target(target: str) -> str:
    """``target`` (a path, percent-encoded, with its query string if any) as the access log shows it."""
    path, mark, _ = target.partition("?")
    return _TOKEN_SHAPED.sub(TOKEN_HIDDEN, path) + (QUERY_HIDDEN if mark else "")


class HideQueries(logging.Filter):
    """Rewrites the request target of every access line (see the module docstring); lets every record through."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == _ACCESS_ARGS:
            target = args[_TARGET]
            if isinstance(target, str):
                record.args = (*args[:_TARGET], logged_target(target), *args[_TARGET + 1 :])
        return True


def hide_queries(logger: logging.Logger | None = None) -> None:
    """Install :class:`HideQueries` on ``logger`` (uvicorn's access logger by default), once."""
    target = logger or logging.getLogger(ACCESS_LOGGER)
    if not any(isinstance(existing, HideQueries) for existing in target.filters):
        target.addFilter(HideQueries())
