"""The skill bridge configuration of an instance, in the user's settings: ``bridge.json`` of the instance's folder
in ``~/.config/bee/instances/`` (:mod:`bee_contracts.userconfig`), written atomically.

It is per user, never in the checkout: it chooses which servers Bee talks to and which token it sends, so only
the user on this machine may write it (`bee skill bridge add|remove|trust`). A ``skills/bridge.json`` inside the
instance is never read as configuration (:mod:`bee_core.trust`).

It lists the providers `bee skill bridge add` recorded, in the order they were added::

    {"version": 1, "providers": [
      {"name": "local", "kind": "directory", "path": "/home/me/skills"},
      {"name": "team", "kind": "mcp", "url": "https://tracker.example/mcp", "tokenEnv": "BEE_TRACKER_TOKEN"}
    ]}

A token is never stored here: an MCP provider names the environment variable (``tokenEnv``) or the file
(``tokenFile``, absolute, which must be the user's own and private: :class:`bee_core.remote.TokenSource`) its token
is read from, on every call. A file that holds a ``token`` is refused.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bee_contracts import BeeError, ErrorCode
from bee_contracts.userconfig import UserSettings
from bee_core.instance import Instance

#: The bridge's file in the instance's per-user settings folder.
BRIDGE_FILE = "bridge.json"
FORMAT_VERSION = 1

NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")
ENV_NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_DIRECTORY_KEYS = {"name", "kind", "path"}
_MCP_KEYS = {"name", "kind", "url", "tokenEnv", "tokenFile"}


class BridgeConfigError(ValueError):
    """The bridge file, or a provider about to be added, breaks a rule; the message says which and how to fix it."""


@dataclass(frozen=True)
class DirectoryConfig:
    """A local directory of Agent Skills (each skill a directory with a SKILL.md)."""

    name: str
    path: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": "directory", "path": self.path}


@dataclass(frozen=True)
class McpConfig:
    """An MCP server that serves the Skills extension, reached over Streamable HTTP."""

    name: str
    url: str
    token_env: str | None = None
    token_file: str | None = None

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "kind": "mcp", "url": self.url}
        if self.token_env:
            entry["tokenEnv"] = self.token_env
        if self.token_file:
            entry["tokenFile"] = self.token_file
        return entry


ProviderConfig = DirectoryConfig | McpConfig


def bridge_path(instance: Instance) -> Path:
    """Where the instance's bridge configuration lives: in the user's settings, not in the instance."""
    return UserSettings(instance.root).path(BRIDGE_FILE)


def check_name(name: str) -> str:
    """``name`` when it can name a provider (it is the first segment of every skill path it serves).

    Raises:
        BridgeConfigError: it cannot.
    """
    if not NAME_PATTERN.fullmatch(name):
        raise BridgeConfigError(
            f"provider name {name!r} must be 1-63 lower-case letters, digits, '.', '_' or '-', starting with a "
            "letter or digit (it becomes the first part of every skill path, as in local/git-workflow)"
        )
    return name


def check_url(url: str) -> str:
    """``url`` when it is an http(s) URL.

    Raises:
        BridgeConfigError: it is not.
    """
    if not re.fullmatch(r"https?://[^\s/?#]+(/[^\s]*)?", url):
        raise BridgeConfigError(f"{url!r} is not an http:// or https:// URL of an MCP endpoint (such as .../mcp)")
    return url


def _parse(path: Path, raw: Any) -> ProviderConfig:
    if not isinstance(raw, dict):
        raise BridgeConfigError(f"{path}: every provider must be an object")
    if "token" in raw:
        raise BridgeConfigError(
            f"{path}: provider {raw.get('name')!r} holds a token; tokens are never stored in the bridge "
            "configuration. Remove it and name an environment variable (tokenEnv) or a file (tokenFile)"
        )
    kind, keys = raw.get("kind"), set(raw)
    allowed = _DIRECTORY_KEYS if kind == "directory" else _MCP_KEYS if kind == "mcp" else None
    if allowed is None:
        raise BridgeConfigError(f"{path}: provider kind {kind!r} is not 'directory' or 'mcp'")
    if not keys <= allowed or not all(isinstance(raw[key], str) for key in keys):
        raise BridgeConfigError(f"{path}: a {kind} provider has only the text fields {', '.join(sorted(allowed))}")
    name = check_name(raw.get("name", ""))
    if kind == "directory":
        if not raw.get("path") or not os.path.isabs(raw["path"]):
            raise BridgeConfigError(f"{path}: directory provider {name!r} needs an absolute path")
        return DirectoryConfig(name, raw["path"])
    token_env, token_file = raw.get("tokenEnv"), raw.get("tokenFile")
    if token_env and token_file:
        raise BridgeConfigError(f"{path}: provider {name!r} names both tokenEnv and tokenFile; keep one")
    if token_env is not None and not ENV_NAME_PATTERN.fullmatch(token_env):
        raise BridgeConfigError(f"{path}: provider {name!r} has tokenEnv {token_env!r}, not a variable name")
    if token_file is not None and not os.path.isabs(token_file):
        raise BridgeConfigError(f"{path}: provider {name!r} needs an absolute tokenFile")
    return McpConfig(name, check_url(raw.get("url", "")), token_env, token_file)


def load_bridge(instance: Instance) -> list[ProviderConfig]:
    """The configured providers, in the order they were added (none without an instance or a configuration).

    Raises:
        BridgeConfigError: the file is not a bridge configuration (it was edited by hand, or damaged).
        BeeError: ``forbidden`` when the user's settings file or folder is not private to them.
    """
    if not instance.exists:
        return []
    data = UserSettings(instance.root).read(BRIDGE_FILE)
    return [] if data is None else parse_bridge(bridge_path(instance), data)


def parse_bridge(path: Path, data: bytes) -> list[ProviderConfig]:
    """The providers a bridge configuration's bytes list (``path`` names it in messages).

    Raises:
        BridgeConfigError: ``data`` is not a version 1 bridge configuration, or breaks one of its rules.
    """
    try:
        document = json.loads(data)
    except ValueError as exc:
        raise BridgeConfigError(f"{path} cannot be read as JSON ({exc})") from None
    if not isinstance(document, dict) or document.get("version") != FORMAT_VERSION:
        raise BridgeConfigError(f"{path} is not a version {FORMAT_VERSION} skill bridge configuration")
    raw_providers = document.get("providers")
    if not isinstance(raw_providers, list):
        raise BridgeConfigError(f"{path} has no providers list")
    providers = [_parse(path, raw) for raw in raw_providers]
    names = [provider.name for provider in providers]
    if len(set(names)) != len(names):
        raise BridgeConfigError(f"{path} names a provider twice; provider names must be unique")
    return providers


def save_bridge(instance: Instance, providers: list[ProviderConfig]) -> Path:
    """Write the providers to the user's settings, atomically (a reader sees the old configuration or the new one,
    never a part); where they went.

    Raises:
        BeeError: ``forbidden`` when the user's settings folder is not private to them.
    """
    document = {"version": FORMAT_VERSION, "providers": [provider.to_json() for provider in providers]}
    return UserSettings(instance.root).write(BRIDGE_FILE, (json.dumps(document, indent=2) + "\n").encode("utf-8"))


def damaged(exc: BridgeConfigError) -> BeeError:
    """The tool error for a bridge file that cannot be used: the instance's own state is at fault, not the call."""
    return BeeError(ErrorCode.INTERNAL, f"the skill bridge configuration is damaged: {exc}", retryable=False)
