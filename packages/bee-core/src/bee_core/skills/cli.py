"""`bee skill bridge add|remove|list`: the only way an instance's skill providers are configured."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click

from bee_core.options import checkout_option, instance_option, json_option

_checkout_option = checkout_option("The checkout whose instance is configured.")
_instance_option = instance_option
_json_option = json_option


@click.group()
def skill() -> None:
    """Skills for bee_skill_search, bee_skill_get and bee_skill_resolve."""


@skill.group()
def bridge() -> None:
    """The skill providers of this instance: local Agent Skills directories and MCP skill servers."""


def _instance(checkout: Path, instance_root: Path | None) -> Any:
    from bee_core.instance import Instance

    instance = Instance.select(checkout.resolve(), instance_root)
    if not instance.exists:
        raise click.ClickException(f"no Bee instance at {instance.root}; run `bee init` first")
    return instance


def _providers(instance: Any) -> list[Any]:
    from bee_core.skills.config import BridgeConfigError, load_bridge

    try:
        return load_bridge(instance)
    except BridgeConfigError as exc:
        raise click.ClickException(str(exc)) from None


def _probe(config: Any) -> dict[str, Any]:
    """Whether the provider answers now: how many skills it lists, or why it does not."""
    from bee_contracts import BeeError
    from bee_core.skills.bridge import ENV_PROVIDER_TIMEOUT, PROVIDER_TIMEOUT_SECONDS, make_provider, run

    provider = make_provider(config)
    timeout = float(os.environ.get(ENV_PROVIDER_TIMEOUT) or PROVIDER_TIMEOUT_SECONDS)

    async def listing() -> Any:
        async with provider.open(timeout) as source:
            return await source.list()

    try:
        found = run(listing)
    except BeeError as exc:
        return {"answers": False, "error": exc.message, "code": exc.code.value}
    return {"answers": True, "skills": len(found.skills), "unreadable": len(found.unreadable)}


def _describe(state: dict[str, Any]) -> str:
    if state["answers"]:
        unreadable = f", {state['unreadable']} unreadable" if state["unreadable"] else ""
        return f"answers: {state['skills']} skills{unreadable}"
    return f"does not answer: {state['error']}"


@bridge.command()
@click.argument("name")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="A local Agent Skills directory: each skill a directory holding a SKILL.md.",
)
@click.option("--mcp", "url", help="The Streamable HTTP URL of an MCP server that serves the Skills extension.")
@click.option("--token-env", help="MCP only: the environment variable the token is read from on every call.")
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="MCP only: the file the token is read from on every call.",
)
@_checkout_option
@_instance_option
def add(  # noqa: PLR0917 -- click hands every option over as a parameter
    name: str,
    directory: Path | None,
    url: str | None,
    token_env: str | None,
    token_file: Path | None,
    checkout: Path,
    instance_root: Path | None,
) -> None:
    """Add provider NAME: a skills directory (--dir) or an MCP skill server (--mcp, with a token source).

    Tokens are never stored: the configuration names the variable or file to read one from. Skill paths from
    this provider start with NAME/.
    """
    from bee_core.skills.config import (
        ENV_NAME_PATTERN,
        BridgeConfigError,
        DirectoryConfig,
        McpConfig,
        check_name,
        check_url,
        save_bridge,
    )

    instance = _instance(checkout, instance_root)
    providers = _providers(instance)
    try:
        check_name(name)
        if (directory is None) == (url is None):
            raise BridgeConfigError("give exactly one of --dir PATH and --mcp URL")
        if directory is not None and (token_env or token_file):
            raise BridgeConfigError("--token-env and --token-file are for --mcp providers")
        if token_env and token_file:
            raise BridgeConfigError("give at most one of --token-env and --token-file")
        if token_env and not ENV_NAME_PATTERN.fullmatch(token_env):
            raise BridgeConfigError(f"--token-env {token_env!r} is not an environment variable name")
        if any(provider.name == name for provider in providers):
            raise BridgeConfigError(f"a provider named {name!r} exists; `bee skill bridge remove {name}` first")
        config: DirectoryConfig | McpConfig
        if directory is not None:
            config = DirectoryConfig(name, str(directory.resolve()))
        else:
            assert url is not None
            config = McpConfig(
                name, check_url(url), token_env, str(token_file.resolve()) if token_file is not None else None
            )
    except BridgeConfigError as exc:
        raise click.UsageError(str(exc)) from None
    save_bridge(instance, [*providers, config])
    click.echo(f"Added skill provider {name!r} ({config.to_json()['kind']}) to {instance.root}")
    if url and urlsplit(url).scheme == "http" and urlsplit(url).hostname not in ("127.0.0.1", "localhost", "::1"):
        click.echo("warning: over http:// the token travels unencrypted; prefer https://", err=True)
    click.echo(f"  {name}: {_describe(_probe(config))}")


@bridge.command()
@click.argument("name")
@_checkout_option
@_instance_option
def remove(name: str, checkout: Path, instance_root: Path | None) -> None:
    """Remove provider NAME (its skills are no longer served; nothing else is touched)."""
    from bee_core.skills.config import save_bridge

    instance = _instance(checkout, instance_root)
    providers = _providers(instance)
    kept = [provider for provider in providers if provider.name != name]
    if len(kept) == len(providers):
        known = ", ".join(provider.name for provider in providers) or "none"
        raise click.ClickException(f"no skill provider named {name!r} (configured: {known})")
    save_bridge(instance, kept)
    click.echo(f"Removed skill provider {name!r}")


@bridge.command(name="list")
@_checkout_option
@_instance_option
@_json_option
def list_(checkout: Path, instance_root: Path | None, as_json: bool) -> None:
    """Each provider, where it is, and whether it answers now (with how many skills it lists)."""
    from bee_core.instance import Instance

    instance = Instance.select(checkout.resolve(), instance_root)
    providers = _providers(instance)
    rows = [{**provider.to_json(), **_probe(provider)} for provider in providers]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo(f"No skill providers in {instance.root}. Add one with `bee skill bridge add NAME --dir PATH`.")
        return
    for provider, row in zip(providers, rows, strict=True):
        where = row.get("path") or row.get("url")
        token = f" (token from ${row['tokenEnv']})" if row.get("tokenEnv") else ""
        token = f" (token from {row['tokenFile']})" if row.get("tokenFile") else token
        click.echo(f"{provider.name}  {row['kind']}  {where}{token}")
        click.echo(f"  {_describe(row)}")
