"""`bee bd create`, `update`, `close` and `reopen`: bd's writes, made by the tracker's tools.

Each write is the tool the MCP clients call, with its checks (claims, blockers, sizes) and its history: ``create``,
``update`` (``--claim`` is ``claim``), ``complete`` for ``close`` and ``update`` back to open for ``reopen``. What a
bd flag asks beyond one tool (an assignee or a non-blocking link on a new issue) is a second call after the first,
every id it names checked before anything is written. Answers are bd's (``cmd/bd/create.go``, ``update.go``,
``close.go``, ``reopen.go``): ``create --json`` the new issue as an object, the others a list of issues.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click

from bee_contracts import BeeError, invalid
from bee_tracker.bd import human, shapes
from bee_tracker.bd.common import PRIORITY, Unsupported, emit, issue_type, json_flag, labels, note, options, tracker
from bee_tracker.bd.human import say
from bee_tracker.model import PARENT_CHILD

#: bd's well-known dependency types, the ones ``create --deps`` accepts (``types.WellKnownDependencyTypes``).
WELL_KNOWN = (
    "blocks",
    "parent-child",
    "conditional-blocks",
    "waits-for",
    "related",
    "discovered-from",
    "replies-to",
    "relates-to",
    "duplicates",
    "supersedes",
    "authored-by",
    "assigned-to",
    "approved-by",
    "attests",
    "tracks",
    "until",
    "caused-by",
    "validates",
    "delegated-from",
)
#: The most of a text file read for a field (the tools refuse more than 64 KiB of one).
MAX_FIELD_BYTES = 65536


def _read_text(path: str, flag: str) -> str:
    """A field's text from a file the user named, or standard input for ``-``."""
    if path == "-":
        return sys.stdin.read(MAX_FIELD_BYTES + 1)
    try:
        with Path(path).open("rb") as handle:
            return handle.read(MAX_FIELD_BYTES + 1).decode("utf-8", errors="replace")
    except OSError as exc:
        raise invalid(f"{flag}: cannot read {path} ({exc.strerror or exc})") from None


def _description(
    description: str | None, body: str | None, message: str | None, body_file: str | None, stdin: bool
) -> str | None:
    """The description from bd's several flags for it: a file (or stdin) first, then the text flags."""
    given = [value for value in (description, body, message) if value is not None]
    if stdin or body_file:
        if given:
            raise invalid("give the description once: a file (--body-file, --stdin) or text (--description), not both")
        return _read_text("-" if stdin else str(body_file), "--body-file")
    return given[0] if given else None


def _whole_issue(issue_id: str) -> dict[str, Any]:
    """The issue as ``get`` has it now (its record)."""
    record: dict[str, Any] = tracker().call("get", {"id": issue_id, "comments_limit": 0})["issue"]
    return record


# -- create --------------------------------------------------------------------------------------------------------


def _parsed_deps(specs: Sequence[str]) -> list[tuple[str, str, bool]]:
    """``--deps`` as (type, other issue, whether the other issue depends on the new one)."""
    parsed = []
    for spec in (part.strip() for value in specs for part in value.split(",")):
        if not spec:
            continue
        kind, _, target = spec.rpartition(":") if ":" in spec else ("blocks", "", spec)
        kind, target = kind.strip(), target.strip()
        swap = kind == "blocks" and ":" in spec  # "blocks:X": the new issue blocks X
        kind = "blocks" if kind in ("depends-on", "blocked-by") else kind
        if kind not in WELL_KNOWN or not target:
            raise invalid(
                f"invalid dependency {spec!r}: use ID or TYPE:ID with TYPE one of {', '.join(sorted(WELL_KNOWN))}"
            )
        parsed.append((kind, target, swap))
    return parsed


@click.command("create")
@click.argument("title_arg", metavar="[TITLE]", required=False)
@click.option("--title", default=None, help="Issue title (alternative to positional argument).")
@click.option(
    "-t",
    "--type",
    "kind",
    default="task",
    show_default=True,
    help="Issue type (bug|feature|task|epic|chore|decision; aliases feat, enhancement, dec, adr).",
)
@click.option(
    "-p", "--priority", type=PRIORITY, default="2", show_default=True, help="Priority (0-4 or P0-P4, 0 is highest)."
)
@click.option("-d", "--description", default=None, help="Issue description.")
@click.option("--body", default=None, hidden=True)
@click.option("-m", "--message", default=None, hidden=True)
@click.option(
    "--body-file", "--description-file", "body_file", default=None, help="Read description from file (use - for stdin)."
)
@click.option("--stdin", is_flag=True, help="Read description from stdin (alias for --body-file -).")
@click.option("--design", default=None, help="Design notes.")
@click.option("--acceptance", default=None, help="Acceptance criteria.")
@click.option("--notes", default=None, help="Additional notes.")
@click.option("--external-ref", default=None, help="External reference (e.g. 'gh-9', 'jira-ABC').")
@click.option("-a", "--assignee", default=None, help="Assignee.")
@click.option("-l", "--labels", "--label", "label", multiple=True, help="Labels (comma-separated or repeated).")
@click.option("--parent", default=None, help="Parent issue ID for hierarchical child (e.g. 'bd-a3f8e9').")
@click.option("--no-inherit-labels", is_flag=True, help="Don't inherit labels from parent issue.")
@click.option(
    "--deps", multiple=True, help="Dependencies as 'type:id' or 'id' (e.g. 'discovered-from:bd-20,blocks:bd-15')."
)
@click.option("--silent", is_flag=True, help="Output only the issue ID (for scripting).")
@click.option("--id", "explicit_id", default=None, help="Explicit issue ID (not supported: the tracker names issues).")
@click.option("--dry-run", is_flag=True, help="Preview what would be created (not supported).")
@json_flag
def create(
    *,
    title_arg: str | None,
    title: str | None,
    kind: str,
    priority: int,
    description: str | None,
    body: str | None,
    message: str | None,
    body_file: str | None,
    stdin: bool,
    design: str | None,
    acceptance: str | None,
    notes: str | None,
    external_ref: str | None,
    assignee: str | None,
    label: tuple[str, ...],
    parent: str | None,
    no_inherit_labels: bool,
    deps: tuple[str, ...],
    silent: bool,
    explicit_id: str | None,
    dry_run: bool,
) -> None:
    """Create a new issue."""
    if explicit_id is not None:
        raise Unsupported("bd create --id", "the tracker names every issue itself (prefix-hash, parent.N for a child)")
    if dry_run:
        raise Unsupported(
            "bd create --dry-run", "run it without --dry-run, or look for duplicates first with `bd search`"
        )
    chosen = _title(title_arg, title)
    links = _parsed_deps(deps)
    args: dict[str, Any] = {"title": chosen, "priority": priority, "issue_type": issue_type(kind) or "task"}
    text = _description(description, body, message, body_file, stdin)
    for key, value in (
        ("description", text),
        ("design", design),
        ("acceptance_criteria", acceptance),
        ("notes", notes),
        ("external_ref", external_ref),
    ):
        if value is not None:
            args[key] = value
    current = tracker()
    wanted = labels(label)
    if parent is not None:
        args["parent"] = parent
        if not no_inherit_labels:  # as bd (GH#2100): the parent's labels too
            wanted += [lab for lab in _whole_issue(parent).get("labels") or [] if lab not in wanted]
    for _, target, _ in links:  # every id it names exists before anything is written
        _whole_issue(target)
    if wanted:
        args["labels"] = wanted
    prerequisites = list(dict.fromkeys(target for kind_, target, swap in links if kind_ == "blocks" and not swap))
    if prerequisites:
        args["prerequisites"] = prerequisites
    created = current.call("create", args)
    issue_id = str(created["id"])
    _after_create(issue_id, assignee, [link for link in links if not (link[0] == "blocks" and not link[2])])
    record = _whole_issue(issue_id)
    if options().as_json:
        emit(shapes.issue(record, labels=False))
    elif silent:
        say(issue_id)
    else:
        say(f"{human.passed('✓')} Created issue: {human.feedback(issue_id, chosen)}")
        say(f"  Priority: P{record.get('priority', priority)}")
        say(f"  Status: {record.get('status', 'open')}")


def _title(positional: str | None, flag: str | None) -> str:
    if positional is not None and flag is not None and positional != flag:
        raise invalid(
            f"cannot specify different titles as both positional argument and --title: {positional!r}, {flag!r}"
        )
    chosen = positional if positional is not None else flag
    if not chosen:
        raise click.UsageError("title required: bd create TITLE (or --title TITLE)")
    if positional is not None and positional.startswith("-"):
        raise invalid(
            f"title {positional!r} looks like a flag (starts with '-'); to use it anyway, pass --title={positional!r}"
        )
    return chosen


def _after_create(issue_id: str, assignee: str | None, links: list[tuple[str, str, bool]]) -> None:
    """The writes bd's flags ask beyond ``create``: the assignee, and links other than prerequisites. The issue
    exists by now; a failure here says so."""
    current = tracker()
    try:
        if assignee:
            current.call("update", {"id": issue_id, "assignee": assignee})
        for kind, target, swap in links:
            source, other = (target, issue_id) if swap else (issue_id, target)
            current.call("link", {"id": source, "target": other, "type": kind})
    except BeeError as exc:
        raise BeeError(exc.code, f"created {issue_id}, but then: {exc.message}", details=exc.details) from None


# -- update --------------------------------------------------------------------------------------------------------


def _defer(value: str) -> str | None:
    """``--defer``: empty clears it; RFC 3339, a date, or +Nh / +Nd / +Nw from now."""
    text = value.strip()
    if not text:
        return None
    now = datetime.now(UTC)
    units = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
    if text.startswith("+") and text[1:-1].isdigit() and text[-1] in units:
        return (now + timedelta(**{units[text[-1]]: int(text[1:-1])})).strftime("%Y-%m-%dT%H:%M:%SZ")
    if len(text) == 10 and text[4] == "-" and text[7] == "-":
        return f"{text}T00:00:00Z"
    return text  # the tool checks RFC 3339 and says what it wants


def _update_args(**given: Any) -> dict[str, Any]:
    """The update tool's arguments from bd's update flags that were given."""
    args: dict[str, Any] = {}
    renames = {
        "kind": "issue_type",
        "acceptance": "acceptance_criteria",
        "add_label": "add_labels",
        "remove_label": "remove_labels",
        "set_labels": "labels",
    }
    for name, value in given.items():
        if value is None or value == ():
            continue
        key = renames.get(name, name)
        if key in ("add_labels", "remove_labels", "labels"):
            args[key] = labels(value)
        elif key == "issue_type":
            args[key] = issue_type(value)
        elif key == "defer_until":
            args[key] = _defer(value)
        else:
            args[key] = value
    return args


@click.command("update")
@click.argument("ids", nargs=-1)
@click.option("-s", "--status", default=None, help="New status (open, in_progress, blocked, deferred, closed, …).")
@click.option("-p", "--priority", type=PRIORITY, default=None, help="New priority (0-4 or P0-P4).")
@click.option("--title", default=None, help="New title.")
@click.option("-t", "--type", "kind", default=None, help="New type (bug|feature|task|epic|chore|decision).")
@click.option("-a", "--assignee", default=None, help="Assignee (empty to clear).")
@click.option("-d", "--description", default=None, help="Issue description.")
@click.option("--body", default=None, hidden=True)
@click.option("-m", "--message", default=None, hidden=True)
@click.option(
    "--body-file", "--description-file", "body_file", default=None, help="Read description from file (use - for stdin)."
)
@click.option("--stdin", is_flag=True, help="Read description from stdin.")
@click.option("--design", default=None, help="Design notes.")
@click.option("--acceptance", "--acceptance-criteria", "acceptance", default=None, help="Acceptance criteria.")
@click.option("--notes", default=None, help="Additional notes.")
@click.option("--append-notes", default=None, help="Append to existing notes (with newline separator).")
@click.option("--external-ref", default=None, help="External reference.")
@click.option("--add-label", multiple=True, help="Add labels (repeatable).")
@click.option("--remove-label", multiple=True, help="Remove labels (repeatable).")
@click.option("--set-labels", multiple=True, help="Set labels, replacing all existing (repeatable).")
@click.option("--parent", default=None, help="New parent issue ID (empty string to remove the parent).")
@click.option("--defer", default=None, help="Defer until (RFC 3339, YYYY-MM-DD, +6h, +2d; empty to clear).")
@click.option(
    "--claim",
    is_flag=True,
    help="Atomically claim the issue (sets assignee to you, status to in_progress; idempotent if already claimed by "
    "you).",
)
@json_flag
def update(
    *,
    ids: tuple[str, ...],
    claim: bool,
    parent: str | None,
    append_notes: str | None,
    description: str | None,
    body: str | None,
    message: str | None,
    body_file: str | None,
    stdin: bool,
    **fields: Any,
) -> None:
    """Update one or more issues. Bee keeps no last-touched issue: name the issues."""
    if not ids:
        raise click.UsageError("give the issue ID to update (Bee keeps no last-touched issue)")
    text = _description(description, body, message, body_file, stdin)
    args = _update_args(description=text, defer_until=fields.pop("defer"), **fields)
    if not args and not claim and parent is None and append_notes is None:
        say("No updates specified")
        return
    updated = []
    for issue_id in ids:
        try:
            updated.append(_update_one(issue_id, dict(args), claim=claim, parent=parent, append_notes=append_notes))
        except BeeError as exc:
            note(f"Error updating {issue_id}: {exc.message}")
            continue
        if not options().as_json:
            say(f"{human.passed('✓')} Updated issue: {human.feedback(issue_id, updated[-1].get('title'))}")
    if options().as_json and updated:
        emit([shapes.issue(record) for record in updated])
    if not updated:
        raise click.exceptions.Exit(1)


def _update_one(
    issue_id: str, args: dict[str, Any], *, claim: bool, parent: str | None, append_notes: str | None
) -> dict[str, Any]:
    """One issue's update: the claim, then its fields and labels in one write, then its parent; its record after."""
    current = tracker()
    if claim:
        current.call("claim", {"id": issue_id})
    if append_notes is not None:
        existing = str(_whole_issue(issue_id).get("notes") or "")
        args["notes"] = f"{existing}\n{append_notes}" if existing else append_notes
    if args.get("status") == "closed":
        del args["status"]
        current.call("complete", {"id": issue_id, "summary": "Closed"})
    if args:
        current.call("update", {"id": issue_id, **args})
    if parent is not None:
        _reparent(issue_id, parent)
    return _whole_issue(issue_id)


def _reparent(issue_id: str, parent: str) -> None:
    """Move the issue under ``parent`` (none for an empty one): its old parent link removed, the new one added."""
    current = tracker()
    if parent:
        _whole_issue(parent)
    for dependency in _whole_issue(issue_id).get("dependencies") or []:
        if dependency.get("type") == PARENT_CHILD:
            current.call(
                "link",
                {"id": issue_id, "target": dependency["depends_on_id"], "type": PARENT_CHILD, "action": "remove"},
            )
    if parent:
        current.call("link", {"id": issue_id, "target": parent, "type": PARENT_CHILD})


# -- close ---------------------------------------------------------------------------------------------------------


@click.command("close")
@click.argument("ids", nargs=-1)
@click.option("-r", "--reason", default=None, help="Reason for closing.")
@click.option("--resolution", default=None, hidden=True)
@click.option("-m", "--message", default=None, hidden=True)
@click.option("--comment", default=None, hidden=True)
@click.option("--reason-file", default=None, help="Read close reason from file (use - for stdin).")
@click.option(
    "-f", "--force", is_flag=True, help="Force close past blockers (not supported: Bee never closes past them)."
)
@click.option(
    "--claim-next",
    is_flag=True,
    help="Automatically claim the next highest priority available issue (in the same transaction as the last close).",
)
@click.option("--suggest-next", is_flag=True, help="Show newly unblocked issues after closing (not supported).")
@click.option("--continue", "continue_", is_flag=True, help="Auto-advance to next step in molecule (not supported).")
@json_flag
@click.pass_context
def close(
    ctx: click.Context,
    *,
    ids: tuple[str, ...],
    reason: str | None,
    resolution: str | None,
    message: str | None,
    comment: str | None,
    reason_file: str | None,
    force: bool,
    claim_next: bool,
    suggest_next: bool,
    continue_: bool,
) -> None:
    """Close one or more issues: each must be claimed by you or by nobody, with no open blocker, child or gate."""
    _refuse_close_flags(force=force, suggest_next=suggest_next, continue_=continue_)
    names = list(ids)
    given = next((value for value in (reason, resolution, message, comment) if value), None)
    if reason_file is not None:
        if given:
            raise invalid("cannot specify both --reason-file and --reason/--resolution/--message/--comment")
        given = _read_text(reason_file, "--reason-file")
        if not given.strip():
            raise invalid(f"--reason-file {reason_file!r} is empty; close reason is required")
    if given is None and ctx.info_name == "done" and len(names) >= 2:  # bd done ID "message"
        given = names.pop()
    if not names:
        raise click.UsageError("give the issue ID to close (Bee keeps no last-touched issue)")
    summary = given or "Closed"
    closed: list[dict[str, Any]] = []
    following: dict[str, Any] | None = None
    for index, issue_id in enumerate(names):
        last = index == len(names) - 1
        try:  # the last close claims the next issue in its own transaction, as the tool's claim_next does
            done = tracker().call("complete", {"id": issue_id, "summary": summary, "claim_next": claim_next and last})
            record = _whole_issue(issue_id)
        except BeeError as exc:
            note(f"cannot close {issue_id}: {exc.message}")
            continue
        following = done.get("next")
        closed.append(record)
        if not options().as_json:
            say(f"{human.passed('✓')} Closed {human.feedback(issue_id, record.get('title'))}: {summary}")
    if not closed:
        raise click.exceptions.Exit(1)
    claimed = _claimed_next(following, closed_last=following is not None) if claim_next else None
    if options().as_json:
        listed = [shapes.issue(record) for record in closed]
        emit({"claimed": shapes.issue(claimed), "closed": listed} if claimed is not None else listed)


def _claimed_next(following: dict[str, Any] | None, *, closed_last: bool) -> dict[str, Any] | None:
    """The issue ``close --claim-next`` claimed, as ``get`` has it now (None when nothing was ready). When the last
    issue named could not be closed, the next is claimed by itself (``claim`` without an id) after the others."""
    if not closed_last:
        following = tracker().call("claim", {})
    if following is None or not following.get("claimed"):
        if not options().as_json:
            say(f"\n{human.warned('✨')} No ready issues available to claim.")
        return None
    record = _whole_issue(str(following["id"]))
    if not options().as_json:
        title = human.feedback(str(record["id"]), record.get("title"))
        say(f"{human.passed('✓')} Auto-claimed next ready issue: {title} (P{record.get('priority', 2)})")
    return record


def _refuse_close_flags(*, force: bool, suggest_next: bool, continue_: bool) -> None:
    if force:
        raise Unsupported(
            "bd close --force", "the tracker never closes an issue past its blockers, open children or gates"
        )
    if suggest_next:
        raise Unsupported("bd close --suggest-next", "run `bd ready` after closing")
    if continue_:
        raise Unsupported("bd close --continue", "Bee has no molecules")


# -- reopen --------------------------------------------------------------------------------------------------------


@click.command("reopen")
@click.argument("ids", nargs=-1, required=True)
@click.option("-r", "--reason", default=None, help="Reason for reopening (left as a comment).")
@json_flag
def reopen(ids: tuple[str, ...], reason: str | None) -> None:
    """Reopen closed issues: status open, closed_at and close_reason cleared."""
    current = tracker()
    reopened = []
    failed = False
    for issue_id in ids:
        try:
            if _whole_issue(issue_id).get("status") == "open":
                note(f"{issue_id} is already open")
                continue
            current.call("update", {"id": issue_id, "status": "open"})
            if reason:
                current.call("add_note", {"id": issue_id, "text": f"Reopened: {reason}"})
            reopened.append(_whole_issue(issue_id))
        except BeeError as exc:
            note(f"Error reopening {issue_id}: {exc.message}")
            failed = True
            continue
        if not options().as_json:
            say(f"↻ Reopened {issue_id}" + (f": {reason}" if reason else ""))
    if options().as_json and reopened:
        emit([shapes.issue(record) for record in reopened])
    if failed:
        raise click.exceptions.Exit(1)
