"""Writes made on a SQLite store by other processes: heard in its history, and told to this tracker's listeners.

The change feed is in process (:mod:`bee_tracker.store.feed`): a write made through another process's tools — `bee bd`
on the checkout's store beside a running `bee tracker serve`, a script calling them — commits in the store, but no
feed of this tracker's reports it. Every such write leaves its history events, each with the process that wrote it
(``replica``). The watcher, a thread of a tracker serving a SQLite store, reads the history's newest ``seq`` every
:data:`POLL_SECONDS` (one indexed read) and, when it grew, the new events that another process wrote. It posts their
issues, the issues depending on them (whose readiness a close or a new dependency may have turned), the ready
queues and every claims URI, and wakes the lease watcher: listeners refetch, as level-triggered listening does.

On PostgreSQL the replicas tell each other through the bus; a command writing straight to a PostgreSQL store is not
heard (see the tracker guide). An import rewrites the store without history events, and is not heard either.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from bee_tracker.listening import changes, uris

if TYPE_CHECKING:
    from bee_tracker.store import SqlStore

logger = logging.getLogger("bee.tracker.listening")

#: How often the watcher looks at the history (seconds): a listener hears another process's write this late at most.
POLL_SECONDS: Final = 0.25


class ForeignWrites:
    """Posts the URIs other processes' writes touched (see the module docstring)."""

    def __init__(self, store: SqlStore, post: Callable[[list[str]], None]) -> None:
        self._store = store
        self._post = post
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bee-foreign-writes", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        seen: int | None = None
        while not self._stop.wait(0 if seen is None else POLL_SECONDS):
            try:
                issues, seen = self._store.written_elsewhere(seen)
            except Exception:  # a store that failed once may answer next time; the thread must live on
                logger.exception("the watcher of other processes' writes could not read the history")
                continue
            if issues:
                self._post(
                    [
                        *(uris.issue_uri(issue_id) for issue_id in issues),
                        changes.ANY_READY,
                        changes.ANY_CLAIMS,
                        changes.LEASES,
                    ]
                )
