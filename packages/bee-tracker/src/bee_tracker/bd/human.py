"""bd's output for people: its status icons, priority tags and line layouts, coloured only on a terminal.

Lines are written with :func:`say`, which is click's echo: ANSI colours are dropped when the output is not a terminal
(a pipe, a file, a test), and everywhere when ``NO_COLOR`` is set, so scripts read plain text; and the tracker's text
never reaches a terminal with control characters in it (``--json`` escapes them, as bd's does).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import click

from bee_tracker.model import epoch

#: bd's status icons (``internal/ui/styles.go``); any other status is a custom one.
STATUS_ICONS = {
    "open": "○",
    "in_progress": "◐",
    "blocked": "●",
    "closed": "✓",
    "deferred": "❄",
    "pinned": "📌",
}
CUSTOM_ICON = "◇"
#: The legend bd prints under its pretty lists.
LEGEND = "Status: ○ open  ◐ in_progress  ● blocked  ✓ closed  ❄ deferred"
_STATUS_COLOURS = {"in_progress": "yellow", "blocked": "red", "closed": "bright_black", "deferred": "bright_black"}
_PRIORITY_COLOURS = {0: "red", 1: "yellow"}


#: Control characters a line must not carry to a terminal (they could move the cursor, retitle the window or hide
#: text): every C0 and C1 control but newline and tab, and every escape that does not start a colour (SGR) sequence.
_UNSAFE = re.compile(r"\x1b(?!\[[0-9;]*m)|[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f]")


def say(text: str = "", *, err: bool = False) -> None:
    """One line to stdout (or stderr), colours only on a terminal and never under ``NO_COLOR``; control characters
    from the tracker's text (a title is anyone's) shown as U+FFFD."""
    click.echo(_UNSAFE.sub("\ufffd", text), err=err, color=False if os.environ.get("NO_COLOR") else None)


def muted(text: str) -> str:
    return click.style(text, fg="bright_black")


def passed(text: str) -> str:
    return click.style(text, fg="green")


def warned(text: str) -> str:
    return click.style(text, fg="yellow")


def failed(text: str) -> str:
    return click.style(text, fg="red")


def bold(text: str) -> str:
    return click.style(text, bold=True)


def icon(status: str) -> str:
    """The status icon, coloured as bd colours it."""
    mark = STATUS_ICONS.get(status, CUSTOM_ICON)
    colour = _STATUS_COLOURS.get(status)
    return click.style(mark, fg=colour) if colour else mark


def priority(value: Any) -> str:
    """``● P2``: only P0 and P1 draw the eye."""
    number = value if isinstance(value, int) else 0
    colour = _PRIORITY_COLOURS.get(number)
    tag = f"● P{number}"
    return click.style(tag, fg=colour) if colour else tag


def kind_badge(issue_type: Any) -> str:
    """``[epic] `` and ``[bug] ``, the types bd marks in its pretty lines; nothing for the others."""
    if issue_type == "epic":
        return click.style("[epic]", fg="magenta") + " "
    if issue_type == "bug":
        return click.style("[bug]", fg="red") + " "
    return ""


def pretty(issue: Mapping[str, Any]) -> str:
    """bd's pretty line: ``○ bd-1 ● P2 [bug] Title`` (a closed issue's line muted whole)."""
    status = str(issue.get("status") or "open")
    issue_id, title = str(issue["id"]), str(issue.get("title") or "")
    if status == "closed":
        number = issue.get("priority") if isinstance(issue.get("priority"), int) else 0
        rest = muted(f"{issue_id} ● P{number} {issue.get('issue_type') or ''} {title}")
        return f"{icon(status)} {rest}"
    return f"{icon(status)} {issue_id} {priority(issue.get('priority'))} {kind_badge(issue.get('issue_type'))}{title}"


def feedback(issue_id: str, title: str | None) -> str:
    """``bd-1 — Title``, as bd names an issue it acted on."""
    return f"{issue_id} — {title}" if title else issue_id


def feedback_paren(issue_id: str, title: str | None) -> str:
    """``bd-1 (Title)``, as bd names the issues of a dependency."""
    return f"{issue_id} ({title})" if title else issue_id


def go_list(items: list[str]) -> str:
    """A list of strings as Go's ``%v`` prints it: ``[a b]``."""
    return "[" + " ".join(items) + "]"


def _utc(timestamp: Any) -> datetime | None:
    seconds = epoch(timestamp) if isinstance(timestamp, str) else None
    return datetime.fromtimestamp(seconds, UTC) if seconds is not None else None


def day(timestamp: Any) -> str:
    """The UTC date of an RFC 3339 time (``2026-01-31``), or ``?``."""
    moment = _utc(timestamp)
    return moment.strftime("%Y-%m-%d") if moment else "?"


def minute(timestamp: Any) -> str:
    """``2026-01-31 14:05`` (UTC) from an RFC 3339 time, as bd shows a comment's time."""
    moment = _utc(timestamp)
    return moment.strftime("%Y-%m-%d %H:%M") if moment else "?"


def parts(record: Mapping[str, Any]) -> tuple[int, str, str, str]:
    """An issue's priority, type, status and title, as bd's lines show them (task and open when unset)."""
    number = record.get("priority")
    return (
        number if isinstance(number, int) else 0,
        str(record.get("issue_type") or "task"),
        str(record.get("status") or "open"),
        str(record.get("title") or ""),
    )


def who_and_tags(record: Mapping[str, Any]) -> str:
    """`` @assignee [label other]``, the parts a compact line shows when they are set."""
    assignee = f" @{record['assignee']}" if record.get("assignee") else ""
    tags = f" {go_list(sorted(map(str, record['labels'])))}" if record.get("labels") else ""
    return assignee + tags
