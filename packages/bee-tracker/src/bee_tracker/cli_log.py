"""`bee tracker log` and `bee tracker claims`: the store-wide audit log and the claims, read from the store."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

import click

from bee_tracker.cli_common import config_of, home_option, local_store, store_option

#: A relative ``--since``: a number and a unit.
_AGO: Final = re.compile(r"^(\d{1,9})([smhd])$")
_UNITS: Final = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def since_value(text: str) -> str:
    """``--since`` as the log spells a time: an RFC 3339 time as it is, or ``30s``, ``15m``, ``2h``, ``7d`` ago.

    Raises:
        click.BadParameter: neither form.
    """
    from bee_tracker.model import epoch, timestamp

    ago = _AGO.match(text)
    if ago:
        when = datetime.now(UTC) - timedelta(**{_UNITS[ago.group(2)]: int(ago.group(1))})
        return timestamp(when.timestamp())
    seconds = epoch(text) if "T" in text or "t" in text else None
    if seconds is None:
        raise click.BadParameter(
            "give a time such as 2026-05-01T09:00:00Z, or how long ago: 30s, 15m, 2h or 7d", param_hint="--since"
        )
    return timestamp(seconds)


def _changes(changes: Any) -> str:
    return json.dumps(changes, ensure_ascii=False, separators=(",", ":"))


def log_line(entry: dict[str, Any]) -> str:
    """One entry of the log as a line of text: when, who, which tool, which issue, what changed, which replica."""
    replica = f"  [{entry['replica']}]" if entry["replica"] else ""
    return f"{entry['at']}  {entry['actor']}  {entry['tool']}  {entry['issue']}  {_changes(entry['changes'])}{replica}"


def claim_line(claim: dict[str, Any]) -> str:
    """One claim as a line of text: the issue, its holder, and until when it holds (or since when it expired)."""
    if claim["lease_expires_at"] is None:
        until = "no lease (never expires)"
    elif claim["expired"]:
        until = f"EXPIRED at {claim['lease_expires_at']} (the next claim takes it)"
    else:
        until = f"until {claim['lease_expires_at']} ({claim['expires_in_seconds']:.0f} s left)"
    return f"{claim['id']}  {claim['holder']}  {until}  {claim['title']}"


@click.command(name="log")
@home_option
@store_option
@click.option("--actor", default=None, help="Only what this actor did.")
@click.option("--issue", "issue_id", default=None, help="Only what was done to this issue.")
@click.option("--tool", default=None, help="Only what this tool did (claim, update, release --force, …).")
@click.option(
    "--since",
    default=None,
    help="Only what was done at or after this time: RFC 3339 (2026-05-01T09:00:00Z) or how long ago (30s, 15m, "
    "2h, 7d).",
)
@click.option(
    "--limit",
    default=100,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="The newest this many entries, printed oldest first.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of the entries.")
def log(
    home: Path | None,
    store_url: str | None,
    *,
    actor: str | None,
    issue_id: str | None,
    tool: str | None,
    since: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Read the store-wide audit log: every write, with who did it, with which tool, to which issue, what
    changed, when, and which tracker replica wrote it."""
    from bee_tracker.store.audit import Filters

    filters = Filters(actor=actor, issue=issue_id, tool=tool, since=since_value(since) if since else None)
    opened = local_store(config_of(home, store_url))
    try:
        entries = opened.log(filters, limit=limit)
    finally:
        opened.close()
    if as_json:
        click.echo(json.dumps(entries, indent=2, ensure_ascii=False))
        return
    for entry in entries:
        click.echo(log_line(entry))


@click.command()
@home_option
@store_option
@click.option("--stale", is_flag=True, help="Only the claims whose lease has expired (the next claim takes them).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of the claims.")
def claims(home: Path | None, store_url: str | None, *, stale: bool, as_json: bool) -> None:
    """List every claim: the issue, who holds it, and until when its lease holds (by the database's clock), or
    that it expired; those that expire soonest first, claims without a lease last."""
    opened = local_store(config_of(home, store_url))
    try:
        found = opened.claims(stale_only=stale)
    finally:
        opened.close()
    if as_json:
        click.echo(json.dumps(found, indent=2, ensure_ascii=False))
        return
    for claim in found:
        click.echo(claim_line(claim))
