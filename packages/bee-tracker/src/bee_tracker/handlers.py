"""The tracker's tool handlers, one function per tool, named after it.

Each takes the store, the authenticated actor and the validated arguments, and returns ``{"data": ...}``; store
exceptions carry their contracts code. Actor fields in arguments do not exist: the actor comes only from the token.
"""

from __future__ import annotations

from typing import Any

from bee_tracker.store import Invalid, SqlStore

_FIELDS = ("title", "description", "design", "acceptance_criteria", "notes", "priority", "issue_type", "external_ref")
_UPDATABLE = (*_FIELDS, "status", "assignee", "defer_until")


def _data(value: dict[str, Any]) -> dict[str, Any]:
    return {"data": value}


def ready(store: SqlStore, actor: str, args: dict[str, Any]) -> dict[str, Any]:
    return _data(store.ready(priority=args.get("priority"), labels=args.get("labels", []), limit=args["limit"]))


def search(store: SqlStore, actor: str, args: dict[str, Any]) -> dict[str, Any]:
    return _data(
        store.search(
            text=args.get("query") or None,
            statuses=args.get("status", []),
            assignee=args.get("assignee"),
            labels=args.get("labels", []),
            issue_type=args.get("issue_type"),
            limit=args["limit"],
            offset=args["offset"],
        )
    )


def get(store: SqlStore, actor: str, args: dict[str, Any]) -> dict[str, Any]:
    return _data(store.get(args["id"], comments_last=args["comments_limit"]))


def create(store: SqlStore, actor: str, args: dict[str, Any]) -> dict[str, Any]:
    fields = {name: args[name] for name in _FIELDS if name in args}
    return _data(
        store.create(
            actor,
            fields,
            labels=args.get("labels", []),
            parent=args.get("parent"),
            prerequisites=args.get("prerequisites", []),
            idempotency_key=args.get("idempotency_key"),
        )
    )


def update(store: SqlStore, actor: str, args: dict[str, Any]) -> dict[str, Any]:
    changes = {name: args[name] for name in _UPDATABLE if name in args}
    if not changes and not any(k in args for k in ("labels", "add_labels", "remove_labels")):
        raise Invalid(
            f"nothing to update; give at least one of {', '.join(_UPDATABLE)}, labels, add_labels, remove_labels"
        )
    return _data(
        store.update(
            actor,
            args["id"],
            changes,
            labels=args.get("labels"),
            add_labels=args.get("add_labels", []),
            remove_labels=args.get("remove_labels", []),
            expected_revision=args.get("expected_revision"),
            idempotency_key=args.get("idempotency_key"),
        )
    )


def claim(store: SqlStore, actor: str, args: dict[str, Any]) -> dict[str, Any]:
    return _data(store.claim(actor, args["id"], idempotency_key=args.get("idempotency_key")))


def release(store: SqlStore, actor: str, args: dict[str, Any]) -> dict[str, Any]:
    return _data(
        store.release(
            actor,
            args["id"],
            reason=args.get("reason") or None,
            expected_revision=args.get("expected_revision"),
            idempotency_key=args.get("idempotency_key"),
        )
    )


def add_note(store: SqlStore, actor: str, args: dict[str, Any]) -> dict[str, Any]:
    return _data(store.add_note(actor, args["id"], args["text"], idempotency_key=args.get("idempotency_key")))


def link(store: SqlStore, actor: str, args: dict[str, Any]) -> dict[str, Any]:
    return _data(
        store.link(
            actor,
            args["id"],
            args["target"],
            args["type"],
            remove=args["action"] == "remove",
            idempotency_key=args.get("idempotency_key"),
        )
    )


def complete(store: SqlStore, actor: str, args: dict[str, Any]) -> dict[str, Any]:
    return _data(
        store.complete(
            actor,
            args["id"],
            summary=args.get("summary") or None,
            evidence=args.get("evidence") or None,
            expected_revision=args.get("expected_revision"),
            idempotency_key=args.get("idempotency_key"),
        )
    )


def handoff(store: SqlStore, actor: str, args: dict[str, Any]) -> dict[str, Any]:
    if not any(args.get(k) for k in ("done", "remaining", "next")):
        raise Invalid("a handoff needs at least one of done, remaining, next")
    return _data(
        store.handoff(
            actor,
            args["id"],
            done=args.get("done"),
            remaining=args.get("remaining"),
            next_step=args.get("next"),
            release=args["release"],
            expected_revision=args.get("expected_revision"),
            idempotency_key=args.get("idempotency_key"),
        )
    )


#: Tool name -> handler, in catalog order.
HANDLERS = {
    f.__name__: f for f in (add_note, claim, complete, create, get, handoff, link, ready, release, search, update)
}
