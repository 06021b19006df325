"""`bee tracker …`: serve the tracker host, create its home, move Beads JSONL in and out, mint local tokens, and
release a claim on an operator's word; and `bee bd …` (:mod:`bee_tracker.bd`), registered beside it.

Registered through the ``bee.commands`` entry point; heavy imports happen inside the commands.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from bee_contracts.words import counted
from bee_hostkit.http.limits import (
    DEFAULT_HEADER_TIMEOUT_SECONDS,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_CONNECTIONS_PER_PEER,
    DEFAULT_MAX_HEADER_BYTES,
    DEFAULT_MAX_HEADER_LINE_BYTES,
    DEFAULT_MAX_QUEUE_SECONDS,
    DEFAULT_MIN_IN_FLIGHT,
    DEFAULT_REQUEST_TIMEOUT_SECONDS,
    DEFAULT_STREAM_STALL_SECONDS,
)
from bee_tracker.cli_common import config_of as _config
from bee_tracker.cli_common import home_option as _home
from bee_tracker.cli_common import local_store as _local_store
from bee_tracker.cli_common import store_option as _store
from bee_tracker.cli_log import claims, log
from bee_tracker.cli_signin import signin_options, tokens
from bee_tracker.config import DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_TOKEN_LIFETIME_SECONDS, DEFAULT_PORT
from bee_tracker.listening.limits import (
    DEFAULT_LISTEN_BUFFER,
    DEFAULT_MAX_LISTEN_URIS,
    DEFAULT_MAX_LISTENS,
    DEFAULT_MAX_LISTENS_PER_ACTOR,
)
from bee_tracker.model import MAX_LEASE_SECONDS, MIN_LEASE_SECONDS

if TYPE_CHECKING:
    from bee_tracker.store import SqlStore


def register(cli: click.Group) -> None:
    from bee_tracker.bd.cli import register as register_bd

    cli.add_command(tracker)
    register_bd(cli)  # `bee bd …`, Beads' command line on this tracker


@click.group()
def tracker() -> None:
    """The Beads-compatible team tracker (Streamable HTTP + JWT, or OAuth sign-in)."""


tracker.add_command(tokens)
tracker.add_command(log)
tracker.add_command(claims)


def _check_actor(actor: str) -> None:
    """Refuse at once an actor every tracker refuses in a token, rather than mint a token that never works."""
    from bee_tracker.auth import MAX_ACTOR_CHARS, AuthError, checked_actor

    try:
        checked_actor(actor.strip(" "))
    except AuthError:
        raise click.BadParameter(
            f"must be printable text of at most {MAX_ACTOR_CHARS} characters (no control or format characters, "
            "lone surrogates or line breaks), such as an e-mail address",
            param_hint="--actor",
        ) from None


@tracker.command()
@_home
def init(home: Path | None) -> None:
    """Create the tracker home (mode 0700, with a .gitignore) and its signing key (mode 0600); idempotent."""
    from bee_tracker.home import KEY_FILE, ensure_key

    config = _config(home, None)
    _, created = ensure_key(config.home)
    state = "created" if created else "already there"
    click.echo(f"tracker home {config.home}: signing key {config.home / KEY_FILE} {state}")


@tracker.command()
@_home
@_store
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=int, help="Port to listen on.")
@click.option(
    "--fd",
    "fds",
    multiple=True,
    type=click.IntRange(3),
    help="Serve on this inherited listening socket instead of binding --host/--port (repeatable): how "
    "`bee supervise` hands replicas one shared address.",
)
@click.option("--prefix", default=None, help="Id prefix for new issues (default: the imported one, else bd).")
@click.option(
    "--jwt-secret-file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="HS256 shared secret (at least 32 bytes) instead of the embedded default key.",
)
@click.option(
    "--jwt-public-key",
    "jwt_public_key_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="PEM public key (RSA, EC or Ed25519) that verifies tokens.",
)
@click.option("--jwks", default=None, help="JWKS file path or https:// URL that verifies tokens.")
@click.option("--issuer", default=None, help="Required `iss` claim.")
@click.option("--audience", default=None, help="Required `aud` claim.")
@click.option("--actor-claim", default="email", show_default=True, help="Claim naming the actor (falls back to sub).")
@click.option(
    "--max-token-lifetime",
    "max_token_lifetime_seconds",
    default=DEFAULT_MAX_TOKEN_LIFETIME_SECONDS,
    show_default=True,
    type=click.IntRange(60, 366 * 86400),
    help="Longest token lifetime accepted, in seconds (604800 is 7 days): exp further than this from now, or from "
    "iat, is refused.",
)
@signin_options
@click.option(
    "--max-in-flight",
    default=DEFAULT_MAX_IN_FLIGHT,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="Requests to /mcp served at once (one client, a token or else an address, never holds the last tenth of "
    "them, nor more than an equal share once the host is full and others ask); more are answered 503 with "
    "Retry-After at once.",
)
@click.option(
    "--max-queue-seconds",
    default=DEFAULT_MAX_QUEUE_SECONDS,
    show_default=True,
    type=click.FloatRange(0, 60),
    help="Work already admitted that a new /mcp request may wait behind, in seconds of the measured time per "
    "request; more is answered 503 with Retry-After at once (--min-in-flight are always admitted). 0 admits by "
    "--max-in-flight alone.",
)
@click.option(
    "--min-in-flight",
    default=DEFAULT_MIN_IN_FLIGHT,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="Requests to /mcp admitted whatever --max-queue-seconds says (at most --max-in-flight): MCP clients do "
    "not retry a 503, so a burst this size is served as a count would serve it.",
)
@click.option(
    "--max-header-bytes",
    default=DEFAULT_MAX_HEADER_BYTES,
    show_default=True,
    type=click.IntRange(1024, 1024 * 1024),
    help="Request line and headers together, in bytes; more is answered 431.",
)
@click.option(
    "--max-header-line-bytes",
    default=DEFAULT_MAX_HEADER_LINE_BYTES,
    show_default=True,
    type=click.IntRange(256, 1024 * 1024),
    help="One header line or the request line, in bytes; longer is answered 431 (414 for the request line).",
)
@click.option(
    "--request-timeout",
    "request_timeout_seconds",
    default=DEFAULT_REQUEST_TIMEOUT_SECONDS,
    show_default=True,
    type=click.FloatRange(0.1, 3600),
    help="Seconds a client has to send a request's headers and body, from its first byte; slower is answered 408.",
)
@click.option(
    "--header-timeout",
    "header_timeout_seconds",
    default=DEFAULT_HEADER_TIMEOUT_SECONDS,
    show_default=True,
    type=click.FloatRange(0.1, 3600),
    help="Seconds a client has to send a request's headers, from when its connection is accepted (from the first "
    "byte for a later request on it); slower is answered 408, and a connection that sent nothing is closed.",
)
@click.option(
    "--max-http-connections",
    default=DEFAULT_MAX_CONNECTIONS,
    show_default=True,
    type=click.IntRange(1, 1_000_000),
    help="Client connections held open at once, per process (fewer if the file-descriptor limit allows fewer): "
    "beyond it one not in use is closed to make room, or the new one is refused.",
)
@click.option(
    "--max-http-connections-per-peer",
    default=DEFAULT_MAX_CONNECTIONS_PER_PEER,
    show_default=True,
    type=click.IntRange(1, 1_000_000),
    help="Client connections from one address held open at once, per process: beyond it one of that address's not "
    "in use is closed to make room, or the new one is refused.",
)
@click.option(
    "--deadline",
    "deadline_seconds",
    default=30.0,
    show_default=True,
    type=click.FloatRange(0.1, 600),
    help="Per-operation deadline in seconds.",
)
@click.option(
    "--max-connections",
    default=20,
    show_default=True,
    type=click.IntRange(1, 500),
    help="PostgreSQL connection pool size.",
)
@click.option(
    "--claim-ttl",
    type=click.IntRange(MIN_LEASE_SECONDS, MAX_LEASE_SECONDS),
    default=None,
    help="Give every claim that asks for no lease_seconds a lease of this many seconds (at most 604800, 7 days), "
    "renewed by its holder's claims and writes on the issue; once it expires by the database's clock, ready offers "
    "the issue again and the next claim takes it. Default: no lease, claims never expire.",
)
@click.option(
    "--max-listens",
    default=DEFAULT_MAX_LISTENS,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Listen streams (subscriptions/listen) one process holds open, counted apart from --max-in-flight; more "
    "are answered 503 busy.",
)
@click.option(
    "--max-listens-per-actor",
    default=DEFAULT_MAX_LISTENS_PER_ACTOR,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Listen streams one actor holds open in one process; more are refused.",
)
@click.option(
    "--max-listen-uris",
    default=DEFAULT_MAX_LISTEN_URIS,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="Resources one listen stream subscribes to; more are refused.",
)
@click.option(
    "--listen-buffer",
    default=DEFAULT_LISTEN_BUFFER,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Undelivered events a listen stream may hold: a listener that stops reading is ended there (it listens "
    "again and refetches), never buffered without limit.",
)
@click.option(
    "--listen-stall-seconds",
    default=DEFAULT_STREAM_STALL_SECONDS,
    show_default=True,
    type=click.FloatRange(0.1, 3600),
    help="Seconds a listen stream's writes may wait on a client that does not read before its connection is closed.",
)
@click.option(
    "--replica-id",
    default=None,
    help="This process's name in the audit log and on the leases it grants. Default: HOST/PID.",
)
@click.option("--allowed-host", "allowed_hosts", multiple=True, help="Extra Host name accepted (DNS-rebinding guard).")
@click.option("--status", "custom_statuses", multiple=True, help="Register a custom status (repeatable).")
@click.option("--type", "custom_types", multiple=True, help="Register a custom issue type (repeatable).")
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default=lambda: os.environ.get("BEE_LOG_LEVEL", "info"),
    show_default="info, or $BEE_LOG_LEVEL",
)
@click.option("--access-log/--no-access-log", default=False, show_default=True, help="Log each HTTP request line.")
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Worker processes serving one port (PostgreSQL only). --max-in-flight and --max-connections are totals, "
    "divided evenly among them.",
)
@click.option("--spare-fd", type=click.IntRange(3), default=None, hidden=True)
def serve(
    *,
    home: Path | None,
    store_url: str | None,
    log_level: str,
    access_log: bool,
    workers: int,
    fds: tuple[int, ...],
    spare_fd: int | None,
    **values: Any,
) -> None:
    """Serve the tracker tools and the engineering-backlog skill at http://HOST:PORT/mcp (JWT required)."""
    from bee_contracts import BeeError
    from bee_tracker.serving import serve as run

    for fd in fds:
        if not _is_socket(fd):
            raise click.UsageError(f"--fd {fd} is not an open socket this process inherited")
    if fds and workers > 1:
        raise click.UsageError("--fd and --workers do not combine: a supervisor runs one process per inherited socket")
    if spare_fd is not None and (workers > 1 or not fds):
        raise click.UsageError("--spare-fd is the supervisor's: it goes with --fd, and one worker")
    values["allowed_hosts"] = tuple(values["allowed_hosts"])
    values["custom_statuses"] = tuple(values["custom_statuses"])
    values["custom_types"] = tuple(values["custom_types"])
    values["client_metadata_hosts"] = tuple(values["client_metadata_hosts"])
    config = _config(home, store_url, **values)
    try:
        run(config, workers=workers, log_level=log_level, access_log=access_log, fds=fds, spare_fd=spare_fd)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    except BeeError as exc:
        raise click.ClickException(f"the store cannot be used: {exc.message}") from None


def _is_socket(fd: int) -> bool:
    import stat

    try:
        return stat.S_ISSOCK(os.fstat(fd).st_mode)
    except OSError:
        return False


@tracker.command()
@_home
@click.option("--actor", required=True, help="Who the token speaks for (becomes sub and email).")
@click.option(
    "--ttl",
    "ttl_seconds",
    default=8 * 3600,
    show_default=True,
    type=click.IntRange(60, DEFAULT_MAX_TOKEN_LIFETIME_SECONDS),
    help="Lifetime in seconds, at most 604800 (7 days): the longest `serve` accepts by default.",
)
@click.option("--issuer", default=None)
@click.option("--audience", default=None)
def token(home: Path | None, actor: str, ttl_seconds: int, issuer: str | None, audience: str | None) -> None:
    """Mint a token from the home's signing key, for local use. Never creates a key: `bee tracker init` (or the
    first `bee tracker serve`) does."""
    from bee_tracker.auth import mint
    from bee_tracker.home import read_key

    config = _config(home, None)
    _check_actor(actor)
    secret = read_key(config.home)
    click.echo(mint(secret, actor, ttl_seconds=ttl_seconds, issuer=issuer, audience=audience))


@tracker.command(name="open")
@_home
@click.option("--actor", required=True, help="Who signs in (becomes sub and email, as with `bee tracker token`).")
@click.option(
    "--url",
    default=f"http://127.0.0.1:{DEFAULT_PORT}",
    show_default=True,
    help="Where the tracker serves (the board is at URL/board/).",
)
@click.option("--issuer", default=None, help="The `iss` the server requires, if any.")
@click.option("--audience", default=None, help="The `aud` the server requires, if any.")
@click.option("--browser", is_flag=True, help="Also open the link in the default web browser.")
@click.option(
    "--read-only",
    is_flag=True,
    help="Sign in with the tracker:read scope only: the board shows everything but refuses writes, and a consent "
    "given from this session grants a client reading only.",
)
def open_(
    home: Path | None,
    actor: str,
    url: str,
    *,
    issuer: str | None,
    audience: str | None,
    browser: bool,
    read_only: bool,
) -> None:
    """Print a link that signs ACTOR in to the web board: it works once, within 60 seconds. Uses the home's signing
    key, like `bee tracker token`."""
    from urllib.parse import urlencode

    from bee_tracker.board.links import LINK_MAX_SECONDS, mint_link_token
    from bee_tracker.home import read_key

    if not url.startswith(("http://", "https://")):
        raise click.UsageError("--url must start with http:// or https://")
    _check_actor(actor)
    secret = read_key(_config(home, None).home)
    token = mint_link_token(
        secret,
        actor,
        issuer=issuer,
        audience=audience,
        lifetime=LINK_MAX_SECONDS,
        scope="tracker:read" if read_only else None,
    )
    link = f"{url.rstrip('/')}/board/link?{urlencode({'token': token})}"
    click.echo(link)
    click.echo(f"(signs {actor} in once, within {LINK_MAX_SECONDS} seconds)", err=True)
    if browser:
        import webbrowser

        if not webbrowser.open(link):
            click.echo(
                "no web browser could be opened here (none is installed, or there is no display): open the link "
                "above in a browser yourself",
                err=True,
            )


@tracker.command(name="import")
@_home
@_store
@click.option(
    "--discard-changes",
    is_flag=True,
    help="Replace (or delete, for a tombstone) issues the team changed in this tracker since their import: claims, "
    "comments, edits, links and labels made since are discarded, and the report lists them. Without it such an "
    "import is refused, naming the issues.",
)
@click.option(
    "--allow-cycles",
    is_flag=True,
    help="Take dependency cycles (blocks, conditional-blocks, waits-for, parent-child) as they come, as Beads' own "
    "import does, and list them in the report; their issues are never ready. Without it such an import is refused, "
    "naming a cycle.",
)
@click.option(
    "--events",
    "events_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="With a legacy file: the history of its issues, an events.jsonl in bd backup's form (what `bee tracker "
    "export --events` writes). Events the store already holds are not added again.",
)
@click.argument("source", type=click.Path(exists=True, allow_dash=True, path_type=Path))
def import_(
    home: Path | None,
    store_url: str | None,
    *,
    discard_changes: bool,
    allow_cycles: bool,
    events_path: Path | None,
    source: Path,
) -> None:
    """Import Beads data, all of it or nothing: a legacy issues.jsonl (or - for stdin), a bd backup directory
    (.beads/backup), or a .beads directory (or the checkout holding one), whichever form it holds. Refused, with
    nothing imported, when it would discard the team's work on issues imported earlier (the issues it names are
    written to standard output) or close a dependency cycle, unless the option saying so is given."""
    from bee_contracts import BeeError
    from bee_tracker.store import sources

    choice = sources.stdin() if str(source) == "-" else sources.choose(source)
    if events_path is not None:
        if choice.form != "legacy":
            raise click.UsageError(
                f"--events goes with a legacy issues.jsonl; {choice.source.name} is a bd backup, whose own "
                "events.jsonl brings its history"
            )
        choice.events = sources.events_file(events_path)
    from bee_tracker.progress import progress

    store = _local_store(_config(home, store_url))
    try:
        with progress("importing", unit="lines read") as shown:
            report = store.import_from(
                sources.counting(choice, shown.advance), discard_changes=discard_changes, allow_cycles=allow_cycles
            )
    except BeeError as exc:
        if exc.details and "changed" in exc.details:  # every issue and its work, beyond the message's few
            click.echo(json.dumps({"refused": exc.message, "changed": exc.details["changed"]}, indent=2))
        raise
    finally:
        store.close()
    click.echo(json.dumps(report, indent=2))


@tracker.command()
@_home
@_store
@click.option(
    "--events",
    "events_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the whole audit log (every issue's history) to this file, as bd backup's events.jsonl "
    "(written atomically); `bee tracker import --events` reads it back.",
)
@click.argument("target", required=False, type=click.Path(dir_okay=False, path_type=Path))
def export(home: Path | None, store_url: str | None, events_path: Path | None, target: Path | None) -> None:
    """Export every issue as Beads JSONL (the legacy issues.jsonl form) to TARGET (written atomically) or stdout."""
    store = _local_store(_config(home, store_url))
    try:
        if events_path is not None:
            _write_events(store, events_path.resolve())
    except BaseException:
        store.close()
        raise
    from bee_tracker.progress import progress

    count = 0

    def encoded() -> Iterator[bytes]:
        nonlocal count
        batch: list[str] = []
        with progress("exporting", unit="lines") as shown:
            for line in store.iter_export():
                batch.append(line)
                count += 1
                shown.advance()
                if len(batch) >= 1000:
                    yield "".join(f"{item}\n" for item in batch).encode("utf-8")
                    batch.clear()
        yield "".join(f"{item}\n" for item in batch).encode("utf-8")

    try:
        if target is None:
            for piece in encoded():
                click.echo(piece, nl=False)
            return
        from bee_hostkit.files import write_atomic

        target = target.resolve()
        write_atomic(target, encoded())
    finally:
        store.close()
    click.echo(f"exported {counted(count, 'line')} to {target}", err=True)


def _write_events(store: SqlStore, target: Path) -> None:
    """The audit log to ``target`` (atomically), as bd backup's events.jsonl."""
    from bee_hostkit.files import write_atomic
    from bee_tracker.progress import progress

    count = 0

    def encoded() -> Iterator[bytes]:
        nonlocal count
        with progress("exporting events", unit="events") as shown:
            for line in store.iter_events():
                count += 1
                shown.advance()
                yield f"{line}\n".encode()

    write_atomic(target, encoded())
    click.echo(f"exported {counted(count, 'event')} to {target}", err=True)


def _operator() -> str:
    import getpass

    try:
        return f"operator:{getpass.getuser()}"
    except (KeyError, OSError):  # no login name for this uid (a bare container)
        return f"operator:uid-{os.getuid()}"


@tracker.command()
@_home
@_store
@click.argument("issue_id", metavar="ID")
@click.option("--force", is_flag=True, help="Required: release whoever holds the claim (the operator's override).")
@click.option("--reason", required=True, help="Why; recorded in the issue's history and left as a comment.")
@click.option(
    "--actor",
    default=None,
    help="Who releases, as recorded in the history. Default operator:<your login name>.",
)
def release(
    home: Path | None, store_url: str | None, issue_id: str, *, force: bool, reason: str, actor: str | None
) -> None:
    """Release the claim on ID whoever holds it (local, against the store): the operator's override for a holder
    who is gone. Holders release their own claims with the release tool."""

    if not force:
        raise click.UsageError(
            "releasing someone else's claim is an override: add --force (holders release their own claims with the "
            "release tool)"
        )
    if not reason.strip():
        raise click.UsageError("--reason must say why the claim is released")
    from bee_tracker import calls

    store = _local_store(_config(home, store_url))
    try:
        released = calls.release_forced(store, issue_id, actor=actor or _operator(), reason=reason)
    finally:
        store.close()
    click.echo(json.dumps(released, indent=2))


@tracker.command()
@_home
@_store
@click.option(
    "--transitive/--beads",
    "transitive",
    default=None,
    help="--beads (the default): a blocked issue holds back its direct children only, as Beads does. --transitive: "
    "it holds back every descendant (stricter). Without either, print the rule in force.",
)
def rule(home: Path | None, store_url: str | None, *, transitive: bool | None) -> None:
    """Show or choose the ready rule the store is kept by; choosing rebuilds what every issue's readiness is, in one
    transaction, for every tracker serving the store."""
    from bee_tracker.store.readiness import Rule

    store = _local_store(_config(home, store_url))
    try:
        if transitive is not None:
            changed = store.set_rule(Rule(transitive=transitive))
            click.echo("rule changed; readiness rebuilt" if changed else "rule unchanged", err=True)
        current = store.rule()
    finally:
        store.close()
    click.echo(json.dumps({"transitive": current.transitive}))
