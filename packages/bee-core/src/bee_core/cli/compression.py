"""`bee compression setup|enable|disable|status`: the only way compression is configured (never over MCP)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from bee_core.cli._shared import json_option
from bee_hostkit.options import checkout_option, instance_option

_checkout_option = checkout_option("The checkout whose instance is configured.")
_instance_option = instance_option
_json_option = json_option


@click.group()
def compression() -> None:
    """Local prose compression for bee_context_compress (offline; off until enabled)."""


@compression.command()
@_checkout_option
@_instance_option
@_json_option
def setup(checkout: Path, instance_root: Path | None, as_json: bool) -> None:
    """Check what the local method needs and say what is missing. Offline: nothing is downloaded."""
    from bee_core.compression.checks import run_checks
    from bee_core.compression.method import METHOD
    from bee_core.instance import Instance

    instance = Instance.select(checkout.resolve(), instance_root)
    checks = run_checks(instance)
    ready = all(check.ok for check in checks)
    if as_json:
        rows = [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in checks]
        click.echo(json.dumps({"method": METHOD, "ready": ready, "checks": rows}, indent=2))
    else:
        click.echo(f"Method {METHOD} (extractive sentence selection + word-frequency pruning, offline)")
        for check in checks:
            click.echo(f"  [{'ok' if check.ok else 'missing'}] {check.name}: {check.detail}")
        if ready:
            click.echo("Ready. Nothing was downloaded. Turn it on with `bee compression enable`.")
        else:
            click.echo("Not ready: fix what is missing above (nothing is ever downloaded implicitly).")
    if not ready:
        raise SystemExit(1)


@compression.command()
@_checkout_option
@_instance_option
def enable(checkout: Path, instance_root: Path | None) -> None:
    """Turn compression on for this instance (after the same checks as setup)."""
    from bee_core.compression.checks import run_checks
    from bee_core.compression.method import METHOD
    from bee_core.compression.settings import save_settings
    from bee_core.instance import Instance

    instance = Instance.select(checkout.resolve(), instance_root)
    missing = [check for check in run_checks(instance) if not check.ok]
    if missing:
        for check in missing:
            click.echo(f"missing {check.name}: {check.detail}", err=True)
        raise click.ClickException("compression was not enabled; `bee compression setup` says what is missing")
    save_settings(instance, enabled=True, method=METHOD)
    click.echo(f"Compression enabled for {instance.root} ({METHOD}). Lossy output is always marked semanticRisk.")


@compression.command()
@_checkout_option
@_instance_option
def disable(checkout: Path, instance_root: Path | None) -> None:
    """Turn compression off: bee_context_compress returns originals unchanged. Retained originals are kept."""
    from bee_core.compression.method import METHOD
    from bee_core.compression.settings import load_settings, save_settings
    from bee_core.instance import Instance

    instance = Instance.select(checkout.resolve(), instance_root)
    if not instance.exists:
        click.echo(f"No Bee instance at {instance.root}: compression is already off.")
        return
    try:
        method = load_settings(instance).method or METHOD
    except ValueError:
        method = METHOD  # a damaged file is replaced by a valid one that says disabled
    save_settings(instance, enabled=False, method=method)
    click.echo(f"Compression disabled for {instance.root}. Retained originals stay recoverable.")


@compression.command()
@_checkout_option
@_instance_option
@_json_option
def status(checkout: Path, instance_root: Path | None, as_json: bool) -> None:
    """Whether compression is on, with which method, and how many originals are retained."""
    from bee_core.compression.method import METHOD
    from bee_core.compression.settings import load_settings
    from bee_core.compression.store import RetentionStore
    from bee_core.instance import Instance

    instance = Instance.select(checkout.resolve(), instance_root)
    try:
        settings = load_settings(instance)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    count, size = RetentionStore(instance).usage()
    state = {
        "instance": str(instance.root),
        "initialized": instance.exists,
        "enabled": settings.enabled,
        "method": settings.method or METHOD,
        "updated": settings.updated or None,
        "retainedOriginals": count,
        "retainedBytes": size,
    }
    if as_json:
        click.echo(json.dumps(state, indent=2))
        return
    where = str(instance.root) if instance.exists else f"{instance.root} (not initialised: run `bee init`)"
    click.echo(f"Instance: {where}")
    click.echo(f"Compression: {'enabled' if settings.enabled else 'disabled'} ({state['method']})")
    click.echo(f"Retained originals: {count} ({size} bytes)")
