"""How far listening goes, as data (cheap to import: the CLI reads the defaults for its --help)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: Open listen streams in one process (the HTTP edge's separate count uses the same number).
DEFAULT_MAX_LISTENS: Final = 1024
#: Open listen streams of one actor in one process.
DEFAULT_MAX_LISTENS_PER_ACTOR: Final = 16
#: Resources one listen stream subscribes to.
DEFAULT_MAX_LISTEN_URIS: Final = 100
#: Undelivered events a stream may hold before it is ended as a slow listener.
DEFAULT_LISTEN_BUFFER: Final = 256


@dataclass(frozen=True)
class ListenLimits:
    """Streams per process, per actor, resources per stream, and a stream's backlog (the defaults above)."""

    streams: int = DEFAULT_MAX_LISTENS
    per_actor: int = DEFAULT_MAX_LISTENS_PER_ACTOR
    uris: int = DEFAULT_MAX_LISTEN_URIS
    buffer: int = DEFAULT_LISTEN_BUFFER
