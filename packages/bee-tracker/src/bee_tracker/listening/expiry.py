"""The expiry watcher: wakes when the next claim's lease runs out and tells listeners, though nobody wrote.

A claim whose lease runs out makes its issue ready again by the database's clock alone (:mod:`bee_tracker.store.
claimlease`), so no write reports it. The watcher, a thread of each replica, asks the store when the next lease
expires (:meth:`~bee_tracker.store.SqlStore.lease_expiries`, by the database's clock), sleeps until then, and posts
the issues whose lease ran out meanwhile (:func:`.changes.expired`) to its own process's listeners: every replica runs
its own, so nothing crosses replicas for it. A write that grants, renews or drops a lease, here or on another
replica, reaches the bus as :data:`.changes.LEASES` and wakes the watcher to ask again. It never sleeps longer than
:data:`MAX_SLEEP_SECONDS`, so a lease it was not told of is still noticed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from bee_tracker.listening import changes

if TYPE_CHECKING:
    from bee_tracker.store import SqlStore

logger = logging.getLogger("bee.tracker.listening")

#: The longest the watcher sleeps without asking the store again.
MAX_SLEEP_SECONDS: Final = 30.0
#: Added to a sleep until an expiry, so that the database's clock has passed it when the watcher asks.
_SLACK_SECONDS: Final = 0.005
#: How long the watcher waits after the store failed to answer.
_RETRY_SECONDS: Final = 1.0


class ExpiryWatcher:
    """Posts :func:`.changes.expired` URIs when leases run out (see the module docstring)."""

    def __init__(self, store: SqlStore, post: Callable[[list[str]], None]) -> None:
        self._store = store
        self._post = post
        self._wake = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="bee-lease-expiry", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def heard(self, touched: list[str]) -> None:
        """A bus watcher: a lease moved, so the next expiry may have too."""
        if changes.LEASES in touched:
            self._wake.set()

    def _run(self) -> None:
        since: float | None = None
        while not self._stopping:
            try:
                ran_out, upcoming, now = self._store.lease_expiries(since)
            except Exception:  # a store that failed once may answer next time; the thread must live on
                logger.exception("the lease expiry watcher could not read the leases")
                self._wake.wait(_RETRY_SECONDS)
                self._wake.clear()
                continue
            self._post(changes.expired(ran_out))
            since = now
            sleep = MAX_SLEEP_SECONDS if upcoming is None else min(MAX_SLEEP_SECONDS, upcoming - now + _SLACK_SECONDS)
            self._wake.wait(max(sleep, 0.0))
            self._wake.clear()
