"""`bee bd show` and `bee bd stats` (`status`): one issue whole with its neighbours, and the counts of the tracker.

``show --json`` is bd's list of ``IssueDetails`` (``cmd/bd/show.go``): each issue with its labels, its dependencies
and dependents as whole issues with the type of their link, its comments, its parent and an epic's progress.
``stats --json`` is bd's ``StatusOutput`` (``cmd/bd/status.go``) written as an object: ``summary`` with the
``Statistics`` counts, keys sorted, and ``schema_version``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from bee_contracts import BeeError, ErrorCode
from bee_tracker.bd import gojson, human, shapes, views
from bee_tracker.bd.common import Unsupported, emit, json_flag, note, options, tracker
from bee_tracker.bd.human import say
from bee_tracker.bd.views import Whole
from bee_tracker.model import BLOCKING_TYPES
from bee_tracker.progress import counted, progress

# -- show ----------------------------------------------------------------------------------------------------------


@click.command("show")
@click.argument("ids", nargs=-1)
@click.option("--id", "more_ids", multiple=True, help="Issue ID (use for IDs that look like flags, e.g. --id=gt--xyz).")
@click.option("--short", is_flag=True, help="Show compact one-line output per issue.")
@click.option("--long", "long_", is_flag=True, help="Show all available fields.")
@click.option(
    "--local-time",
    expose_value=False,
    is_flag=True,
    help="Show timestamps in local time instead of UTC (Bee shows UTC).",
    hidden=True,
)
@json_flag
def show(ids: tuple[str, ...], more_ids: tuple[str, ...], short: bool, long_: bool) -> None:
    """Show issue details: fields, labels, dependencies both ways and comments."""
    wanted = [*ids, *more_ids]
    if not wanted:
        raise click.UsageError("at least one issue ID is required (positional or --id)")
    current = tracker()
    found: list[dict[str, Any]] = []
    shown = 0
    for issue_id in wanted:
        try:
            issue = views.whole(current, [issue_id], comments=views.ALL_COMMENTS)[0]
        except BeeError as exc:
            if exc.code != ErrorCode.NOT_FOUND:
                raise
            note(
                f"Issue {issue_id} not found" if not options().as_json else f"Error fetching {issue_id}: {exc.message}"
            )
            continue
        shown += 1
        if short:
            say(human.pretty(issue.record))
        elif options().as_json:
            found.append(_details(issue))
        else:
            _show(issue, first=shown == 1, long_=long_)
    if options().as_json:
        if not found:
            raise BeeError(ErrorCode.NOT_FOUND, "no issues found matching the provided IDs")
        emit(found)
    elif not shown:
        raise click.exceptions.Exit(1)


def _neighbours(issue: Whole) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The issue's dependencies and dependents as bd's ``IssueWithDependencyMetadata``, each list by id (bd reads
    them in its table's key order); a link to an issue that does not exist is left out, as bd does."""
    ahead = sorted((str(d["id"]), str(d["type"])) for d in issue.got.get("depends_on") or [] if d.get("exists"))
    behind = sorted((str(d["id"]), str(d["type"])) for d in issue.got.get("dependents") or [])
    wholes = {w.id: w for w in views.whole(tracker(), sorted({i for i, _ in [*ahead, *behind]}))}
    return (
        [shapes.with_dependency_type(shapes.issue(wholes[i].record), kind) for i, kind in ahead if i in wholes],
        [shapes.with_dependency_type(shapes.issue(wholes[i].record), kind) for i, kind in behind if i in wholes],
    )


def _comments(issue: Whole) -> list[dict[str, Any]]:
    """The issue's comments as bd's ``Comment``, oldest first (by time, then id)."""
    records = [shapes.comment(c, issue.id) for c in issue.record.get("comments") or [] if isinstance(c, dict)]
    return sorted(records, key=lambda c: (views.second_of(c["created_at"]), c["id"]))


def _details(issue: Whole) -> dict[str, Any]:
    dependencies, dependents = _neighbours(issue)
    return shapes.details(issue.record, dependencies=dependencies, dependents=dependents, comments=_comments(issue))


#: How ``show`` groups an issue's links for people: (heading, arrow) by type and direction.
_AHEAD = {"parent-child": ("PARENT", "↑"), "discovered-from": ("DISCOVERED FROM", "◊")}
_BEHIND = {"parent-child": ("CHILDREN", "↳"), "discovered-from": ("DISCOVERED", "◊")}
_RELATED = ("related", "relates-to")


def _show(issue: Whole, *, first: bool, long_: bool) -> None:
    record = issue.record
    if not first:
        say("\n" + human.muted("─" * 60) + "\n")
    status = str(record.get("status") or "open")
    badge = {"epic": " [EPIC]", "bug": " [BUG]"}.get(str(record.get("issue_type")), "")
    say(
        f"{human.icon(status)} {human.bold(issue.id)}{badge} · {record.get('title') or ''}   "
        f"[{human.priority(record.get('priority'))} · {status.upper()}]"
    )
    _metadata(record)
    for heading, key in (
        ("DESCRIPTION", "description"),
        ("DESIGN", "design"),
        ("NOTES", "notes"),
        ("ACCEPTANCE CRITERIA", "acceptance_criteria"),
    ):
        text = str(record.get(key) or "")
        if text or key == "description":
            say(f"\n{human.bold(heading)}")
            for line in (text or human.muted("(none)")).splitlines():
                say(f"  {line}")
    if record.get("labels"):
        say(f"\n{human.bold('LABELS:')} {', '.join(sorted(map(str, record['labels'])))}")
    dependencies, dependents = _neighbours(issue)
    _links(dependencies, _AHEAD, ("DEPENDS ON", "→"))
    _links(dependents, _BEHIND, ("BLOCKS", "←"))
    related = {d["id"]: d for d in [*dependencies, *dependents] if d["dependency_type"] in _RELATED}
    if related:
        say(f"\n{human.bold('RELATED')}")
        for neighbour in related.values():
            say(_link_line("↔", neighbour))
    comments = _comments(issue)
    if comments:
        say(f"\n{human.bold('COMMENTS')}")
        for comment in comments:
            say(f"  {human.muted(human.minute(comment['created_at']))} {comment['author']}")
            for line in comment["text"].splitlines() or [""]:
                say(f"    {line}")
    if long_:
        _extras(record)
    say()


def _metadata(record: dict[str, Any]) -> None:
    parts = [f"Owner: {record['created_by']}"] if record.get("created_by") else []
    if record.get("assignee"):
        parts.append(f"Assignee: {record['assignee']}")
    parts.append(f"Type: {record.get('issue_type') or 'task'}")
    say(" · ".join(parts))
    times = [f"Created: {human.day(record.get('created_at'))}"]
    if record.get("started_at"):
        times.append(f"Started: {human.day(record['started_at'])}")
    times.append(f"Updated: {human.day(record.get('updated_at'))}")
    if record.get("defer_until"):
        times.append(f"Deferred: {human.day(record['defer_until'])}")
    say(" · ".join(times))
    if record.get("status") == "closed" and record.get("close_reason"):
        say(human.muted(f"Close reason: {record['close_reason']}"))
    if record.get("external_ref"):
        say(f"External: {record['external_ref']}")


def _links(neighbours: Sequence[dict[str, Any]], named: dict[str, tuple[str, str]], otherwise: tuple[str, str]) -> None:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for neighbour in neighbours:
        kind = neighbour["dependency_type"]
        if kind in _RELATED:
            continue
        groups.setdefault(named.get(kind, otherwise), []).append(neighbour)
    order = [*named.values(), otherwise]
    for heading, arrow in sorted(groups, key=order.index):
        say(f"\n{human.bold(heading)}")
        for neighbour in groups[(heading, arrow)]:
            say(_link_line(arrow, neighbour))


def _link_line(arrow: str, neighbour: dict[str, Any]) -> str:
    status = str(neighbour.get("status") or "open")
    mark = human.STATUS_ICONS.get(status, human.CUSTOM_ICON)
    title, tag = neighbour.get("title") or "", human.priority(neighbour.get("priority"))
    line = f"  {arrow} {mark} {neighbour['id']}: {title} {tag}"
    return human.muted(line) if status == "closed" else line


def _extras(record: dict[str, Any]) -> None:
    extra = {key: value for key, value in shapes.issue(record).items() if key not in _SHOWN}
    if extra:
        say(f"\n{human.bold('MORE')}")
        for key, value in extra.items():
            say(f"  {key}: {value if isinstance(value, str) else gojson.compact(value)}")


_SHOWN = frozenset(
    {
        "id",
        "title",
        "description",
        "design",
        "notes",
        "acceptance_criteria",
        "status",
        "priority",
        "issue_type",
        "labels",
    }
)


# -- stats ---------------------------------------------------------------------------------------------------------


@click.command("stats")
@click.option("--all", is_flag=True, expose_value=False, help="Show all issues (default behavior).")
@click.option("--assigned", is_flag=True, help="Show issues assigned to current user (not supported by Bee).")
@click.option(
    "--no-activity", is_flag=True, expose_value=False, help="Skip git activity tracking (Bee never reads git activity)."
)
@json_flag
def stats(assigned: bool) -> None:
    """Show issue database overview and statistics, counted as current Beads counts them. Reads every issue whole,
    a page at a time (the count shows on a terminal as it goes)."""
    if assigned:
        raise Unsupported(
            "bd stats --assigned", "Bee counts the whole tracker; list your work with `bd list --assignee YOU`"
        )
    current = tracker()
    with progress("counting issues", total=views.total(current, "search", {})) as shown:
        issues = [Whole.listed(item) for item in counted(views.pages(current, "search", {"whole": True}), shown)]
    summary = _statistics(issues)
    if options().as_json:
        emit({"summary": summary})
        return
    say("\n📊 Issue Database Status\n")
    say("Summary:")
    say(f"  Total Issues:           {summary['total_issues']}")
    say(f"  Open:                   {human.passed(str(summary['open_issues']))}")
    say(f"  In Progress:            {human.warned(str(summary['in_progress_issues']))}")
    say(f"  Blocked:                {human.failed(str(summary['blocked_issues']))}")
    say(f"  Closed:                 {summary['closed_issues']}")
    say(f"  Ready to Work:          {human.passed(str(summary['ready_issues']))}")
    if summary["pinned_issues"]:
        say("\nExtended:")
        say(f"  Pinned:                 {summary['pinned_issues']}")
    say("\nFor more details, use 'bd list' to see individual issues.")
    say()


def _statistics(issues: list[Whole]) -> dict[str, Any]:
    """bd's ``GetStatistics``: counts over the issues table (wisps apart), the blocked issues (not the children
    they hold back), and ready as open less blocked, as current Beads computes it."""
    table = [issue for issue in issues if not issue.wisp]
    status = [str(issue.record.get("status") or "open") for issue in table]
    blocked = sum(1 for issue in issues if _blocked(issue))
    return shapes.statistics(
        total=len(table),
        open_=status.count("open"),
        in_progress=status.count("in_progress"),
        closed=status.count("closed"),
        blocked=blocked,
        deferred=status.count("deferred"),
        ready=max(0, status.count("open") - blocked),
        pinned=sum(1 for issue in table if issue.record.get("pinned") not in (None, False, 0)),
    )


def _blocked(issue: Whole) -> bool:
    """Blocked by an active blocker of its own (a held child names its parent instead)."""
    targets = {str(d.get("depends_on_id")) for d in issue.dependencies if d.get("type") in BLOCKING_TYPES}
    return any(str(blocker) in targets for blocker in issue.blocked_by)
