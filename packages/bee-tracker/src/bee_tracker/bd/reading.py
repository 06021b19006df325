"""`bee bd ready`, `list`, `search` and `blocked`: bd's lists, by Beads' rule, from the ready, search and get tools.

Flags, defaults and ``--json`` shapes are bd's (``cmd/bd/ready.go``, ``list.go``, ``search.go``): ``ready`` and
``list`` answer ``IssueWithCounts`` with each issue's labels and dependency records, ``search`` the same without the
dependencies and the parent, ``blocked`` ``BlockedIssue``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import click

from bee_contracts import invalid
from bee_tracker.bd import human, shapes, views
from bee_tracker.bd.common import (
    PRIORITY,
    Unsupported,
    emit,
    issue_type,
    json_flag,
    labels,
    note,
    options,
    tracker,
    words,
)
from bee_tracker.bd.human import say
from bee_tracker.bd.views import Summary, Whole
from bee_tracker.progress import counted as advancing
from bee_tracker.progress import progress

#: Statuses bd's list leaves out unless asked (``list.go``: closed and pinned).
DONE = ("closed", "pinned")


def counted(issue: Whole, *, dependencies: bool = True, parent: bool = True) -> dict[str, Any]:
    """``IssueWithCounts`` of one issue, as ready and list (or, without dependencies and parent, search) write it."""
    return shapes.with_counts(
        shapes.issue(issue.record, labels=True, dependencies=dependencies),
        dependency_count=issue.dependency_count,
        dependent_count=issue.dependent_count,
        comment_count=issue.comment_count,
        parent=issue.parent if parent else None,
    )


def _limited(summaries: Iterable[Summary], limit: int) -> tuple[list[Summary], bool]:
    """The first ``limit`` (0: all), and whether there were more."""
    taken: list[Summary] = []
    for summary in summaries:
        if limit and len(taken) == limit:
            return taken, True
        taken.append(summary)
    return taken, False


# -- ready ---------------------------------------------------------------------------------------------------------


@click.command("ready")
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(0),
    default=100,
    show_default=True,
    help="Maximum issues to show (use 0 for unlimited).",
)
@click.option("-p", "--priority", type=PRIORITY, default=None, help="Filter by priority.")
@click.option("-a", "--assignee", default=None, help="Filter by assignee.")
@click.option("-u", "--unassigned", is_flag=True, help="Show only unassigned issues.")
@click.option(
    "-l", "--label", "label", multiple=True, help="Filter by labels (AND: must have ALL); comma-separated or repeated."
)
@click.option(
    "-t", "--type", "kind", default=None, help="Filter by issue type (task, bug, feature, epic, …; mr, feat, mol, dec)."
)
@click.option(
    "-s",
    "--sort",
    type=click.Choice(["priority", "hybrid", "oldest"]),
    default="priority",
    show_default=True,
    help="Sort policy; Bee orders by priority.",
)
@click.option("--pretty/--no-pretty", default=True, help="Display issues with status and priority symbols (default).")
@click.option("--plain", is_flag=True, help="Display issues as a plain numbered list.")
@click.option("--claim", is_flag=True, help="Atomically claim the first ready issue matching the filters.")
@json_flag
def ready(
    *,
    limit: int,
    priority: int | None,
    assignee: str | None,
    unassigned: bool,
    label: tuple[str, ...],
    kind: str | None,
    sort: str,
    pretty: bool,
    plain: bool,
    claim: bool,
) -> None:
    """Show ready work (open issues with no active blockers), by Beads' rule: most urgent first, then newest, then
    id. Excludes in_progress, blocked, deferred and hooked issues, wisps, pinned issues and orchestration types."""
    if sort != "priority":
        raise Unsupported(f"bd ready --sort {sort}", "Bee lists ready work in Beads' priority order only")
    wanted = labels(label)
    kind = issue_type(kind)
    args: dict[str, Any] = {
        **({"priority": priority} if priority is not None else {}),
        **({"labels": wanted} if wanted else {}),
    }
    if claim:
        _claim_ready(args, assignee=assignee, kind=kind)
        return
    current = tracker()
    filtered = assignee is not None or unassigned or kind is not None

    def keep(summary: Summary) -> bool:
        holder = summary.get("assignee")
        return (
            (assignee is None or unassigned or holder == assignee)
            and (not unassigned or not holder)
            and (kind is None or summary.get("issue_type") == kind)
        )

    # One past the limit tells whether there are more; with filters of its own the list reads on, page by page.
    size = limit + 1 if limit and not filtered else views.PAGE
    every = (s for s in views.pages(current, "ready", {**args, "whole": True}, size=size) if keep(s))
    shown, more = _limited(every, limit)
    total = len(shown) + (sum(1 for _ in every) + 1 if more else 0) if filtered else None
    if total is None:
        total = views.total(current, "ready", args) if more else len(shown)
    issues = [Whole.listed(s) for s in shown]
    if options().as_json:
        emit([counted(issue) for issue in issues])
        if more:
            note(
                f"Showing {len(issues)} of {total} ready issues. Use --limit 0 for all, or --limit N to raise the cap."
            )
        return
    if not issues:
        _nothing_ready()
        return
    if plain or not pretty:
        _plain_ready(issues)
    else:
        _pretty_ready(issues, _epic_titles(issues))
    if more:
        say(human.muted(f"Showing {len(issues)} of {total} ready issues. Use -n to show more."))
        say()


def _claim_ready(args: dict[str, Any], *, assignee: str | None, kind: str | None) -> None:
    """``ready --claim``: the tool's claim without an id (the first ready issue nobody holds, under ``args``, taken
    atomically), answered as bd answers it: a list of the one issue claimed, or an empty one."""
    if assignee is not None:
        raise invalid("--claim cannot be combined with --assignee")
    if kind is not None:
        raise Unsupported("bd ready --claim --type", "the tracker's claim-next filters by priority and labels only")
    taken = tracker().call("claim", args)
    if not taken.get("claimed"):
        if options().as_json:
            emit([])
        else:
            say(f"\n{human.warned('○')} No ready work to claim\n")
        return
    (issue,) = views.whole(tracker(), [str(taken["id"])])
    if options().as_json:
        emit([counted(issue)])
    else:
        say(f"{human.passed('✓')} Claimed issue: {human.feedback(issue.id, issue.record.get('title'))}")


def _nothing_ready() -> None:
    active = views.total(tracker(), "search", {"status": ["open", "in_progress"]})
    if active:
        say(f"\n{human.warned('✨')} No ready work found (all issues have blocking dependencies)\n")
    else:
        say(f"\n{human.passed('✨')} No open issues\n")


def _epic_titles(issues: list[Whole]) -> dict[str, str]:
    """Each issue's parent epic's title, for the pretty list's context."""
    parents = sorted({issue.parent for issue in issues if issue.parent})
    epics = (
        {
            p.id: str(p.record.get("title") or "")
            for p in views.whole(tracker(), parents)
            if p.record.get("issue_type") == "epic"
        }
        if parents
        else {}
    )
    return {issue.id: epics[issue.parent] for issue in issues if issue.parent in epics}


def _pretty_ready(issues: list[Whole], epics: dict[str, str]) -> None:
    for issue in issues:
        line = human.pretty(issue.record)
        say(line + (" " + human.muted("← " + epics[issue.id]) if issue.id in epics else ""))
    say()
    say("-" * 80)
    say(f"Ready: {len(issues)} issues with no active blockers")
    say()
    say(human.LEGEND)


def _plain_ready(issues: list[Whole]) -> None:
    say(f"\n📋 Ready work ({len(issues)} issues with no active blockers):\n")
    for number, issue in enumerate(issues, 1):
        record = issue.record
        _, kind, _, title = human.parts(record)
        say(f"{number}. [{human.priority(record.get('priority'))}] [{kind}] {issue.id}: {title}")
        if record.get("assignee"):
            say(f"   Assignee: {record['assignee']}")
    say()


# -- list ----------------------------------------------------------------------------------------------------------


@click.command("list")
@click.option(
    "-s",
    "--status",
    "status",
    default=None,
    help="Filter by stored status (open, in_progress, blocked, deferred, closed); comma-separated for several, or all.",
)
@click.option("-a", "--assignee", default=None, help="Filter by assignee.")
@click.option("-t", "--type", "kind", default=None, help="Filter by type (bug, feature, task, epic, chore, …).")
@click.option("-l", "--label", "label", multiple=True, help="Filter by labels (AND: must have ALL).")
@click.option("-p", "--priority", type=PRIORITY, default=None, help="Filter by priority (0-4 or P0-P4).")
@click.option(
    "-n", "--limit", type=click.IntRange(0), default=None, help="Limit results (default 50, use 0 for unlimited)."
)
@click.option("--all", "show_all", is_flag=True, help="Show all issues including closed (overrides default filter).")
@click.option(
    "--ready",
    "only_ready",
    is_flag=True,
    help="Show only ready issues (no active blockers, same semantics as bd ready).",
)
@click.option("--parent", default=None, help="Filter by parent issue ID (shows children of specified issue).")
@click.option("--no-assignee", is_flag=True, help="Filter issues with no assignee.")
@click.option("--long", "long_", is_flag=True, help="Show detailed multi-line output for each issue.")
@click.option("--pretty", is_flag=True, help="Display issues in a tree format with status/priority symbols.")
@click.option("--tree/--flat", default=True, help="Hierarchical tree format (default), or the flat list.")
@json_flag
def list_(
    *,
    status: str | None,
    assignee: str | None,
    kind: str | None,
    label: tuple[str, ...],
    priority: int | None,
    limit: int | None,
    show_all: bool,
    only_ready: bool,
    parent: str | None,
    no_assignee: bool,
    long_: bool,
    pretty: bool,
    tree: bool,
) -> None:
    """List issues: open and in-progress ones by default (not closed, not pinned), most urgent first, then newest."""
    effective = limit if limit is not None else (0 if show_all else 50)
    statuses = [] if status in (None, "all") else words([status])
    args: dict[str, Any] = {}
    if statuses:
        args["status"] = statuses
    if assignee is not None:
        args["assignee"] = assignee
    if issue_type(kind):
        args["issue_type"] = issue_type(kind)
    if labels(label):
        args["labels"] = labels(label)
    excluded = DONE if status is None and not show_all and not only_ready else ()
    children = _children(parent) if parent else None

    def passes(summary: Summary) -> bool:
        return (
            summary.get("status") not in excluded
            and (priority is None or summary.get("priority") == priority)
            and (not no_assignee or not summary.get("assignee"))
            and (children is None or str(summary["id"]) in children)
        )

    current = tracker()
    source = (
        views.pages(current, "ready", {**_ready_args(args), "whole": True})
        if only_ready
        else views.pages(current, "search", {**args, "whole": True})
    )
    issues, more = views.gather(
        current, (s for s in source if passes(s) and _ready_match(s, args, only_ready)), lambda _: True, limit=effective
    )
    if options().as_json:
        emit([counted(issue) for issue in issues])
    elif long_:
        _long(issues)
    elif pretty or tree:
        _tree(issues)
    else:
        for issue in issues:
            say(_compact(issue))
    if more:
        note(
            f"\nShowing {effective} issues; more results matched but were hidden by --limit. Use --limit 0 for all, or "
            "--limit N to raise the cap."
        )


def _ready_args(args: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in args.items() if key == "labels"}


def _ready_match(summary: Summary, args: dict[str, Any], only_ready: bool) -> bool:
    """With ``--ready``, the filters the ready tool does not take (assignee, type; statuses: ready is open)."""
    if not only_ready:
        return True
    return (
        ("assignee" not in args or summary.get("assignee") == args["assignee"])
        and ("issue_type" not in args or summary.get("issue_type") == args["issue_type"])
        and ("status" not in args or "open" in args["status"])
    )


def _children(parent: str) -> set[str]:
    """The ids of ``parent``'s children (its parent-child dependents), and ids under it by name (``parent.N``)."""
    got = tracker().call("get", {"id": parent, "comments_limit": 0})
    return {str(d["id"]) for d in got.get("dependents") or [] if d.get("type") == "parent-child"}


def _compact(issue: Whole) -> str:
    number, kind, status, title = human.parts(issue.record)
    context = f" (parent: {issue.parent})" if issue.parent else ""
    line = f"{issue.id} [P{number}] [{kind}]{human.who_and_tags(issue.record)} - {title}{context}"
    return f"{human.icon(status)} {human.muted(line) if status == 'closed' else line}"


def _long(issues: list[Whole]) -> None:
    say(f"\nFound {len(issues)} issues:\n")
    for issue in issues:
        record = issue.record
        _, kind, status, title = human.parts(record)
        say(f"{issue.id} [{human.priority(record.get('priority'))}] [{kind}] {status}")
        say(f"  {title}")
        if record.get("assignee"):
            say(f"  Assignee: {record['assignee']}")
        description = str(record.get("description") or "").strip()
        if description:
            say("  Description:")
            for line in description.splitlines():
                say(f"    {line}")
        if record.get("labels"):
            say(f"  Labels: {human.go_list(sorted(map(str, record['labels'])))}")
        say()


def _tree(issues: list[Whole]) -> None:
    if not issues:
        say("No issues found.")
        return
    shown = {issue.id for issue in issues}
    below: dict[str, list[Whole]] = {}
    roots = []
    for issue in issues:
        if issue.parent in shown:
            below.setdefault(str(issue.parent), []).append(issue)
        else:
            roots.append(issue)
    for root in roots:
        say(human.pretty(root.record))
        for line in _branches(root.id, below, ""):
            say(line)
    say()
    say("-" * 80)
    statuses = [issue.record.get("status") for issue in issues]
    say(f"Total: {len(issues)} issues ({statuses.count('open')} open, {statuses.count('in_progress')} in progress)")
    say()
    say(human.LEGEND)


def _branches(parent: str, below: dict[str, list[Whole]], indent: str) -> Iterator[str]:
    children = below.get(parent, [])
    for index, child in enumerate(children):
        last = index == len(children) - 1
        yield f"{indent}{'└── ' if last else '├── '}{human.pretty(child.record)}"
        yield from _branches(child.id, below, indent + ("    " if last else "│   "))


# -- search --------------------------------------------------------------------------------------------------------


@click.command("search")
@click.argument("terms", nargs=-1)
@click.option("--query", default=None, help="Search query (alternative to the positional argument).")
@click.option(
    "-s",
    "--status",
    default=None,
    help="Filter by stored status; the default leaves out closed issues, all includes them.",
)
@click.option("-a", "--assignee", default=None, help="Filter by assignee.")
@click.option("-t", "--type", "kind", default=None, help="Filter by type.")
@click.option("-l", "--label", "label", multiple=True, help="Filter by labels (AND: must have ALL).")
@click.option("-n", "--limit", type=click.IntRange(0), default=50, show_default=True, help="Limit results.")
@click.option("--long", "long_", is_flag=True, help="Show detailed multi-line output for each issue.")
@json_flag
def search(
    *,
    terms: tuple[str, ...],
    query: str | None,
    status: str | None,
    assignee: str | None,
    kind: str | None,
    label: tuple[str, ...],
    limit: int,
    long_: bool,
) -> None:
    """Search issues across title and ID as bd does (closed issues left out unless --status says otherwise).

    A query shaped like an id (``bd-12``) finds the id itself, ids starting with it, and titles or external refs
    containing it; any other query finds titles and ids containing it. Case-insensitive; ``%`` and ``_`` are
    wildcards."""
    text = " ".join(terms) if terms else (query or "")
    if not text:
        raise click.UsageError("search query is required: bd search QUERY (or --query QUERY)")
    args: dict[str, Any] = {"query": text[:1000]}
    if status not in (None, "all"):
        args["status"] = words([str(status)])
    if assignee is not None:
        args["assignee"] = assignee
    if issue_type(kind):
        args["issue_type"] = issue_type(kind)
    if labels(label):
        args["labels"] = labels(label)
    found = _search(text, args, exclude_closed=status is None, limit=limit)
    if options().as_json:
        emit([counted(issue, dependencies=False, parent=False) for issue in found])
        return
    _searched(text, found, long_)


def _search(text: str, args: dict[str, Any], *, exclude_closed: bool, limit: int) -> list[Whole]:
    """Beads' matches among what the search tool finds, in Beads' order, ``limit`` of the issues and ``limit`` of
    the wisps (bd searches its two tables apart, each to the limit)."""
    current = tracker()
    matched: list[Whole] = []
    undecided: list[str] = []
    enough = limit + 1 if limit else 0

    def settle() -> None:
        for issue in views.whole(current, undecided):
            if views.beads_match(
                text, issue.id, str(issue.record.get("title") or ""), issue.record.get("external_ref")
            ):
                matched.append(issue)
        undecided.clear()

    certain: list[str] = []
    for summary in views.pages(current, "search", args):
        if exclude_closed and summary.get("status") == "closed":
            continue
        decided = views.decided_by_summary(text, summary)
        if decided is None:
            undecided.append(str(summary["id"]))
        elif decided:
            certain.append(str(summary["id"]))
        if enough and len(certain) >= enough:
            break
    settle()
    matched += views.whole(current, certain)
    issues = views.bd_sorted(i for i in matched if not i.wisp)
    wisps = views.bd_sorted(i for i in matched if i.wisp)
    return (issues[:limit] + wisps[:limit]) if limit else issues + wisps


def _searched(text: str, found: list[Whole], long_: bool) -> None:
    if not found:
        say(f"No issues found matching '{text}'")
        return
    if long_:
        say(f"\nFound {len(found)} issues matching '{text}':\n")
        for issue in found:
            record = issue.record
            number, kind, status, title = human.parts(record)
            say(f"{issue.id} [P{number}] [{kind}] {status}")
            say(f"  {title}")
            if record.get("assignee"):
                say(f"  Assignee: {record['assignee']}")
            if record.get("labels"):
                say(f"  Labels: {human.go_list(sorted(map(str, record['labels'])))}")
            say()
        return
    say(f"Found {len(found)} issues matching '{text}':")
    for issue in found:
        number, kind, status, title = human.parts(issue.record)
        say(f"{issue.id} [P{number}] [{kind}] {status}{human.who_and_tags(issue.record)} - {title}")


# -- blocked -------------------------------------------------------------------------------------------------------


@click.command("blocked")
@click.option("--parent", default=None, help="Filter to descendants of this bead/epic.")
@json_flag
def blocked(parent: str | None) -> None:
    """Show blocked issues: active issues with an active blocker, and the children a blocked issue holds back, each
    with what blocks it. Reads every issue whole, a page at a time (the count shows on a terminal as it goes)."""
    current = tracker()
    children = _children(parent) if parent else None

    def wanted(summary: Summary) -> bool:
        issue_id = str(summary["id"])
        return (
            summary.get("status") not in DONE
            and bool(summary.get("blocked_by"))  # what get says keeps it from being ready: it is not ready
            and (children is None or issue_id in children or issue_id.startswith(f"{parent}."))
        )

    with progress("reading issues", total=views.total(current, "search", {})) as shown:
        listed = advancing(views.pages(current, "search", {"whole": True}), shown)
        found = [Whole.listed(summary) for summary in listed if wanted(summary)]
    found.sort(key=views.bd_key)
    if options().as_json:
        emit([shapes.blocked(shapes.issue(issue.record), sorted(map(str, issue.blocked_by))) for issue in found])
        return
    if not found:
        say(f"\n{human.passed('✨')} No blocked issues\n")
        return
    say(f"\n{human.failed('🚫')} Blocked issues ({len(found)}):\n")
    for issue in found:
        blockers = sorted(map(str, issue.blocked_by))
        say(f"[{human.priority(issue.record.get('priority'))}] {issue.id}: {issue.record.get('title') or ''}")
        say(f"  Blocked by {len(blockers)} open dependencies: {human.go_list(blockers)}")
        say()
