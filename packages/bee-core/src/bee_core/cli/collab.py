"""`bee collab …`: join a tracker space, see whether the binding is live, keep it alive, leave, and adopt a binding
the checkout ships.

Registered from :func:`bee_core.cli.register`. The lease lives on the tracker; the user's settings record which one
(:mod:`bee_core.collab.binding`). Heavy imports (the MCP client) happen inside the commands.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from bee_core.cli._shared import json_option
from bee_hostkit.options import checkout_option, instance_option

if TYPE_CHECKING:
    from bee_core.collab.binding import Binding
    from bee_core.instance import Instance

#: Bounds of a lease's lifetime, as the tracker's lease tools take it.
TTL_MIN, TTL_MAX, TTL_DEFAULT = 1, 86400, 600

#: How long one command may spend talking to the tracker.
COMMAND_SECONDS = 30.0

#: Longest wait before trying again after the tracker could not be reached.
_RETRY_SECONDS = 2.0

_checkout_option = checkout_option("The checkout whose binding this is.")


def existing_instance(checkout: Path, instance_root: Path | None, *, note: bool = True) -> Instance:
    """The checkout's instance, which must exist (`bee init`); with ``note``, a binding the checkout ships is noted
    on stderr (:func:`note_shipped`)."""
    from bee_core.instance import Instance

    instance = Instance.select(checkout.expanduser().resolve(), instance_root)
    if not instance.exists:
        raise click.ClickException(f"no Bee instance at {instance.root}; run `bee init` first")
    if note:
        note_shipped(instance)
    return instance


def note_shipped(instance: Instance) -> None:
    """Say on stderr that the checkout ships a binding Bee ignores, and how to adopt it.

    Once per command: a command that needs a binding and has none fails with an error that says it already, so
    such commands call this only once they have the user's own binding.
    """
    from bee_core import trust

    ships = trust.find(instance, trust.BINDING)
    if ships is not None:
        click.echo(f"note: {ships.note()}", err=True)


def _call(url: str, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The ``data`` of one tracker tool call, as the bearer of ``token``."""
    from bee_core.collab.tracker import Tracker, run
    from bee_hostkit import Deadline

    async def work(tracker: Tracker) -> dict[str, Any]:
        return await tracker.call(tool, arguments)

    return run(url, token, Deadline(COMMAND_SECONDS), work)


def _lease_call(binding: Binding, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One lease tool call for the binding's lease, with the binding's token."""
    return _call(binding.tracker, binding.token(), tool, {"id": binding.lease_id, **arguments})


def _expiry(lease: dict[str, Any]) -> str:
    return f"expires in {lease['expires_in_seconds']:g} s, at {lease['expires_at']} by the tracker's clock"


@click.group()
def collab() -> None:
    """Bind this checkout to a space on a team tracker (a lease the tracker holds and expires), so the core host's
    plan tools may read that space's plans while the binding is live."""


@collab.command()
@click.option("--tracker", "tracker_url", required=True, help="The tracker's MCP endpoint: http(s)://HOST:PORT/mcp.")
@click.option("--space", required=True, help="The space to join: letters, digits, '.', '_', '-' (at most 64).")
@click.option(
    "--ttl",
    "ttl_seconds",
    type=click.IntRange(TTL_MIN, TTL_MAX),
    default=TTL_DEFAULT,
    show_default=True,
    help="Seconds the lease lives without a renewal, by the tracker's clock.",
)
@click.option(
    "--token-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Read the tracker token from this file on every use (only its path is recorded). Default: $BEE_TRACKER_TOKEN.",
)
@_checkout_option
@instance_option
@json_option
def join(
    *,
    tracker_url: str,
    space: str,
    ttl_seconds: int,
    token_file: Path | None,
    checkout: Path,
    instance_root: Path | None,
    as_json: bool,
) -> None:
    """Join SPACE on the tracker: it records a lease for this checkout, and the instance records the binding.

    Joining the space this checkout is already bound to renews its lease while it is live (or makes a new one once
    it has ended), with the token file recorded before unless --token-file names another. To join another space or
    tracker, leave first.
    """
    from bee_core.collab import binding as bindings

    instance = existing_instance(checkout, instance_root)
    url = bindings.checked_tracker_url(tracker_url)
    existing = bindings.load_optional(instance)
    if existing is not None and (existing.tracker, existing.space) != (url, space):
        raise click.ClickException(
            f"this checkout is bound to space {existing.space!r} at {existing.tracker}; run `bee collab leave` first"
        )
    checkout_id = existing.checkout_id if existing else bindings.new_checkout_id()
    # Joining the same space again keeps the token file recorded before, unless another is given.
    tokens = token_file.resolve() if token_file else existing.token_file if existing else None
    lease = _call(
        url,
        bindings.token_source(tokens).read(),
        "lease_join",
        {"space": space, "checkout_id": checkout_id, "ttl_seconds": ttl_seconds},
    )
    joined = bindings.Binding(
        tracker=url,
        space=space,
        lease_id=lease["id"],
        checkout_id=checkout_id,
        holder=lease["holder"],
        ttl_seconds=lease["ttl_seconds"],
        token_file=tokens,
        joined_at=lease["joined_at"],
    )
    saved = bindings.save(instance, joined)
    if as_json:
        click.echo(json.dumps({"binding": joined.to_json(), "lease": lease}, indent=2))
        return
    verb = "Joined" if lease["created"] else "Renewed the binding to"
    click.echo(f"{verb} space {space!r} at {url} as {lease['holder']} (lease {lease['id']}; {_expiry(lease)})")
    click.echo(f"The binding is recorded in {saved}.")
    click.echo("Keep it alive while you work: `bee collab keepalive` (or `bee collab renew` now and then).")


@collab.command()
@_checkout_option
@instance_option
@json_option
def status(checkout: Path, instance_root: Path | None, as_json: bool) -> None:
    """Say whether this checkout's binding is live, asking the tracker (exit status 0 when live, 1 otherwise)."""
    from bee_contracts import BeeError, ErrorCode
    from bee_core.collab import binding as bindings

    instance = existing_instance(checkout, instance_root)
    binding = bindings.load_optional(instance)
    if binding is None:
        if as_json:
            click.echo(json.dumps({"binding": None, "lease": None, "live": False}, indent=2))
        else:
            click.echo("Not joined: this checkout has no collaboration binding (`bee collab join`).")
        sys.exit(1)
    try:
        lease: dict[str, Any] | None = _lease_call(binding, "lease_get", {})
    except BeeError as exc:
        if exc.code is not ErrorCode.NOT_FOUND:
            raise
        lease = None
    live = bool(lease and lease["live"] and lease["checkout_id"] == binding.checkout_id)
    if as_json:
        click.echo(json.dumps({"binding": binding.to_json(), "lease": lease, "live": live}, indent=2))
    elif lease is None:
        click.echo(f"Not live: the tracker no longer knows lease {binding.lease_id} of space {binding.space!r}.")
    elif live:
        click.echo(f"Live: space {binding.space!r} at {binding.tracker} as {lease['holder']}; {_expiry(lease)}.")
    else:
        how = f"left at {lease['left_at']}" if lease["left_at"] else f"expired at {lease['expires_at']}"
        click.echo(f"Not live: the lease of space {binding.space!r} {how}; join again with `bee collab join`.")
    sys.exit(0 if live else 1)


@collab.command()
@click.option(
    "--ttl",
    "ttl_seconds",
    type=click.IntRange(TTL_MIN, TTL_MAX),
    default=None,
    help="Seconds the lease lives from now (default: the lease's own).",
)
@_checkout_option
@instance_option
@json_option
def renew(ttl_seconds: int | None, checkout: Path, instance_root: Path | None, as_json: bool) -> None:
    """Renew this checkout's live lease once. An expired or left lease stays dead: join again."""
    from bee_core.collab import binding as bindings

    instance = existing_instance(checkout, instance_root, note=False)
    binding = bindings.load(instance)
    note_shipped(instance)
    lease = _renew(binding, ttl_seconds)
    if as_json:
        click.echo(json.dumps(lease, indent=2))
    else:
        click.echo(f"Renewed lease {lease['id']} of space {binding.space!r}: {_expiry(lease)}.")


def _renew(binding: Binding, ttl_seconds: int | None) -> dict[str, Any]:
    return _lease_call(binding, "lease_renew", {} if ttl_seconds is None else {"ttl_seconds": ttl_seconds})


@collab.command()
@click.option(
    "--every",
    type=click.FloatRange(0.1, 3600),
    default=None,
    help="Seconds between renewals (default: a third of the lease's ttl).",
)
@_checkout_option
@instance_option
def keepalive(every: float | None, checkout: Path, instance_root: Path | None) -> None:
    """Renew this checkout's lease until stopped (Ctrl-C or SIGTERM: exit status 0), for an agent to run beside its
    work. When the tracker cannot be reached it keeps trying; when the tracker says the lease is no longer live it
    exits with status 1. Stopping it does not leave the space: the lease lapses at its expiry."""
    from bee_contracts import BeeError
    from bee_core.collab import binding as bindings

    instance = existing_instance(checkout, instance_root, note=False)
    binding = bindings.load(instance)
    note_shipped(instance)
    stop = threading.Event()

    def on_signal(*_: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    interval = every or max(binding.ttl_seconds / 3, 0.1)
    click.echo(
        f"Keeping lease {binding.lease_id} of space {binding.space!r} alive, renewing every {interval:g} s; stop "
        "with Ctrl-C or SIGTERM.",
        err=True,
    )
    while not stop.is_set():
        try:
            lease = _renew(binding, None)
        except BeeError as exc:
            if not exc.retryable:
                raise click.ClickException(exc.message) from None
            click.echo(f"renewal failed, retrying: {exc.message}", err=True)
            stop.wait(min(interval, _RETRY_SECONDS))
            continue
        # Renew well before the expiry the tracker reports, whatever interval was asked for.
        stop.wait(min(interval, max(lease["expires_in_seconds"] / 2, 0.05)))
    click.echo("Stopped renewing; the lease lapses at its expiry unless renewed again.", err=True)


@collab.command()
@click.option(
    "--forget",
    is_flag=True,
    help="Remove the binding even when the tracker cannot be told (the lease then lapses at its expiry).",
)
@_checkout_option
@instance_option
def leave(forget: bool, checkout: Path, instance_root: Path | None) -> None:
    """End this checkout's lease on the tracker and remove its binding."""
    from bee_contracts import BeeError, ErrorCode
    from bee_core.collab import binding as bindings

    instance = existing_instance(checkout, instance_root)
    binding = bindings.load_optional(instance)
    if binding is None:
        click.echo("Not joined: there is no binding to leave.")
        return
    try:
        _lease_call(binding, "lease_leave", {})
    except BeeError as exc:
        if exc.code is not ErrorCode.NOT_FOUND and not forget:
            raise click.ClickException(
                f"{exc.message}\nThe binding is kept; to remove it anyway run `bee collab leave --forget`."
            ) from None
        if exc.code is not ErrorCode.NOT_FOUND:
            click.echo(f"could not tell the tracker ({exc.message}); removing the binding anyway", err=True)
    bindings.remove(instance)
    click.echo(f"Left space {binding.space!r} at {binding.tracker}.")


@collab.command()
@click.option("--yes", is_flag=True, help="Adopt without asking (for scripts, after reading what it adopts).")
@_checkout_option
@instance_option
def trust(yes: bool, checkout: Path, instance_root: Path | None) -> None:
    """Adopt the collaboration binding this checkout ships (<instance>/collab.json), on purpose.

    Bee never reads that file by itself: it would choose which tracker Bee talks to and which token it sends.
    This shows the tracker, the space and where the token would come from, and copies the binding into your own
    settings only when you confirm. It is also how a binding an older Bee wrote into the instance is carried over.
    """
    from bee_contracts import BeeError
    from bee_core import trust as trusted
    from bee_core.collab import binding as bindings

    instance = existing_instance(checkout, instance_root, note=False)
    found = trusted.find(instance, trusted.BINDING, adopted_too=True)
    if found is None:
        click.echo(f"This checkout ships no collaboration binding ({instance.path(*trusted.BINDING.parts)}).")
        return
    if found.data is None:
        raise click.ClickException(f"{found.path} cannot be adopted: {found.problem}")
    try:
        offered = bindings.parse(found.path, found.data)
        bindings.checked_tracker_url(offered.tracker)
    except BeeError as exc:
        raise click.ClickException(f"{found.path} cannot be adopted: {exc.message}") from None
    existing = bindings.load_optional(instance)
    if existing is not None and existing != offered:
        raise click.ClickException(
            f"this checkout is bound to space {existing.space!r} at {existing.tracker} already; nothing was adopted "
            "(run `bee collab leave` first if you want the shipped binding)"
        )
    token = f"the token file {offered.token_file}" if offered.token_file else f"${bindings.ENV_TOKEN}"
    click.echo(
        f"{found.path} asks Bee to use the tracker at {offered.tracker} for this checkout: space {offered.space!r}, "
        f"lease {offered.lease_id} held by {offered.holder}, sending the token from {token}."
    )
    if existing is None:
        if not yes:
            click.confirm(f"Adopt it into {bindings.binding_path(instance)}?", abort=True, err=True)
        bindings.save(instance, offered)
    trusted.adopt(instance, found)
    click.echo("Adopted. `bee collab status` asks the tracker whether the binding is live.")
