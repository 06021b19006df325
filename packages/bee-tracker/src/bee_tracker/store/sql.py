"""The tracker store over a :class:`~.db.Database`: every operation one transaction, writes idempotent by key."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from bee_tracker.model import now
from bee_tracker.store import reads, transfer, writes
from bee_tracker.store.db import Database, Tx
from bee_tracker.store.errors import Conflict
from bee_tracker.store.records import load_issue

T = TypeVar("T")

#: How many comments ``get`` returns by default (the newest; ``comment_count`` gives the total).
DEFAULT_COMMENTS = 50


def _request_sha(tool: str, request: Mapping[str, Any]) -> str:
    canonical = json.dumps({"tool": tool, "request": request}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class SqlStore:
    """The Beads store. Methods return plain JSON-ready dicts and raise :mod:`.errors` exceptions."""

    def __init__(self, db: Database, *, prefix: str | None = None) -> None:
        self.db = db
        self._prefix = prefix

    # -- lifecycle -------------------------------------------------------------------------------------------

    def migrate(self) -> int:
        return self.db.migrate()

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

    # -- reads -----------------------------------------------------------------------------------------------

    def ready(self, *, priority: int | None = None, labels: Sequence[str] = (), limit: int = 20) -> dict[str, Any]:
        with self.db.read() as tx:
            return reads.ready(tx, now_epoch=time.time(), priority=priority, labels=labels, limit=limit)

    def search(
        self,
        *,
        text: str | None = None,
        statuses: Sequence[str] = (),
        assignee: str | None = None,
        labels: Sequence[str] = (),
        issue_type: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> dict[str, Any]:
        with self.db.read() as tx:
            return reads.search(
                tx,
                text=text,
                statuses=statuses,
                assignee=assignee,
                labels=labels,
                issue_type=issue_type,
                limit=limit,
                offset=offset,
            )

    def get(self, issue_id: str, *, comments_last: int = DEFAULT_COMMENTS) -> dict[str, Any]:
        with self.db.read() as tx:
            return reads.get(tx, issue_id, comments_last=comments_last)

    def vocabulary(self) -> dict[str, list[str]]:
        with self.db.read() as tx:
            return {"statuses": reads.statuses(tx), "types": reads.types(tx)}

    # -- writes ----------------------------------------------------------------------------------------------

    def _write(
        self,
        tool: str,
        actor: str,
        key: str | None,
        request: Mapping[str, Any],
        operation: Callable[[Tx], dict[str, Any]],
    ) -> dict[str, Any]:
        """Run ``operation`` in one write transaction; with an idempotency key, a retry returns the first outcome.

        Raises:
            Conflict: the key was already used by this actor for a different request.
        """
        sha = _request_sha(tool, request)
        with self.db.write() as tx:
            if key is not None:
                found = tx.row(
                    "SELECT tool, request_sha, response FROM idempotency WHERE actor = ? AND key = ?", [actor, key]
                )
                if found is not None:
                    if found[0] != tool or found[1] != sha:
                        raise Conflict(
                            f"idempotency key {key!r} was already used for a different {found[0]} request; "
                            "use a new key for a new operation",
                            details={"idempotency_key": key},
                        )
                    replay: dict[str, Any] = json.loads(found[2])
                    replay["replayed"] = True
                    return replay
            result = operation(tx)
            if key is not None:
                tx.run(
                    "INSERT INTO idempotency (actor, key, tool, request_sha, response, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [actor, key, tool, sha, json.dumps(result), now()],
                )
            return result

    def _state(self, tx: Tx, issue_id: str) -> dict[str, Any]:
        issue = load_issue(tx, issue_id)
        assert issue is not None  # written in this very transaction
        return {
            "id": issue_id,
            "status": issue.fields["status"],
            "assignee": issue.fields["assignee"],
            **issue.revisions(),
        }

    def create(
        self,
        actor: str,
        fields: Mapping[str, Any],
        *,
        labels: Sequence[str] = (),
        parent: str | None = None,
        prerequisites: Sequence[str] = (),
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        request = {
            "fields": dict(fields),
            "labels": list(labels),
            "parent": parent,
            "prerequisites": list(prerequisites),
        }

        def operation(tx: Tx) -> dict[str, Any]:
            issue_id = writes.create(
                tx, actor, self.prefix(tx), fields, labels=labels, parent=parent, prerequisites=prerequisites
            )
            return {"created": True, **self._state(tx, issue_id)}

        return self._write("create", actor, idempotency_key, request, operation)

    def update(
        self,
        actor: str,
        issue_id: str,
        changes: Mapping[str, Any],
        *,
        labels: Sequence[str] | None = None,
        add_labels: Sequence[str] = (),
        remove_labels: Sequence[str] = (),
        expected_revision: int | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        request = {
            "id": issue_id,
            "changes": dict(changes),
            "labels": labels,
            "add": list(add_labels),
            "remove": list(remove_labels),
            "expected_revision": expected_revision,
        }

        def operation(tx: Tx) -> dict[str, Any]:
            writes.update(
                tx,
                actor,
                issue_id,
                changes,
                labels=labels,
                add_labels=add_labels,
                remove_labels=remove_labels,
                expected_revision=expected_revision,
            )
            return {"updated": True, **self._state(tx, issue_id)}

        return self._write("update", actor, idempotency_key, request, operation)

    def claim(self, actor: str, issue_id: str, *, idempotency_key: str | None = None) -> dict[str, Any]:
        def operation(tx: Tx) -> dict[str, Any]:
            changed = writes.claim(tx, actor, issue_id)
            return {"claimed": True, "already_held": not changed, **self._state(tx, issue_id)}

        return self._write("claim", actor, idempotency_key, {"id": issue_id}, operation)

    def release(
        self,
        actor: str,
        issue_id: str,
        *,
        reason: str | None = None,
        expected_revision: int | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        def operation(tx: Tx) -> dict[str, Any]:
            writes.release(tx, actor, issue_id, reason, expected_revision)
            return {"released": True, **self._state(tx, issue_id)}

        request = {"id": issue_id, "reason": reason, "expected_revision": expected_revision}
        return self._write("release", actor, idempotency_key, request, operation)

    def add_note(self, actor: str, issue_id: str, text: str, *, idempotency_key: str | None = None) -> dict[str, Any]:
        def operation(tx: Tx) -> dict[str, Any]:
            comment = writes.add_note(tx, actor, issue_id, text)
            return {"comment": comment, **self._state(tx, issue_id)}

        return self._write("add_note", actor, idempotency_key, {"id": issue_id, "text": text}, operation)

    def link(
        self,
        actor: str,
        issue_id: str,
        target: str,
        kind: str = "blocks",
        *,
        remove: bool = False,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        def operation(tx: Tx) -> dict[str, Any]:
            changed = writes.link(tx, actor, issue_id, target, kind, remove=remove)
            return {
                "changed": changed,
                "action": "remove" if remove else "add",
                "target": target,
                "type": kind,
                **self._state(tx, issue_id),
            }

        request = {"id": issue_id, "target": target, "type": kind, "remove": remove}
        return self._write("link", actor, idempotency_key, request, operation)

    def complete(
        self,
        actor: str,
        issue_id: str,
        *,
        summary: str | None = None,
        evidence: str | None = None,
        expected_revision: int | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        def operation(tx: Tx) -> dict[str, Any]:
            writes.complete(
                tx, actor, issue_id, summary=summary, evidence=evidence, expected_revision=expected_revision
            )
            return {"completed": True, **self._state(tx, issue_id)}

        request = {"id": issue_id, "summary": summary, "evidence": evidence, "expected_revision": expected_revision}
        return self._write("complete", actor, idempotency_key, request, operation)

    def handoff(
        self,
        actor: str,
        issue_id: str,
        *,
        done: str | None,
        remaining: str | None,
        next_step: str | None,
        release: bool = False,
        expected_revision: int | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        note = {"done": done, "remaining": remaining, "next": next_step}

        def operation(tx: Tx) -> dict[str, Any]:
            comment = writes.handoff(
                tx, actor, issue_id, note, release_claim=release, expected_revision=expected_revision
            )
            return {"comment": comment, "released": release, **self._state(tx, issue_id)}

        request = {"id": issue_id, **note, "release": release, "expected_revision": expected_revision}
        return self._write("handoff", actor, idempotency_key, request, operation)

    # -- Beads JSONL -----------------------------------------------------------------------------------------

    def import_lines(self, lines: Iterable[str]) -> dict[str, Any]:
        """Import Beads JSONL, all or nothing.

        Raises:
            Invalid: a malformed line (named), before anything is written.
        """
        parsed = transfer.parse_lines(lines)
        with self.db.write() as tx:
            if self._prefix is None and tx.row("SELECT value FROM meta WHERE key = 'prefix'") is None:
                prefix = _common_prefix(record.get("id") for _, _, record in parsed)
                if prefix:
                    tx.run("INSERT INTO meta (key, value) VALUES ('prefix', ?)", [prefix])
            report = transfer.import_records(tx, parsed, self.prefix(tx)).as_dict()
        # A bulk load changes the data's shape: without fresh statistics the planner can pick a full sort for ready.
        self.db.analyze()
        return report

    def export_lines(self) -> list[str]:
        with self.db.read() as tx:
            return list(transfer.export_lines(tx))

    def register(self, *, statuses: Sequence[str] = (), types: Sequence[str] = ()) -> None:
        """Allow custom statuses and types beyond the built-in ones."""
        from bee_tracker.model import BUILTIN_STATUSES, BUILTIN_TYPES

        with self.db.write() as tx:
            writes.register_vocabulary(tx, "custom_statuses", statuses, BUILTIN_STATUSES)
            writes.register_vocabulary(tx, "custom_types", types, BUILTIN_TYPES)


def _common_prefix(ids: Iterable[Any]) -> str | None:
    counts: dict[str, int] = {}
    for issue_id in ids:
        if isinstance(issue_id, str) and "-" in issue_id:
            stem = issue_id.split(".", 1)[0]
            counts[stem.rsplit("-", 1)[0]] = counts.get(stem.rsplit("-", 1)[0], 0) + 1
    return max(counts, key=lambda k: counts[k]) if counts else None
