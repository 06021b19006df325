"""The tracker store over a :class:`~.db.Database`: where every tool runs, in one transaction, written once.

A tool is its catalog entry plus one function in :mod:`bee_tracker.handlers`, run by :mod:`bee_tracker.calls`
through :meth:`SqlStore.read` or :meth:`SqlStore.write` (the store knows nothing of the tools): a read in a read
transaction; a write in a write transaction with its idempotency key checked first (over the canonical
arguments), its history events and size caps checked by :meth:`~.ops.Write.finish`, and its answer remembered for
retries. Failures are :class:`bee_contracts.BeeError`; the database drivers' own
errors are mapped to it in one place per dialect (:mod:`.sqlite`, :mod:`.postgres`).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from bee_contracts import BeeError, ErrorCode
from bee_tracker.model import BUILTIN_STATUSES, BUILTIN_TYPES, now
from bee_tracker.store import claimlease, readiness, reads
from bee_tracker.store.db import Database, Tx
from bee_tracker.store.feed import Committed, Feed
from bee_tracker.store.ops import Read, Write

if TYPE_CHECKING:
    from bee_tracker.store import audit, sources

ArgsT = TypeVar("ArgsT", bound=Mapping[str, Any])
DataT = TypeVar("DataT", bound=Mapping[str, Any])

#: Arguments that do not change what a write does, left out of its idempotency fingerprint.
_NOT_FINGERPRINTED = frozenset({"idempotency_key", "actor"})


def replica_id() -> str:
    """This process's name among the trackers sharing a store: its host and process id (``--replica-id`` names it
    otherwise)."""
    return f"{socket.gethostname()}/{os.getpid()}"


def _fingerprint(tool: str, args: Mapping[str, Any]) -> str:
    canonical = {k: v for k, v in args.items() if k not in _NOT_FINGERPRINTED}
    text = json.dumps({"tool": tool, "args": canonical}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class SqlStore:
    """The Beads store. Tool functions run through :meth:`read` and :meth:`write` (:mod:`bee_tracker.calls` finds
    them); Beads data moves through :meth:`import_from` and :meth:`export_lines`."""

    def __init__(
        self,
        db: Database,
        *,
        prefix: str | None = None,
        clock: Callable[[], str] = now,
        claim_ttl: int | None = None,
        replica: str | None = None,
    ) -> None:
        self.db = db
        self._prefix = prefix
        #: The time of each call, as :func:`~bee_tracker.model.now` spells it (tests pass their own clock). Leases
        #: are judged by the database's clock instead (:mod:`.claimlease`).
        self._clock = clock
        #: The lease of a claim that asks for none (``--claim-ttl``), or None: such a claim never expires.
        self.claim_ttl = claim_ttl
        #: This process's name in the audit log and on the leases it grants (:func:`replica_id`).
        self.replica = replica or replica_id()
        #: What each committed write changed, for whoever listens (:mod:`.feed`).
        self.feed = Feed()

    # -- lifecycle -------------------------------------------------------------------------------------------

    def migrate(self) -> int:
        """Apply pending schema migrations, then build the maintained readiness if this code's rule version did not
        build it (a new store, a store from before migration 5, or a rule that changed); return the schema version."""
        version = self.db.migrate()
        with self.db.read() as tx:
            current = readiness.is_current(tx)
        if not current:
            with self.db.write() as tx:
                if not readiness.is_current(tx):  # another replica may have built it meanwhile
                    readiness.rebuild(tx)
        return version

    def rule(self) -> readiness.Rule:
        """The readiness rule this store is kept by."""
        with self.db.read() as tx:
            return readiness.load_rule(tx)

    def set_rule(self, rule: readiness.Rule) -> bool:
        """Keep the store by ``rule`` from now on, rebuilding what it decides in one transaction; return whether the
        rule changed."""
        with self.db.write() as tx:
            tx.lock_graph()
            if readiness.is_current(tx) and readiness.load_rule(tx) == rule:
                return False
            readiness.rebuild(tx, rule)
            return True

    def check(self) -> None:
        self.db.check()

    def close(self) -> None:
        self.db.close()

    def prefix(self, tx: Tx) -> str:
        """The id prefix: configured, else recorded by the first import, else ``bd``."""
        if self._prefix:
            return self._prefix
        found = tx.row("SELECT value FROM meta WHERE key = 'prefix'")
        return str(found[0]) if found else "bd"

    # -- tools -----------------------------------------------------------------------------------------------

    def read(self, function: Callable[[Read, ArgsT], DataT], args: ArgsT) -> DataT:
        """Run a read-only tool function in one read transaction."""
        with self.db.read() as tx:
            return function(Read(tx, now=self._clock()), args)

    def write(self, tool: str, actor: str, args: ArgsT, function: Callable[[Write, ArgsT], DataT]) -> DataT:
        """Run a writing tool function in one write transaction, for ``actor``, as ``tool`` in the history.

        With an ``idempotency_key`` in ``args``, a retry with the same key and arguments returns the first answer
        (with ``replayed: true``) instead of acting twice.

        Raises:
            BeeError: the function's failure (nothing is written then); ``conflict`` when the key was already used
                by this actor for a different request.
        """
        key = args.get("idempotency_key")
        fingerprint = _fingerprint(tool, args)
        with self.db.write() as tx:
            if key is not None:
                # A concurrent retry with the same key waits here, then finds the first answer and replays it.
                tx.lock_name(json.dumps(["idempotency", actor, key]))
                found = tx.row(
                    "SELECT tool, request_sha, response FROM idempotency WHERE actor = ? AND key = ?", [actor, key]
                )
                if found is not None:
                    if found[0] != tool or found[1] != fingerprint:
                        raise BeeError(
                            ErrorCode.CONFLICT,
                            f"idempotency key {key!r} was already used for a different {found[0]} request; "
                            "use a new key for a new operation",
                            details={"idempotency_key": key},
                        )
                    return cast(DataT, {**json.loads(found[2]), "replayed": True})
            op = Write(
                tx,
                tool=tool,
                actor=actor,
                now=self._clock(),
                prefix=self.prefix(tx),
                claim_ttl=self.claim_ttl,
                replica=self.replica,
                listened=self.feed.wanted,
            )
            data = function(op, args)
            op.finish()
            if key is not None:
                tx.run(
                    "INSERT INTO idempotency (actor, key, tool, request_sha, response, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [actor, key, tool, fingerprint, json.dumps(data), op.now],
                )
        if op.committed or op.leases_changed:
            self.feed.publish(Committed(tool, actor, self.replica, op.now, op.committed, op.leases_changed))
        return data

    # -- claims ----------------------------------------------------------------------------------------------------

    def clock(self) -> float:
        """The database's clock, in seconds since the epoch: what judges every claim's lease."""
        with self.db.read() as tx:
            return claimlease.now_of(tx)

    def claims(self, *, stale_only: bool = False) -> list[dict[str, Any]]:
        """Every claim with its holder and lease (only those whose lease expired, with ``stale_only``): see
        :func:`.claimlease.listing`."""
        with self.db.read() as tx:
            return claimlease.listing(tx, stale_only=stale_only)

    def next_lease_expiry(self) -> tuple[str, float, float] | None:
        """The live lease that expires first: ``(issue id, its expiry, the database's clock now)``, in seconds since
        the epoch; None when no lease is live. A host that tells listeners of expired claims sleeps until then (and
        asks again after each committed write that changed a lease: see :class:`.feed.Committed`)."""
        with self.db.read() as tx:
            return claimlease.next_expiry(tx)

    def lease_expiries(self, since: float | None) -> tuple[list[str], float | None, float]:
        """The issues whose lease ran out after ``since`` (epoch seconds; none when None), the next expiry to come
        (None: no live lease) and the database's clock now: what wakes listeners of a claim that ran out
        (:mod:`bee_tracker.listening.expiry`), judged by the database's clock like the leases themselves."""
        with self.db.read() as tx:
            return claimlease.expiries(tx, since)

    def written_elsewhere(self, after: int | None) -> tuple[list[str], int]:
        """The issues other processes' writes touched since history ``seq`` ``after``, and the ``seq`` to ask from
        next (:func:`.audit.written_elsewhere`): what the tracker's watcher of such writes tells its listeners
        (:mod:`bee_tracker.listening.foreign`)."""
        from bee_tracker.store import audit

        with self.db.read() as tx:
            return audit.written_elsewhere(tx, after, self.replica)

    # -- vocabulary ------------------------------------------------------------------------------------------

    def vocabulary(self) -> dict[str, list[str]]:
        with self.db.read() as tx:
            return {"statuses": reads.statuses(tx), "types": reads.types(tx)}

    def register(self, *, statuses: Sequence[str] = (), types: Sequence[str] = ()) -> None:
        """Allow custom statuses and types beyond the built-in ones (``tombstone`` is never a status here)."""
        from bee_tracker.store import transfer  # the import and export modules load only for them

        with self.db.write() as tx:
            transfer.register_vocabulary(tx, "custom_statuses", statuses, BUILTIN_STATUSES)
            transfer.register_vocabulary(tx, "custom_types", types, BUILTIN_TYPES)

    # -- Beads JSONL -----------------------------------------------------------------------------------------

    def import_lines(
        self, lines: Iterable[str | bytes], *, events: Iterable[str | bytes] | None = None
    ) -> dict[str, Any]:
        """Import the lines of a legacy Beads JSONL file, all or nothing (see :mod:`.legacy`), with the rows of an
        events file in bd backup's form for its issues' history (see :mod:`.audit`); return the report.

        Raises:
            BeeError: ``invalid_argument`` naming the first bad line; nothing is written then.
        """
        from bee_tracker.store import sources

        choice = sources.from_lines(lines)
        if events is not None:
            choice.events = sources.events_lines(events)
        return self.import_from(choice)

    def import_from(
        self, choice: sources.Choice, *, discard_changes: bool = False, allow_cycles: bool = False
    ) -> dict[str, Any]:
        """Import what ``choice`` names in one write transaction (see :mod:`.importing`); return the report.

        ``discard_changes`` lets it replace issues the team worked on since their import (listing what it
        discarded), ``allow_cycles`` lets it close dependency cycles (listing them).

        Raises:
            BeeError: ``invalid_argument`` naming the first bad line or a cycle; ``conflict`` naming the issues it
                would discard the work of; nothing is written then.
        """
        from bee_tracker.store import importing, transfer

        options = transfer.Options(discard_changes=discard_changes, allow_cycles=allow_cycles)
        with self.db.write() as tx:
            tx.lock_graph()  # readiness is brought up to date at the end; writers that read neighbours wait
            report = importing.run_import(tx, choice, configured_prefix=self._prefix, options=options)
        # A bulk load changes the data's shape: without fresh statistics the planner can pick a full sort for ready.
        self.db.analyze()
        return report

    def export_lines(self) -> list[str]:
        """Every line of the export (see :mod:`.export`), in memory: for tests and small stores."""
        return list(self.iter_export())

    def iter_export(self) -> Iterator[str]:
        """The lines of the export as they are read, in one read transaction held until the last is taken."""
        from bee_tracker.store import export

        with self.db.read() as tx:
            yield from export.export_lines(tx)

    # -- the audit log -----------------------------------------------------------------------------------------

    def log(self, filters: audit.Filters, *, limit: int) -> list[dict[str, Any]]:
        """The newest ``limit`` entries of the audit log that match ``filters``, oldest first (:mod:`.audit`)."""
        from bee_tracker.store import audit

        with self.db.read() as tx:
            return audit.read(tx, filters, limit=limit)

    def iter_events(self) -> Iterator[str]:
        """The whole audit log as the lines of bd backup's ``events.jsonl`` (:func:`.audit.bd_rows`), in one read
        transaction held until the last is taken."""
        from bee_tracker.store import audit

        with self.db.read() as tx:
            for row in audit.bd_rows(tx):
                yield json.dumps(row, ensure_ascii=False, separators=(",", ":"))
