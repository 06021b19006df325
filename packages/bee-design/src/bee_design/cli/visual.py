"""`bee visual …`: visual specs (reference images, compare settings, regions), one-off diffs and reports."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from bee_design.cli._shared import Decorator, checkout_option, echo_json, instance_option, json_option, open_checkout

if TYPE_CHECKING:
    from bee_design.visual.spec import Spec, Tolerance


def _tolerance_options(default: bool) -> Decorator:
    """--threshold, --antialiasing, --max-diff-pixels, --max-diff-ratio (with defaults only where a spec is made)."""

    def wrap(command: Any) -> Any:
        options = [
            click.option(
                "--max-diff-ratio",
                type=click.FloatRange(0, 1),
                default=None,
                help="Most differing pixels allowed, as a share of the compared pixels.",
            ),
            click.option(
                "--max-diff-pixels",
                type=click.IntRange(0),
                default=None,
                help="Most differing pixels allowed" + (" (default 0 when no ratio is given)." if default else "."),
            ),
            click.option(
                "--antialiasing",
                type=click.Choice(["ignore", "count"]),
                default="ignore" if default else None,
                show_default=default,
                help="Leave anti-aliased pixels out of the count, or count them.",
            ),
            click.option(
                "--threshold",
                type=click.FloatRange(0, 1),
                default=0.1 if default else None,
                show_default=default,
                help="Per-pixel colour threshold, 0 (any change) to 1 (pixelmatch's YIQ distance).",
            ),
        ]
        for option in options:
            command = option(command)
        return command

    return wrap


@click.group()
def visual() -> None:
    """Visual specs and reports: reference screenshots, tolerances, regions, comparisons."""


@visual.group()
def spec() -> None:
    """Make and edit visual specs (bee-design/specs/<name>/, committed with the repository)."""


@spec.command()
@click.argument("name")
@click.option(
    "--from",
    "evidence",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="An evidence folder written by `bee design capture`.",
)
@click.option("--element", "elements", multiple=True, help="Take only this element's screenshots; repeat.")
@click.option("--viewport", "viewports", multiple=True, help="Take only this viewport's screenshots; repeat.")
@_tolerance_options(default=True)
@click.option("--update", is_flag=True, help="Replace references of an existing spec (keeping its regions).")
@checkout_option
@instance_option
def create(
    name: str,
    *,
    evidence: Path,
    elements: tuple[str, ...],
    viewports: tuple[str, ...],
    threshold: float,
    antialiasing: str,
    max_diff_pixels: int | None,
    max_diff_ratio: float | None,
    update: bool,
    checkout: Path,
    instance_root: Path | None,
) -> None:
    """Make spec NAME with reference images from an evidence folder and compare settings."""
    from bee_design.visual.authoring import create_spec
    from bee_design.visual.spec import Tolerance

    ctx = open_checkout(checkout, instance_root)
    pixels = 0 if max_diff_pixels is None and max_diff_ratio is None else max_diff_pixels
    tolerance = Tolerance(threshold, antialiasing, pixels, max_diff_ratio)  # type: ignore[arg-type]  # click's Choice gives the literal as str
    made = create_spec(
        ctx.files,
        name,
        evidence.resolve(),
        elements=list(elements),
        viewports=list(viewports),
        compare=tolerance,
        update=update,
    )
    _show(made)


@spec.command()
@click.argument("name")
@click.argument("region")
@click.option("--box", required=True, help="X,Y,WIDTH,HEIGHT in image pixels.")
@click.option("--element", default=None, help="Only for this element (default: every element).")
@click.option("--viewport", default=None, help="Only for this viewport (default: every viewport).")
@click.option("--ignore", is_flag=True, help="Mask the region: nothing in it is judged.")
@_tolerance_options(default=False)
@checkout_option
@instance_option
def region(
    name: str,
    region: str,
    *,
    box: str,
    element: str | None,
    viewport: str | None,
    ignore: bool,
    threshold: float | None,
    antialiasing: str | None,
    max_diff_pixels: int | None,
    max_diff_ratio: float | None,
    checkout: Path,
    instance_root: Path | None,
) -> None:
    """Add (or replace) REGION of spec NAME: an ignore mask, or an area with its own tolerance."""
    from bee_contracts import invalid
    from bee_design.visual.authoring import set_region
    from bee_design.visual.spec import REGION_NAME, Region

    ctx = open_checkout(checkout, instance_root)
    overrides = {
        key: value
        for key, value in (
            ("threshold", threshold),
            ("antialiasing", antialiasing),
            ("maxDiffPixels", max_diff_pixels),
            ("maxDiffRatio", max_diff_ratio),
        )
        if value is not None
    }
    if not REGION_NAME.match(region):
        raise invalid(f"region name {region!r} is not valid; use letters, digits, '.', '_' and '-'")
    parts = box.split(",")
    if len(parts) != 4 or not all(p.strip().isdigit() for p in parts):
        raise invalid(f"--box {box!r} is not X,Y,WIDTH,HEIGHT (four non-negative integers)")
    if ignore and overrides:
        raise invalid("an ignored region has no tolerance; pass --ignore or tolerance options, not both")
    if not ignore and not overrides:
        raise invalid("give the region --ignore, or its own tolerance (--max-diff-pixels, --threshold, …)")
    x, y, w, h = (int(p) for p in parts)
    made = set_region(ctx.files, name, Region(region, element, viewport, (x, y, w, h), ignore, overrides))
    _show(made)


@spec.command(name="remove-region")
@click.argument("name")
@click.argument("region")
@checkout_option
@instance_option
def remove_region(name: str, region: str, *, checkout: Path, instance_root: Path | None) -> None:
    """Remove REGION from spec NAME."""
    from bee_design.visual.authoring import remove_region as remove

    ctx = open_checkout(checkout, instance_root)
    _show(remove(ctx.files, name, region))


@spec.command()
@click.argument("name")
@checkout_option
@instance_option
@json_option
def show(name: str, *, checkout: Path, instance_root: Path | None, as_json: bool) -> None:
    """Print spec NAME."""
    import json

    from bee_design.visual.spec import load_spec

    ctx = open_checkout(checkout, instance_root)
    loaded, _, _ = load_spec(ctx.files, name)
    if as_json:
        echo_json(json.loads(loaded.to_bytes()))
    else:
        _show(loaded)


def _describe(tolerance: Tolerance) -> str:
    limits = []
    if tolerance.max_diff_pixels is not None:
        limits.append(f"≤ {tolerance.max_diff_pixels} px")
    if tolerance.max_diff_ratio is not None:
        limits.append(f"≤ {tolerance.max_diff_ratio:g} of pixels")
    return (
        f"threshold {tolerance.threshold:g}, anti-aliasing {tolerance.antialiasing}, {' and '.join(limits) or '0 px'}"
    )


def _show(made: Spec) -> None:
    click.echo(f"spec {made.name}: {_describe(made.compare)}")
    for reference in made.references:
        click.echo(f"  reference {reference.element} @ {reference.viewport}: {reference.width}×{reference.height}")
    for area in made.regions:
        scope = f"{area.element or '*'} @ {area.viewport or '*'}"
        how = "ignored" if area.ignore else _describe(area.tolerance(made.compare))
        click.echo(f"  region {area.name} {list(area.box)} ({scope}): {how}")


@visual.command()
@click.argument("reference", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("evidence", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=0.1,
    show_default=True,
    help="Per-pixel colour threshold, 0 to 1.",
)
@click.option("--count-aa", is_flag=True, help="Count anti-aliased pixels as differing.")
@json_option
def diff(reference: Path, evidence: Path, threshold: float, count_aa: bool, as_json: bool) -> None:
    """Compare two PNG files of the same size; exit 1 when any pixel differs beyond the threshold."""
    import numpy as np

    from bee_design.visual.boxes import boxes
    from bee_design.visual.diff import check_same_size, compare
    from bee_design.visual.images import decode_rgba, png_size, read_png
    from bee_design.visual.shift import detect_shift

    labels = (reference.name, evidence.name)
    first, second = read_png(reference, reference.name), read_png(evidence, evidence.name)
    check_same_size(png_size(first, labels[0]), png_size(second, labels[1]), labels)  # before decoding either
    before = decode_rgba(first, labels[0])
    after = before if second == first else decode_rgba(second, labels[1])  # the same bytes: decoded once
    found = compare(before, after, threshold=threshold, labels=labels)
    over = found.over(threshold)
    aa = found.antialiased(over) if over.size else np.zeros(0, dtype=bool)
    counted = over if count_aa else over[~aa]
    shift = detect_shift(found, counted, threshold)
    listed, more = boxes(found.width, found.height, found.positions[counted])
    result = {
        "differingPixels": int(counted.size),
        "antialiasedPixels": int(np.count_nonzero(aa)),
        "ratio": round(counted.size / (found.width * found.height), 6),
        "boxes": listed,
        "moreBoxes": more,
        "shift": None if shift is None else {"dx": shift.dx, "dy": shift.dy, "explained": shift.explained},
    }
    if as_json:
        echo_json(result)
    else:
        click.echo(
            f"{result['differingPixels']} pixels differ (ratio {result['ratio']}), "
            f"{result['antialiasedPixels']} anti-aliased"
        )
        for x, y, w, h in listed:
            click.echo(f"  box x={x} y={y} {w}×{h}")
        if shift is not None:
            click.echo(f"  layout shift by ({shift.dx}, {shift.dy}) px ({shift.explained:.0%} explained)")
    if counted.size:
        raise SystemExit(1)


@visual.command()
@click.argument("spec_name", metavar="SPEC")
@click.argument("evidence")
@click.option("--element", "elements", multiple=True, help="Only this element; repeat.")
@click.option("--viewport", "viewports", multiple=True, help="Only this viewport; repeat.")
@checkout_option
@instance_option
@json_option
def report(
    spec_name: str,
    evidence: str,
    *,
    elements: tuple[str, ...],
    viewports: tuple[str, ...],
    checkout: Path,
    instance_root: Path | None,
    as_json: bool,
) -> None:
    """Compare EVIDENCE (a folder, relative to the root) with SPEC: what bee_visual_report returns.

    Exit status: 0 pass, 1 fail, 2 inconclusive. Never approval.
    """
    from bee_design.visual.report import build_report

    ctx = open_checkout(checkout, instance_root)
    result = build_report(ctx.files, spec_name, evidence, list(elements) or None, list(viewports) or None)
    if as_json:
        echo_json(result)
    else:
        summary = result["summary"]
        click.echo(
            f"decision: {result['decision']} ({summary['compared']} compared, {summary['failed']} failed, "
            f"{summary['ignored']} ignored; not approval)"
        )
        for finding in result["findings"]:
            area = finding["region"] or "page"
            click.echo(
                f"  {finding['status']:<7} {finding['element']} @ {finding['viewport']} / {area}: "
                f"{finding['differingPixels']} px ({finding['ratio']:.4%})"
            )
            for reason in finding["reasons"]:
                click.echo(f"          {reason}")
        for item in result["limitations"]:
            click.echo(f"  limitation {item['kind']}: {item['message']}")
    raise SystemExit({"pass": 0, "fail": 1, "inconclusive": 2}[result["decision"]])
