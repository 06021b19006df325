"""`bee skill bridge add|remove|list|trust`: the only way an instance's skill providers are configured.

The configuration is the user's (:mod:`bee_core.skills.config`); a checkout that ships one gets a note on stderr,
once per command, and `trust` adopts it after showing what it would make Bee talk to.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import click

from bee_core.cli._shared import json_option
from bee_hostkit.options import checkout_option, instance_option

if TYPE_CHECKING:
    from bee_core.skills.config import McpConfig

_checkout_option = checkout_option("The checkout whose instance is configured.")
_instance_option = instance_option
_json_option = json_option


@click.group()
def skill() -> None:
    """Skills for bee_skill_search, bee_skill_get and bee_skill_resolve."""


@skill.group()
def bridge() -> None:
    """The skill providers of this instance: local Agent Skills directories and MCP skill servers."""


def _instance(checkout: Path, instance_root: Path | None, *, required: bool = True, note: bool = True) -> Any:
    """The selected instance (which must exist when ``required``); with ``note``, a bridge configuration the
    checkout ships is noted on stderr (once per command: each command calls this once)."""
    from bee_core import trust
    from bee_core.instance import Instance

    instance = Instance.select(checkout.resolve(), instance_root)
    if required and not instance.exists:
        raise click.ClickException(f"no Bee instance at {instance.root}; run `bee init` first")
    ships = trust.find(instance, trust.BRIDGE) if note else None
    if ships is not None:
        click.echo(f"note: {ships.note()}", err=True)
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
def add(  # click passes every parameter by name
    *,
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
        if token_file is not None:
            _check_token_file(token_file.resolve())
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
    saved = save_bridge(instance, [*providers, config])
    click.echo(f"Added skill provider {name!r} ({config.to_json()['kind']}) to {saved}")
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
    from bee_core.skills.config import bridge_path

    instance = _instance(checkout, instance_root, required=False)
    providers = _providers(instance)
    rows = [{**provider.to_json(), **_probe(provider)} for provider in providers]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo(
            f"No skill providers for {instance.root} (in {bridge_path(instance)}). Add one with "
            "`bee skill bridge add NAME --dir PATH`."
        )
        return
    click.echo(f"Skill providers of {instance.root} (from {bridge_path(instance)}):")
    for provider, row in zip(providers, rows, strict=True):
        where = row.get("path") or row.get("url")
        token = f" (token from ${row['tokenEnv']})" if row.get("tokenEnv") else ""
        token = f" (token from {row['tokenFile']})" if row.get("tokenFile") else token
        click.echo(f"{provider.name}  {row['kind']}  {where}{token}")
        click.echo(f"  {_describe(row)}")


def _check_token_file(path: Path) -> None:
    """Refuse a token file that Bee would refuse to read: not the user's own, or readable by others.

    Raises:
        BridgeConfigError: saying why, and what to change.
    """
    from bee_contracts import BeeError
    from bee_core.remote import TokenSource
    from bee_core.skills.config import BridgeConfigError

    try:
        TokenSource(file=path, owner="Bee", whose="the").read()
    except BeeError as exc:
        raise BridgeConfigError(f"--token-file: {exc.message}") from None


def _token_text(config: McpConfig) -> str:
    """Which token an MCP provider would send: the one in a variable, in a file, or none."""
    if config.token_env:
        return f"sends the token in ${config.token_env}"
    if config.token_file:
        return f"sends the token read from the file {config.token_file}"
    return "sends no token"


@bridge.command()
@click.option("--yes", is_flag=True, help="Adopt without asking (for scripts, after reading what it adopts).")
@_checkout_option
@_instance_option
def trust(yes: bool, checkout: Path, instance_root: Path | None) -> None:
    """Adopt the skill bridge configuration this checkout ships (<instance>/skills/bridge.json), on purpose.

    Bee never reads that file by itself: it would choose which servers Bee talks to and which token it sends.
    This shows every provider it names — each URL and where its token would come from, each directory it would
    read — and copies them into your own configuration only when you confirm. It is also how a configuration an
    older Bee wrote into the instance is carried over.
    """
    from bee_core import trust as trusted
    from bee_core.skills.config import BridgeConfigError, McpConfig, bridge_path, parse_bridge, save_bridge

    instance = _instance(checkout, instance_root, note=False)
    found = trusted.find(instance, trusted.BRIDGE, adopted_too=True)
    if found is None:
        click.echo(f"This checkout ships no skill bridge configuration ({instance.path(*trusted.BRIDGE.parts)}).")
        return
    if found.data is None:
        raise click.ClickException(f"{found.path} cannot be adopted: {found.problem}")
    try:
        offered = parse_bridge(found.path, found.data)
    except BridgeConfigError as exc:
        raise click.ClickException(f"{found.path} cannot be adopted: {exc}") from None
    existing = {provider.name: provider for provider in _providers(instance)}
    clashes = [p.name for p in offered if p.name in existing and existing[p.name] != p]
    if clashes:
        raise click.ClickException(
            f"{found.path} names providers you configured differently ({', '.join(clashes)}); nothing was adopted. "
            f"Remove yours first (`bee skill bridge remove {clashes[0]}`) if you want the shipped one"
        )
    new = [provider for provider in offered if provider.name not in existing]
    click.echo(f"{found.path} asks Bee to use these skill providers for this checkout:")
    for provider in offered:
        known = "  (already yours)" if provider.name in existing else ""
        if isinstance(provider, McpConfig):
            click.echo(f"  {provider.name}: the MCP server at {provider.url}; {_token_text(provider)}{known}")
        else:
            click.echo(f"  {provider.name}: the skills directory {provider.path}{known}")
    if new and not yes:
        click.confirm(f"Adopt {len(new)} provider(s) into {bridge_path(instance)}?", abort=True, err=True)
    if new:
        save_bridge(instance, [*existing.values(), *new])
    trusted.adopt(instance, found)
    names = ", ".join(provider.name for provider in new) or "none (every one is configured already)"
    click.echo(f"Adopted: {names}. Your configuration is {bridge_path(instance)}; `bee skill bridge list` checks it.")
