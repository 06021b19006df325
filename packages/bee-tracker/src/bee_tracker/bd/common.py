"""What every `bee bd` command shares: its options object, ``--json``, bd's spellings of priorities, types and
label lists, the refusal of what Bee does not do, and the one way an answer is printed."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import click

from bee_tracker.bd import gojson
from bee_tracker.bd.human import say
from bee_tracker.bd.session import Options, Tracker

F = TypeVar("F", bound=Callable[..., Any])

#: bd's short names for issue types (``utils.NormalizeIssueType``, and create's ``enhancement``).
TYPE_ALIASES = {
    "mr": "merge-request",
    "feat": "feature",
    "enhancement": "feature",
    "mol": "molecule",
    "dec": "decision",
    "adr": "decision",
}


class Unsupported(click.ClickException):
    """What bd does and Bee does not: said by name, exit status 2, nothing changed."""

    exit_code = 2

    def __init__(self, what: str, why: str) -> None:
        super().__init__(f"{what} is not supported by bee bd: {why}. Nothing was changed")


#: Where the `bee bd` group leaves its :class:`~.session.Options` for its commands (the context's ``meta``).
OPTIONS = "bee.bd.options"


def options() -> Options:
    """The options of the running `bee bd` command."""
    found = click.get_current_context().meta.get(OPTIONS)
    return found if isinstance(found, Options) else Options()


def tracker() -> Tracker:
    """The tracker the running command works on (opened on first use)."""
    return options().tracker()


def _set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    found = ctx.meta.get(OPTIONS)
    if value and isinstance(found, Options):
        found.as_json = True


def json_flag(function: F) -> F:
    """``--json`` on a command, as bd accepts it after the command as well as before it."""
    return click.option("--json", is_flag=True, expose_value=False, callback=_set_json, help="Output in JSON format.")(
        function
    )


def emit(value: Any) -> None:
    """Print ``value`` as bd's ``--json`` does (:func:`.gojson.answer`)."""
    click.echo(gojson.answer(value), nl=False)


class PriorityType(click.ParamType[int]):
    """A priority as bd reads one: 0 to 4, or P0 to P4."""

    name = "priority"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip()
        digits = text[1:] if text[:1] in ("P", "p") else text
        if digits.isdigit() and 0 <= int(digits) <= 4:
            return int(digits)
        self.fail(f"invalid priority {text!r}: use 0-4 or P0-P4 (0 is critical, 4 the backlog)", param, ctx)


PRIORITY = PriorityType()


def issue_type(value: str | None) -> str | None:
    """A type as bd spells it, its short names expanded."""
    if value is None:
        return None
    text = value.strip().lower()
    return TYPE_ALIASES.get(text, text) or None


def labels(values: Iterable[str]) -> list[str]:
    """Labels as bd reads ``-l``: comma-separated or repeated, trimmed, empty ones dropped, each once."""
    found: dict[str, None] = {}
    for value in values:
        for label in value.split(","):
            if label.strip():
                found[label.strip()] = None
    return list(found)


def words(values: Iterable[str]) -> list[str]:
    """Comma-separated or repeated values (statuses, ids), trimmed, empty ones dropped."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def note(text: str) -> None:
    """A line for people on stderr, whatever the answer's format."""
    say(text, err=True)
