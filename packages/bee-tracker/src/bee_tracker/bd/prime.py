"""`bee bd prime`: the session-start context an agent reads (the role of `bd prime`), in Bee's own words.

It says which tracker the commands reach, what is ready and what is in progress right now, the close-out checklist
and the commands `bee bd` serves, spelled ``bd …`` as instruction files (and the opt-in shim) spell them. Like
`bd prime`, it prints nothing and succeeds where there is no tracker, so a session hook can always run it. Unlike
`bd prime`, it never prints a PRIME.md from the checkout: what a checkout ships is not the user's to run (Bee's
trust rule), and an agent reads the repository's own instructions anyway.
"""

from __future__ import annotations

import click

from bee_contracts import BeeError
from bee_tracker.bd.common import tracker
from bee_tracker.bd.human import say
from bee_tracker.session_start import READY_DEFAULT

_BRIEF = """# Bee tracker (Beads-compatible)

Before you say "done": `bd close <id> --reason "what was done"` for each issue you finished.

- Track all work here (`bd create`, `bd ready`, `bd close`), never in TODO lists or scratch markdown.
- Claim before you start: `bd update <id> --claim`. Only the holder moves a claimed issue.
- Start with `bd ready`.
"""

_FULL = """# Bee tracker workflow (Beads-compatible)

> Run `bd prime` again after a compaction, a clear or a new session.

## Before you say "done"

```
[ ] bd close <id> --reason "what was done"    (once per finished issue; refused while blockers or open children remain)
[ ] bd comments add <id> "what is left"        (for work you stop before it is finished; then release it)
{commit}```

## Rules
- Track every piece of work in the tracker (`bd create`, `bd ready`, `bd close`), never in TODO lists or scratch
  markdown files.
- Create the issue before you write the code; claim it when you start: `bd update <id> --claim`. While it is
  claimed only you can change its status or close it.
- Found something on the way? `bd create "..." --deps discovered-from:<id>`.
- The tracker is shared and always current: there is nothing to pull, push or sync.

## Commands

### Finding work
- `bd ready` - issues ready to work on (no active blockers), most urgent first
- `bd list --status=open` - all open issues; `bd list --status=in_progress` - work under way
- `bd show <id>` - one issue whole: fields, dependencies both ways, comments
- `bd search <text>` - ids and titles containing the text
- `bd blocked` - blocked issues and what blocks them

### Creating and updating
- `bd create "Title" --description="why and what" -t task|bug|feature|epic -p 2` - a new issue (priority 0-4 or
  P0-P4: 0 critical, 4 backlog)
- `bd update <id> --claim` - claim it (assignee you, status in_progress)
- `bd update <id> --status=... --priority=... --notes=...` - change fields
- `bd close <id> --reason="..."` - close it; `bd reopen <id>` - open it again
- `bd comments add <id> "..."` - leave a note; `bd comments <id>` - read them
- `bd label add <id> <label>` / `bd label remove <id> <label>`

### Dependencies
- `bd dep add <issue> <depends-on>` - issue depends on depends-on (blocks it)
- `bd dep remove <issue> <depends-on>`; `bd dep tree <id>` - what blocks it, transitively

### Health
- `bd stats` - counts: open, in progress, blocked, closed, ready
"""


@click.command("prime")
@click.option("--full", is_flag=True, help="Full workflow and command reference (the default).")
@click.option("--mcp", "brief", is_flag=True, help="Brief reminders only, for agents that use the tracker's MCP tools.")
@click.option("--stealth", is_flag=True, help="Leave out the commit step of the close-out checklist.")
@click.option("--export", "export_", is_flag=True, help="Print the default text only (no tracker state).")
def prime(full: bool, brief: bool, stealth: bool, export_: bool) -> None:
    """Output AI-optimized workflow context: the close-out checklist, the rules and the commands, with the
    tracker's state now. Prints nothing (and succeeds) where there is no tracker."""
    text = (
        _BRIEF
        if brief and not full
        else _FULL.replace("{commit}", "" if stealth else "[ ] commit your code as your repository asks\n")
    )
    if export_:
        click.echo(text, nl=False)
        return
    try:
        state = _state()
    except BeeError:
        return  # no tracker here (or none reachable): silent, as bd prime outside a beads project
    click.echo(text, nl=False)
    say(state)


def _state() -> str:
    """Where the commands go, and the session-start context of whoever runs it there (the MCP prompt's text)."""
    current = tracker()
    return "\n".join(["", "## Now", "", f"Tracker: {current.where}", "", current.session_start(READY_DEFAULT)])
