"""`bee bd dep`, `label` and `comments`: bd's dependency, label and comment commands, made by ``link``, ``update``
and ``add_note`` and read from ``get``.

Answers are bd's (``cmd/bd/dep.go``, ``label.go``, ``comments.go``): ``dep add``/``remove`` an object naming the
link, ``dep tree`` a list of ``TreeNode``, ``label add``/``remove`` a list of one object per issue, ``label list`` a
list of strings, ``comments`` a list of ``Comment`` and ``comments add`` the new comment as an object.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import click

from bee_contracts import BeeError, ErrorCode, invalid
from bee_tracker.bd import human, shapes, views
from bee_tracker.bd.common import Unsupported, emit, json_flag, note, options, tracker
from bee_tracker.bd.human import say
from bee_tracker.bd.session import LocalTracker


class IssueFirst(click.Group):
    """A group whose first word is one of its commands, or else an issue id for its :attr:`default` command (bd's
    ``comments ID`` and ``dep ID --blocks OTHER``)."""

    default = ""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return self.default, self.commands[self.default], args
        return super().resolve_command(ctx, args)


def _title(issue_id: str) -> str | None:
    """An issue's title for a message, or None when it cannot be read."""
    try:
        return str(tracker().call("get", {"id": issue_id, "comments_limit": 0})["issue"].get("title") or "") or None
    except BeeError:
        return None


# -- dep -----------------------------------------------------------------------------------------------------------


class _Dep(IssueFirst):
    default = "blocks-shorthand"


@click.group("dep", cls=_Dep)
def dep() -> None:
    """Manage dependencies: add, remove, tree; or `bd dep BLOCKER --blocks BLOCKED`."""


@dep.command("blocks-shorthand", hidden=True)
@click.argument("blocker")
@click.option("-b", "--blocks", "blocked", required=True, help="Issue ID that this issue blocks.")
@json_flag
def _blocks_shorthand(blocker: str, blocked: str) -> None:
    """`bd dep BLOCKER --blocks BLOCKED`: BLOCKED depends on BLOCKER."""
    tracker().call("link", {"id": blocked, "target": blocker, "type": "blocks"})
    if options().as_json:
        emit({"blocked_id": blocked, "blocker_id": blocker, "status": "added", "type": "blocks"})
        return
    first, second = human.feedback_paren(blocker, _title(blocker)), human.feedback_paren(blocked, _title(blocked))
    say(f"{human.passed('✓')} Added dependency: {first} blocks {second}")


@dep.command("add")
@click.argument("issue_id")
@click.argument("depends_on", required=False)
@click.option(
    "-t",
    "--type",
    "kind",
    default="blocks",
    show_default=True,
    help="Dependency type (blocks|tracks|related|parent-child|discovered-from|…).",
)
@click.option(
    "--blocked-by", default=None, help="Issue ID that blocks the first issue (alternative to positional arg)."
)
@click.option(
    "--depends-on",
    "depends_on_flag",
    default=None,
    help="Issue ID that the first issue depends on (alias for --blocked-by).",
)
@click.option(
    "--no-cycle-check",
    is_flag=True,
    expose_value=False,
    help="Accepted for bd's scripts: the tracker always refuses a cycle through blocking links.",
)
@click.option("--file", "from_file", default=None, help="Read dependency edges from JSONL (not supported).")
@json_flag
def dep_add(
    *,
    issue_id: str,
    depends_on: str | None,
    kind: str,
    blocked_by: str | None,
    depends_on_flag: str | None,
    from_file: str | None,
) -> None:
    """Add a dependency: ISSUE depends on (is blocked by) DEPENDS_ON."""
    if from_file is not None:
        raise Unsupported("bd dep add --file", "add each dependency with `bd dep add ISSUE DEPENDS_ON`")
    flag = blocked_by or depends_on_flag
    if flag and depends_on:
        raise click.UsageError("cannot use both positional depends-on-id and --blocked-by/--depends-on flag")
    target = flag or depends_on
    if not target:
        raise click.UsageError("requires 2 arg(s) (or use --blocked-by/--depends-on flag)")
    if target.startswith("external:"):
        raise Unsupported("an external: dependency", "the tracker links issues it holds")
    tracker().call("link", {"id": issue_id, "target": target, "type": kind})
    if options().as_json:
        emit({"depends_on_id": target, "issue_id": issue_id, "status": "added", "type": kind})
        return
    first, second = human.feedback_paren(issue_id, _title(issue_id)), human.feedback_paren(target, _title(target))
    say(f"{human.passed('✓')} Added dependency: {first} depends on {second} ({kind})")


@dep.command("remove")
@click.argument("issue_id")
@click.argument("depends_on")
@json_flag
def dep_remove(issue_id: str, depends_on: str) -> None:
    """Remove a dependency: ISSUE no longer depends on DEPENDS_ON, whatever the link's type."""
    current = tracker()
    record = current.call("get", {"id": issue_id, "comments_limit": 0})["issue"]
    kinds = [str(d["type"]) for d in record.get("dependencies") or [] if d.get("depends_on_id") == depends_on]
    if not kinds:
        raise BeeError(ErrorCode.NOT_FOUND, f"{issue_id} has no dependency on {depends_on}")
    for kind in kinds:
        current.call("link", {"id": issue_id, "target": depends_on, "type": kind, "action": "remove"})
    if options().as_json:
        emit({"depends_on_id": depends_on, "issue_id": issue_id, "status": "removed"})
        return
    first = human.feedback_paren(issue_id, record.get("title"))
    second = human.feedback_paren(depends_on, _title(depends_on))
    say(f"{human.passed('✓')} Removed dependency: {first} no longer depends on {second}")


dep.add_command(dep_remove, "rm")


@dep.command("tree")
@click.argument("issue_id")
@click.option(
    "-d", "--max-depth", type=click.IntRange(1), default=50, show_default=True, help="Maximum tree depth to display."
)
@click.option(
    "--direction",
    type=click.Choice(["down", "up", "both"]),
    default=None,
    help="down: dependencies (default), up: dependents, both.",
)
@click.option("--reverse", is_flag=True, help="Show dependent tree (deprecated: use --direction=up).")
@click.option("--status", default=None, help="Only show issues with this status (and the issues above them).")
@click.option(
    "--show-all-paths",
    is_flag=True,
    expose_value=False,
    help="Accepted for bd's scripts (each issue shows once, as in bd).",
)
@click.option("--format", "form", default=None, help="json, or mermaid (not supported).")
@json_flag
def dep_tree(
    *,
    issue_id: str,
    max_depth: int,
    direction: str | None,
    reverse: bool,
    status: str | None,
    form: str | None,
) -> None:
    """Show the dependency tree rooted at ISSUE: what blocks it (down), what it blocks (up), or both."""
    if form is not None and form.lower() != "json":
        raise Unsupported(f"bd dep tree --format {form}", "the tree is printed as text or --json")
    if form is not None:
        options().as_json = True
    way = direction or ("up" if reverse else "down")
    if way == "both":
        up = [node for node in _tree(issue_id, max_depth, up=True) if node["id"] != issue_id]
        nodes = up + _tree(issue_id, max_depth, up=False)
    else:
        nodes = _tree(issue_id, max_depth, up=way == "up")
    if status:
        nodes = _only(nodes, status)
    if options().as_json:
        emit(nodes)
        return
    _draw(issue_id, nodes, max_depth, way)


def _tree(root: str, max_depth: int, *, up: bool) -> list[dict[str, Any]]:
    """bd's ``GetDependencyTree``: depth first from ``root``, each issue once, neighbours by id, to ``max_depth``."""
    seen: set[str] = set()
    nodes: list[dict[str, Any]] = []

    def visit(issue_id: str, depth: int, parent: str, edge: str) -> None:
        if depth >= max_depth or issue_id in seen:
            return
        seen.add(issue_id)
        got = views.whole(tracker(), [issue_id])[0].got
        nodes.append(shapes.tree_node(shapes.issue(got["issue"]), depth=depth, parent_id=parent, edge=edge))
        listed = got.get("dependents") if up else [d for d in got.get("depends_on") or [] if d.get("exists")]
        for neighbour in sorted(listed or [], key=lambda d: str(d["id"])):
            visit(str(neighbour["id"]), depth + 1, issue_id, str(neighbour["type"]))

    visit(root, 0, "", "")
    return nodes


def _only(nodes: list[dict[str, Any]], status: str) -> list[dict[str, Any]]:
    """The nodes of ``status`` and every node above them (bd's ``filterTreeByStatus``)."""
    above = {node["id"]: node["parent_id"] for node in nodes if node["parent_id"]}
    keep: set[str] = set()
    for node in nodes:
        if node.get("status") == status:
            current: str | None = node["id"]
            while current and current not in keep:
                keep.add(current)
                current = above.get(current)
    return [node for node in nodes if node["id"] in keep]


def _draw(root: str, nodes: list[dict[str, Any]], max_depth: int, way: str) -> None:
    if not nodes:
        say(f"\n{root} has no " + {"up": "dependents", "both": "dependencies or dependents"}.get(way, "dependencies"))
        return
    heading = {"up": "Dependent tree", "both": "Full dependency graph"}.get(way, "Dependency tree")
    say(f"\n🌲 {heading} for {root}:\n")
    below: dict[str, list[dict[str, Any]]] = {}
    start = next((node for node in nodes if node["depth"] == 0), nodes[0])
    for node in nodes:
        if node is not start:
            below.setdefault(node["parent_id"], []).append(node)
    blocked = any(child.get("status") in ("open", "in_progress") for child in below.get(start["id"], []))
    say(_node_line(start, blocked))
    for line in _tree_lines(start["id"], below, "", max_depth):
        say(line)
    say()


def _tree_lines(parent: str, below: dict[str, list[dict[str, Any]]], indent: str, max_depth: int) -> Iterator[str]:
    children = below.get(parent, [])
    for index, child in enumerate(children):
        last = index == len(children) - 1
        more = " …" if child["depth"] == max_depth - 1 and below.get(child["id"]) else ""
        yield f"{indent}{'└── ' if last else '├── '}{_node_line(child, False)}{more}"
        yield from _tree_lines(child["id"], below, indent + ("    " if last else "│   "), max_depth)


def _node_line(node: dict[str, Any], blocked: bool) -> str:
    status = str(node.get("status") or "open")
    line = f"{node['id']}: {node.get('title') or ''} [P{node.get('priority', 0)}] ({status})"
    if node["depth"] > 0 and node.get("edge_from_parent"):
        line += " " + human.muted(f"[{node['edge_from_parent']}]")
    if status == "open" and node["depth"] == 0:
        line += " " + (human.failed("[BLOCKED]") if blocked else human.passed("[READY]"))
    return line


# -- label ---------------------------------------------------------------------------------------------------------


@click.group("label")
def label() -> None:
    """Manage issue labels."""


def _labelled(ids: tuple[str, ...], name: str, action: str) -> None:
    """Add (or remove) ``name`` on each of ``ids``; every id is read first, so a missing one changes nothing."""
    name = name.strip()
    if not name:
        raise invalid("label cannot be empty")
    if action == "added" and name.startswith("provides:"):
        raise invalid("'provides:' labels are reserved for bd ship, which Bee does not have")
    current = tracker()
    for issue_id in ids:
        current.call("get", {"id": issue_id, "comments_limit": 0})
    for issue_id in ids:
        current.call("update", {"id": issue_id, ("add_labels" if action == "added" else "remove_labels"): [name]})
    if options().as_json:
        emit([{"issue_id": issue_id, "label": name, "status": action} for issue_id in ids])
        return
    verb, preposition = ("Added", "to") if action == "added" else ("Removed", "from")
    for issue_id in ids:
        say(f"{human.passed('✓')} {verb} label '{name}' {preposition} {issue_id}")


@label.command("add")
@click.argument("args", nargs=-1, required=True, metavar="ISSUE_ID... LABEL")
@json_flag
def label_add(args: tuple[str, ...]) -> None:
    """Add a label to one or more issues."""
    if len(args) < 2:
        raise click.UsageError("requires at least 2 arg(s): ISSUE_ID... LABEL")
    _labelled(args[:-1], args[-1], "added")


@label.command("remove")
@click.argument("args", nargs=-1, required=True, metavar="ISSUE_ID... LABEL")
@json_flag
def label_remove(args: tuple[str, ...]) -> None:
    """Remove a label from one or more issues."""
    if len(args) < 2:
        raise click.UsageError("requires at least 2 arg(s): ISSUE_ID... LABEL")
    _labelled(args[:-1], args[-1], "removed")


@label.command("list")
@click.argument("issue_id")
@json_flag
def label_list(issue_id: str) -> None:
    """List labels for an issue."""
    record = tracker().call("get", {"id": issue_id, "comments_limit": 0})["issue"]
    names = sorted(str(name) for name in record.get("labels") or [])
    if options().as_json:
        emit(names)
        return
    if not names:
        say(f"\n{issue_id} has no labels")
        return
    say(f"\n🏷 Labels for {issue_id}:")
    for name in names:
        say(f"  - {name}")
    say()


# -- comments ------------------------------------------------------------------------------------------------------


class _Comments(IssueFirst):
    default = "list"


@click.group("comments", cls=_Comments)
def comments() -> None:
    """View or manage comments on an issue: `bd comments ID` lists them, `bd comments add ID TEXT` adds one."""


@comments.command("list")
@click.argument("issue_id")
@click.option("--local-time", is_flag=True, hidden=True, expose_value=False, help="Bee shows UTC.")
@json_flag
def comments_list(issue_id: str) -> None:
    """List the comments on an issue, oldest first (the newest 200, as far as they fit the tracker's answer)."""
    issue = views.whole(tracker(), [issue_id], comments=views.ALL_COMMENTS)[0]
    found = sorted(
        (shapes.comment(c, issue.id) for c in issue.record.get("comments") or [] if isinstance(c, dict)),
        key=lambda c: (views.second_of(c["created_at"]), c["id"]),
    )
    if options().as_json:
        emit(found)
        return
    if not found:
        say(f"No comments on {issue_id}")
        return
    say(f"\nComments on {issue_id}:\n")
    for comment in found:
        say(f"[{comment['author']}] at {human.minute(comment['created_at'])}")
        for line in comment["text"].splitlines() or [""]:
            say(f"  {line}")
        say()


@comments.command("add")
@click.argument("issue_id")
@click.argument("text", required=False)
@click.option("-f", "--file", "from_file", default=None, help="Read comment text from file.")
@click.option(
    "-a", "--author", default=None, help="Add author to comment (only yourself: the tracker records who writes)."
)
@json_flag
def comments_add(issue_id: str, text: str | None, from_file: str | None, author: str | None) -> None:
    """Add a comment to an issue."""
    if from_file is not None:
        from bee_tracker.bd.writing import _read_text

        text = _read_text(from_file, "--file")
    if text is None:
        raise click.UsageError("comment text required (use -f to read from file)")
    if not text.strip():
        raise invalid("comment text cannot be empty")
    current = tracker()
    actor = current.actor if isinstance(current, LocalTracker) else None
    if author is not None and author != actor:
        raise Unsupported(
            "bd comments add --author",
            "the tracker records the comment under who writes it (--actor locally, the token's actor remotely)",
        )
    added = current.call("add_note", {"id": issue_id, "text": text})["comment"]
    if options().as_json:
        emit(shapes.comment(added, issue_id))
        return
    say(f"Comment added to {issue_id}")


_ = note  # messages on stderr come from the shared helpers
