"""`bee artifact …`: the only way artifacts enter (or leave) an instance; the MCP tools only read them.

Registered from :func:`bee_core.cli.register`. The store needs only the standard library and bee-contracts, so
these commands start fast; ``rich`` is imported only when a progress bar is shown.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, BinaryIO

import click

from bee_core.cli._shared import json_option
from bee_hostkit.options import checkout_option, instance_option

if TYPE_CHECKING:
    from bee_core.artifacts.records import ArtifactRecord, DamagedRecord
    from bee_core.artifacts.store import ArtifactStore

#: Sources at least this large get a progress bar (when stderr is a terminal).
PROGRESS_MIN_BYTES = 16 * 1024 * 1024

_checkout_option = checkout_option("The checkout whose instance holds the artifacts.")
_instance_option = instance_option
_json_option = json_option


def _store(checkout: Path, instance_root: Path | None) -> ArtifactStore:
    from bee_core.artifacts.store import ArtifactStore
    from bee_core.instance import Instance

    instance = Instance.select(checkout.expanduser().resolve(), instance_root)
    if not instance.exists:
        raise click.ClickException(f"no Bee instance at {instance.root}; run `bee init` first")
    return ArtifactStore(instance.path("artifacts"))


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


@click.group()
def artifact() -> None:
    """Retain files (logs, test output, JSON dumps) as artifacts the core host can search, query and read."""


@artifact.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=str))
@click.option("--name", default=None, help="A name to show for the artifact (default: the file's name).")
@click.option("--media-type", default=None, help="The media type to record (default: guessed from name and content).")
@_checkout_option
@_instance_option
@_json_option
def add(
    file: str, *, name: str | None, media_type: str | None, checkout: Path, instance_root: Path | None, as_json: bool
) -> None:
    """Copy FILE (or - for stdin) into the instance; the same bytes added twice are one artifact."""
    store = _store(checkout, instance_root)
    if file == "-":
        source: BinaryIO = sys.stdin.buffer
        total = None
        label = name or "stdin"
    else:
        source = open(file, "rb")  # noqa: SIM115 -- closed below, after the progress bar
        total = os.fstat(source.fileno()).st_size
        label = name or Path(file).name
    with source, _progress(total) as advance:
        added = store.add(source, name=label, media_type=media_type, progress=advance)
    record = added.record
    if as_json:
        click.echo(json.dumps({"outcome": added.outcome, **record.public()}, indent=2))
        return
    facts = f"{record.name}, {_human(record.size)}, {record.kind}, {record.lines} lines, {record.source_sha256}"
    verb = {"added": "Added", "existing": "Already retained:", "repaired": "Repaired (its stored copy had changed):"}
    click.echo(f"{verb[added.outcome]} {record.id} ({facts})")


@contextlib.contextmanager
def _progress(total: int | None) -> Iterator[Callable[[int], None] | None]:
    """A rich progress bar on stderr for large sources, when stderr is a terminal; otherwise nothing."""
    if not sys.stderr.isatty() or (total is not None and total < PROGRESS_MIN_BYTES):
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

    with Progress(
        "ingesting", BarColumn(), DownloadColumn(), TransferSpeedColumn(), console=Console(stderr=True), transient=True
    ) as bar:
        task = bar.add_task("ingest", total=total)
        yield lambda done: bar.advance(task, done)


@artifact.command()
@click.argument("artifact_id", metavar="ID")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Write to this file.")
@click.option("--force", is_flag=True, help="With --out: replace an existing file.")
@_checkout_option
@_instance_option
def get(artifact_id: str, out: Path | None, force: bool, checkout: Path, instance_root: Path | None) -> None:
    """Write the exact bytes of artifact ID to stdout or --out (verified against the recorded sha256)."""
    store = _store(checkout, instance_root)
    record = store.get(artifact_id)
    if out is None:
        store.serve(record, lambda record, path: _copy_verified(store, record, path, sys.stdout.buffer))
        sys.stdout.buffer.flush()
        return
    if out.exists() and not force:
        raise click.ClickException(f"{out} exists; pass --force to replace it or choose another --out")
    temporary = out.parent / f".{out.name}.{secrets.token_hex(4)}.bee-part"
    try:
        with open(temporary, "xb") as sink:
            store.serve(record, lambda record, path: _copy_verified(store, record, path, sink))
            sink.flush()
            os.fsync(sink.fileno())
        os.replace(temporary, out)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
    click.echo(f"Wrote {record.id} ({_human(record.size)}, {record.source_sha256}) to {out}", err=True)


def _copy_verified(store: ArtifactStore, record: ArtifactRecord, path: Path, sink: IO[bytes]) -> None:
    """Copy the stored bytes (at ``path``) to ``sink``, proving on the way that they still hash to the record.

    Raises:
        BeeError: ``hash_mismatch``.
        BytesMissing: the stored file is not there; nothing was written (see :meth:`ArtifactStore.serve`).
    """
    import hashlib

    from bee_core.artifacts.verify import BytesMissing, tampered

    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise BytesMissing(record) from None
    try:
        store.verifier.check_fd(record, fd)
        digest = hashlib.sha256()
        offset = 0
        while chunk := os.pread(fd, 1024 * 1024, offset):
            digest.update(chunk)
            sink.write(chunk)
            offset += len(chunk)
        if digest.hexdigest() != record.sha256:
            raise tampered(record, digest.hexdigest())
    finally:
        os.close(fd)


@artifact.command(name="list")
@_checkout_option
@_instance_option
@_json_option
def list_(checkout: Path, instance_root: Path | None, as_json: bool) -> None:
    """List retained artifacts, oldest first, then any damaged records (on stderr) with how to repair them."""
    store = _store(checkout, instance_root)
    listing = store.list()
    if as_json:
        shown = {
            "artifacts": [record.public() for record in listing.records],
            "damaged": [damaged.public() for damaged in listing.damaged],
        }
        click.echo(json.dumps(shown, indent=2))
        return
    if not listing.records and not listing.damaged:
        click.echo("No artifacts yet; add one with `bee artifact add FILE`.")
        return
    for record in listing.records:
        click.echo(
            f"{record.id}  {record.kind:<6}  {_human(record.size):>9}  {record.lines:>9} lines  "
            f"{record.created}  {record.name}"
        )
    if listing.damaged:
        # On stderr: stdout stays a plain list of sound artifacts for scripts.
        count = len(listing.damaged)
        click.echo(f"{count} damaged record{'s' if count > 1 else ''}, not served and skipped by searches:", err=True)
        for damaged in listing.damaged:
            click.echo(_damage_report(damaged), err=True)


def _damage_report(damaged: DamagedRecord) -> str:
    return f"  {damaged.id}: {damaged.file} is damaged: {damaged.problem}\n    repair: {damaged.repair}"


@artifact.command()
@click.argument("artifact_id", metavar="ID")
@_checkout_option
@_instance_option
def show(artifact_id: str, checkout: Path, instance_root: Path | None) -> None:
    """Print artifact ID's metadata as JSON, with whether its stored bytes are intact (or its record is damaged)."""
    from bee_contracts import BeeError, ErrorCode
    from bee_core.artifacts.records import DamagedRecord

    store = _store(checkout, instance_root)
    found = store.lookup(artifact_id)
    if isinstance(found, DamagedRecord):
        click.echo(json.dumps({**found.public(), "intact": False, "damaged": True}, indent=2))
        return

    def check(record: ArtifactRecord, path: Path) -> ArtifactRecord:
        store.verifier.check(record, path)
        return record

    shown: dict[str, Any] = found.public()
    try:
        shown = store.serve(found, check).public()
        shown["intact"] = True
    except BeeError as exc:
        if exc.code is ErrorCode.NOT_FOUND:  # removed while we looked
            raise click.ClickException(exc.message) from None
        shown["intact"] = False
        shown["problem"] = exc.message
    click.echo(json.dumps(shown, indent=2))


@artifact.command()
@click.argument("artifact_id", metavar="ID")
@_checkout_option
@_instance_option
def rm(artifact_id: str, checkout: Path, instance_root: Path | None) -> None:
    """Remove artifact ID (its record and its stored bytes)."""
    store = _store(checkout, instance_root)
    record = store.remove(artifact_id)
    click.echo(f"Removed {record.id} ({record.name})" if record else f"Removed {artifact_id} (its record was damaged)")
