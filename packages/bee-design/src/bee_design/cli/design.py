"""`bee design …`: import, map, unmap, list, verify, capture, and the design host itself (`bee design mcp`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from bee_contracts.words import counted
from bee_design.cli._shared import checkout_option, echo_json, instance_option, json_option, open_checkout
from bee_design.registry import DESIGN
from bee_hostkit.options import ServeOptions, serve_options

if TYPE_CHECKING:
    from bee_design.capture.runner import Progress


@click.group()
def design() -> None:
    """Design bundles: import, map to source, capture pages; and the design MCP host."""


@design.command()
@click.option("--stdio", is_flag=True, help="Serve over stdio (the only transport; accepted for editor configs).")
@serve_options(DESIGN, "The checkout to serve: an absolute path to a directory.")
def mcp(options: ServeOptions, stdio: bool) -> None:
    """Serve the four design tools over stdio for an editor or agent (both MCP protocol eras)."""
    del stdio  # stdio is the only transport; the flag is accepted because editor configurations spell it out
    checkout = options.start()
    from bee_design.context import DesignContext
    from bee_design.host import build_host

    options.run(build_host(DesignContext.serving(checkout)), checkout, DESIGN.name)


@design.command(name="import")
@click.argument("bundle", type=click.Path(exists=True, path_type=Path))
@click.option("--id", "bundle_id", default=None, help="The bundle id (default: from the folder or zip name).")
@click.option("--replace", is_flag=True, help="Replace a bundle of this id that holds different content.")
@checkout_option
@instance_option
@json_option
def import_(
    bundle: Path, bundle_id: str | None, replace: bool, *, checkout: Path, instance_root: Path | None, as_json: bool
) -> None:
    """Import BUNDLE (a folder, or a .zip of one, of HTML, CSS, fonts and images) under an immutable manifest."""
    from bee_design.bundle.reading import read_bundle
    from bee_design.bundle.store import BundleStore, default_id

    ctx = open_checkout(checkout, instance_root)
    raw = read_bundle(bundle.resolve())
    outcome = BundleStore(ctx.files).add(raw, bundle_id or default_id(raw.name), replace=replace)
    manifest = outcome.manifest
    if as_json:
        echo_json(
            {
                "bundle": manifest.bundle,
                "status": outcome.status,
                "digest": manifest.digest,
                "files": len(manifest.files),
                "elements": [manifest.qualified(e.id) for e in manifest.elements],
            }
        )
        return
    missing = sum(1 for ref in manifest.references if ref.status == "missing")
    click.echo(
        f"{outcome.status.capitalize()} bundle {manifest.bundle}: {counted(len(manifest.files), 'file')}, "
        f"{counted(len(manifest.elements), 'element')}, {manifest.digest}"
    )
    for element in manifest.elements:
        click.echo(f"  {manifest.qualified(element.id):<48} {element.kind}")
    if missing:
        points = "points" if missing == 1 else "point"
        references = counted(missing, "reference")
        click.echo(f"warning: {references} {points} at files the bundle does not contain (bee design verify)")


@design.command(name="map")
@click.argument("element")
@click.option(
    "--to", "targets", multiple=True, required=True, help="PATH or PATH#SYMBOL, relative to the root; repeat."
)
@checkout_option
@instance_option
def map_(element: str, targets: tuple[str, ...], *, checkout: Path, instance_root: Path | None) -> None:
    """Map ELEMENT (bundle:element) to the source that implements it, recording hashes (bee-design/map.json)."""
    from bee_design.inventory import Inventory, split_id
    from bee_design.mapping import MapFile

    ctx = open_checkout(checkout, instance_root)
    manifest, found = Inventory.load(ctx.files, split_id(element)[0]).element(element)
    mapping = MapFile(ctx.files).map(manifest.qualified(found.id), found.digest, list(targets))
    sources = ", ".join(s.path + (f"#{s.symbol}" if s.symbol else "") for s in mapping.sources)
    click.echo(f"Mapped {mapping.element} to {sources}")


@design.command()
@click.argument("element")
@checkout_option
@instance_option
def unmap(element: str, *, checkout: Path, instance_root: Path | None) -> None:
    """Remove the mapping of ELEMENT (also an orphan whose bundle is gone)."""
    from bee_design.mapping import MapFile

    ctx = open_checkout(checkout, instance_root)
    MapFile(ctx.files).unmap(element)
    click.echo(f"Unmapped {element}")


@design.command(name="list")
@click.option("--bundle", default=None, help="Only this bundle.")
@checkout_option
@instance_option
@json_option
def list_(bundle: str | None, *, checkout: Path, instance_root: Path | None, as_json: bool) -> None:
    """The imported elements and their computed states (what bee_design_list returns)."""
    from bee_design.handlers.design_list import bee_design_list
    from bee_hostkit import local_call

    ctx = open_checkout(checkout, instance_root)
    result = bee_design_list(ctx, local_call("bee_design_list", {"bundle": bundle} if bundle else {}))
    if as_json:
        echo_json(result)
        return
    for entry in result["data"]["bundles"]:
        click.echo(f"{entry['id']}  {counted(entry['fileCount'], 'file')}  {entry['digest']}")
        for element in entry["elements"]:
            why = f"  ({'; '.join(element['reasons'])})" if element["reasons"] else ""
            click.echo(f"  {element['id']:<48} {element['kind']:<9} {element['state']}{why}")
    for orphan in result["data"]["orphans"]:
        click.echo(f"orphan mapping {orphan['id']}: {'; '.join(orphan['reasons'])}")


@design.command()
@click.option("--bundle", default=None, help="Only this bundle (and its mappings).")
@checkout_option
@instance_option
@json_option
def verify(bundle: str | None, *, checkout: Path, instance_root: Path | None, as_json: bool) -> None:
    """Check manifests, stored files, dependencies, mappings and specs; exit 1 on any failure."""
    from bee_design.verify import verify as run

    ctx = open_checkout(checkout, instance_root)
    result = run(ctx.files, bundle)
    data = result["data"]
    if as_json:
        echo_json(result)
    else:
        counts = data["checked"]
        checked = ", ".join(
            counted(count, kind)
            for kind, count in (
                ("bundle", counts["bundles"]),
                ("file", counts["files"]),
                ("element", counts["elements"]),
                ("mapping", counts["mappings"]),
                ("spec", counts["specs"]),
            )
        )
        verdict = "intact" if data["intact"] else counted(len(data["failures"]), "failure")
        click.echo(f"Checked {checked}: {verdict}")
        for failure in data["failures"]:
            click.echo(f"  {failure['check']:<8} {failure['code']:<16} {failure['subject']}: {failure['message']}")
    if not data["intact"]:
        raise SystemExit(1)


@design.command()
@click.argument("urls", nargs=-1, required=True)
@click.option(
    "--viewport",
    "viewports",
    multiple=True,
    default=("desktop=1440x900",),
    show_default=True,
    help="NAME=WIDTHxHEIGHT; repeat for several (one browser serves them all).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The evidence folder (default: <UTC time> in the design state's evidence folder, .bee/design/evidence/).",
)
@click.option("--wait-for", default=None, help="A CSS selector that must be visible before each screenshot.")
@click.option("--full-page", is_flag=True, help="Capture the whole scrollable page, not just the viewport.")
@click.option(
    "--timeout",
    type=click.FloatRange(1, 600),
    default=30.0,
    show_default=True,
    help="Seconds each page may take at each viewport, from navigation to screenshot and fonts; past it the "
    "browser is killed and nothing is kept.",
)
@click.option(
    "--allow-cross-origin-redirect",
    "allow_cross_origin",
    is_flag=True,
    help="Follow a page that redirects or navigates to another origin (scheme, host, port); refused by default.",
)
@click.option("--browser", default=None, help="The Chromium executable (default: $BEE_CHROMIUM or /usr/bin/chromium).")
@click.option("--force", is_flag=True, help="Replace an existing --out folder.")
@checkout_option
@instance_option
@json_option
def capture(
    urls: tuple[str, ...],
    *,
    viewports: tuple[str, ...],
    out: Path | None,
    wait_for: str | None,
    full_page: bool,
    timeout: float,
    allow_cross_origin: bool,
    browser: str | None,
    force: bool,
    checkout: Path,
    instance_root: Path | None,
    as_json: bool,
) -> None:
    """Screenshot each URL (or NAME=URL) at each viewport in Chromium, deterministically, into an evidence folder."""
    from bee_design import layout
    from bee_design.capture.runner import capture as run
    from bee_design.capture.seal import ensure_key
    from bee_design.capture.settings import Settings, browser_executable
    from bee_design.capture.targets import parse_target, parse_viewport

    ctx = open_checkout(checkout, instance_root)
    targets = [parse_target(url) for url in urls]
    settings = Settings(
        executable=browser_executable(browser),
        viewports=tuple(parse_viewport(v) for v in viewports),
        timeout_seconds=timeout,
        allow_cross_origin=allow_cross_origin,
        wait_for=wait_for,
        full_page=full_page,
    )
    if out is None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        out = ctx.files.state_dir(create=True) / layout.EVIDENCE_DIR / stamp
    key = ensure_key(ctx.files)  # before the browser starts: a refused key fails at once
    total = len(targets) * len(settings.viewports)
    with _progress(total) as progress:
        evidence = run(targets, settings, out.resolve(), key=key, force=force, progress=progress)
    if as_json:
        echo_json({"out": str(out), "browser": evidence.browser, "captures": [c.to_json() for c in evidence.captures]})
        return
    shots = counted(len(evidence.captures), "screenshot")
    click.echo(f"Captured {shots} with Chromium {evidence.browser['version']} into {out}")
    for shot in evidence.captures:
        moved = f"  (ended at {shot.final_url})" if shot.final_url not in (None, shot.url) else ""
        click.echo(f"  {shot.file:<40} {shot.image_width}×{shot.image_height}  {shot.sha256}{moved}")


@contextlib.contextmanager
def _progress(total: int) -> Iterator[Progress | None]:
    """A rich progress bar on stderr while several pages are captured (when stderr is a terminal)."""
    from rich.console import Console

    console = Console(stderr=True)
    if total < 2 or not console.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    columns = (TextColumn("[bold]capturing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Bar(*columns, TextColumn("{task.description}"), console=console, transient=True) as bar:
        task = bar.add_task("", total=total)

        def advance(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, description=label)

        yield advance
