"""`bee setup-mcp`: the entries that start the installed hosts, in each editor's own configuration format.

The hosts come from the ``bee.hosts`` registry (:mod:`bee_contracts.hosts`): every stdio host gets an entry that
starts it in the checkout, and an HTTP host (the tracker) gets one when its URL is given. That entry signs in
through OAuth (the MCP authorization specification): only the URL, no header and no token in the file; the editor
finds where to sign in from the tracker's 401 and opens the browser (a tracker run with ``--sign-in builtin`` or
``idp``; ``bee up`` runs one). For a tracker that takes pasted tokens only, or an editor that cannot sign in
(:attr:`Editor.oauth`), the entry carries an ``Authorization`` header that refers to the token rather than holding
it, in the syntax each editor expands:

============  =========================================  ==============  ===========================
editor        file                                       servers under   token reference
============  =========================================  ==============  ===========================
claude        ``<project>/.mcp.json``                    ``mcpServers``  ``${NAME}``
cursor        ``<project>/.cursor/mcp.json``             ``mcpServers``  ``${env:NAME}``
windsurf      ``~/.codeium/windsurf/mcp_config.json``    ``mcpServers``  ``${env:NAME}``
vscode        ``<project>/.vscode/mcp.json`` (JSONC)     ``servers``     ``${input:bee-tracker-token}``
============  =========================================  ==============  ===========================

Bee's entries are named ``bee-<host>``; nothing else in the file is touched (:mod:`bee_cli.jsonfile`: the change is
spliced into the file's text, only over the bytes that were read, and never outside the project or home folder).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bee_cli.jsonedit import JsonText, Where
from bee_cli.jsonfile import ConfigFileError, Place, json_type, rewrite
from bee_contracts import launch
from bee_contracts.hosts import HostEntry

#: The environment variable the tracker's token is read from by default.
TOKEN_ENV = "BEE_TRACKER_TOKEN"  # noqa: S105 (the variable's name, not a secret)
#: The id of the VS Code input that prompts for the tracker's token (kept in VS Code's secret storage).
TOKEN_INPUT_ID = "bee-tracker-token"  # noqa: S105 (the input's id, not a secret)
#: Every entry Bee writes is named this prefix plus the host's name.
ENTRY_PREFIX = "bee-"

_BEARER_TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")  # RFC 6750's b64token: what a bearer header may carry
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Editor:
    """One editor's MCP configuration format."""

    name: str
    title: str
    #: Where the file is, below the project folder (the home folder when ``per_user``).
    relative: str
    #: The object that maps server names to their entries.
    servers_key: str
    #: The key of a remote server's URL.
    url_key: str = "url"
    #: The ``type`` of stdio and HTTP entries, when the editor wants one.
    stdio_type: str | None = None
    http_type: str | None = None
    #: How a value refers to an environment variable (``{}`` is its name).
    env_reference: str = "${{env:{}}}"
    #: Whether the editor can prompt for the token and keep it in its secret storage (the default there).
    token_prompt: bool = False
    #: Whether the editor reads the file as JSON with comments.
    jsonc: bool = False
    #: Whether the file is the user's, for every project (then entries still start the hosts in one checkout).
    per_user: bool = False
    #: Whether the editor signs in to a remote server through OAuth by itself (from the server's 401 challenge).
    oauth: bool = True

    def place(self, project: Path, home: Path) -> Place:
        if self.per_user:
            return Place(home, self.relative, "your home folder")
        return Place(project, self.relative, "the project")

    def path(self, project: Path, home: Path) -> Path:
        return self.place(project, home).path


EDITORS: dict[str, Editor] = {
    editor.name: editor
    for editor in (
        # Claude Code: project scope; ${VAR} and ${VAR:-default} are expanded in command, args, env, url, headers.
        Editor(
            "claude",
            "Claude Code",
            ".mcp.json",
            "mcpServers",
            stdio_type="stdio",
            http_type="http",
            env_reference="${{{}}}",
        ),
        # Cursor: a server with `command` is stdio, one with `url` is remote; ${env:NAME} is interpolated.
        Editor("cursor", "Cursor", ".cursor/mcp.json", "mcpServers"),
        # Windsurf: one file per user; remote servers take `serverUrl`; ${env:NAME} is interpolated in headers.
        Editor(
            "windsurf",
            "Windsurf",
            ".codeium/windsurf/mcp_config.json",
            "mcpServers",
            url_key="serverUrl",
            per_user=True,
        ),
        # VS Code: `servers` with a `type`, secrets through `inputs` (promptString, password), JSON with comments.
        Editor(
            "vscode",
            "VS Code",
            ".vscode/mcp.json",
            "servers",
            stdio_type="stdio",
            http_type="http",
            token_prompt=True,
            jsonc=True,
        ),
    )
}


@dataclass(frozen=True)
class TrackerAccess:
    """How an editor reaches the tracker: its URL and where its bearer token comes from.

    ``oauth``: the editor signs in itself (no header). Otherwise ``token_env`` names the environment variable the
    editor expands when it connects (None: the editor's own secret prompt, VS Code's input), and ``literal`` is the
    token itself, written into the file only when the user asked for it.
    """

    url: str
    token_env: str | None = None
    literal: str | None = field(default=None, repr=False)
    oauth: bool = False

    def for_editor(self, editor: Editor) -> TrackerAccess:
        """What ``editor`` can use: OAuth only where it signs in itself (else the header, from ``$BEE_TRACKER_TOKEN``
        or VS Code's prompt)."""
        if self.oauth and not editor.oauth:
            return TrackerAccess(self.url, token_env=None if editor.token_prompt else TOKEN_ENV)
        return self


def check_url(url: str) -> str:
    """``url`` if it is an http(s) URL with a host.

    Raises:
        ValueError: it is not.
    """
    found = re.fullmatch(r"https?://[^/?#\s]+(?:[/?#]\S*)?", url)
    if found is None:
        raise ValueError(f"{url!r} is not an http:// or https:// URL (the tracker's is http://HOST:PORT/mcp)")
    return url


def check_token(name: str, value: str | None) -> str:
    """The bearer token held in the environment variable ``name`` (never shown in an error).

    Raises:
        ValueError: the variable is unset or empty, or holds something that cannot be a bearer token.
    """
    if not value:
        raise ValueError(f"${name} is not set: set it to the tracker token (e.g. from `bee tracker token`)")
    if _BEARER_TOKEN.fullmatch(value) is None:
        raise ValueError(f"${name} does not hold a bearer token (letters, digits and -._~+/= only)")
    return value


def check_env_name(name: str) -> str:
    """``name`` if it can name an environment variable.

    Raises:
        ValueError: it cannot.
    """
    if _ENV_NAME.fullmatch(name) is None:
        raise ValueError(f"{name!r} is not an environment variable name (letters, digits and _)")
    return name


def bee_command() -> list[str]:
    """How an editor starts `bee`: the script installed beside this interpreter (an absolute path, because editors
    started from a desktop do not have the virtual environment on their PATH), else this interpreter with -m."""
    # Not resolved: a virtual environment's python is a symlink to the base interpreter, outside the environment.
    script = Path(sys.executable).parent / "bee"
    # The fallback runs in the editor's folder, a checkout: -P keeps that folder off its import path.
    return [str(script)] if script.is_file() else launch.bee()


def entry_name(host: HostEntry) -> str:
    return ENTRY_PREFIX + host.name


def _prompted(tracker: TrackerAccess) -> bool:
    return not tracker.oauth and tracker.literal is None and tracker.token_env is None


def _authorization(editor: Editor, tracker: TrackerAccess) -> str:
    if tracker.literal is not None:
        return f"Bearer {tracker.literal}"
    if tracker.token_env is not None:
        return "Bearer " + editor.env_reference.format(tracker.token_env)
    if not editor.token_prompt:
        raise ValueError(f"{editor.title} cannot prompt for a token: name the environment variable that holds it")
    return f"Bearer ${{input:{TOKEN_INPUT_ID}}}"


def entries(
    editor: Editor,
    hosts: Sequence[HostEntry],
    *,
    checkout: Path,
    command: Sequence[str],
    urls: Mapping[str, TrackerAccess],
) -> dict[str, dict[str, Any]]:
    """Bee's entries for ``editor``: one per stdio host, started as ``command`` + the host's arguments in
    ``checkout``, and one per HTTP host that has an entry in ``urls``."""
    found: dict[str, dict[str, Any]] = {}
    for host in hosts:
        entry: dict[str, Any] = {}
        if host.transport == "stdio":
            if editor.stdio_type:
                entry["type"] = editor.stdio_type
            entry["command"] = command[0]
            entry["args"] = [*command[1:], *host.argv(checkout)]
        elif host.name in urls:
            access = urls[host.name].for_editor(editor)
            if editor.http_type:
                entry["type"] = editor.http_type
            entry[editor.url_key] = access.url
            # Signing in through OAuth, the entry carries no header: the editor finds where from the 401.
            entry["headers"] = {} if access.oauth else {"Authorization": _authorization(editor, access)}
        else:
            continue
        found[entry_name(host)] = entry
    return found


def mint_command(command: Sequence[str], project: Path) -> str:
    """The shell command that prints a token of the project's local tracker, working pasted into a new shell
    anywhere: `bee` as ``command`` starts it (an absolute path), and the project's tracker home when it has one
    (:func:`bee_contracts.layout.tracker_home`; `bee tracker token` would otherwise look for it from the shell's
    folder)."""
    from bee_contracts import BeeError
    from bee_contracts.layout import ENV_TRACKER_HOME, TRACKER_KEY_FILE, tracker_home

    try:
        home: Path | None = tracker_home(project).resolve()
    except BeeError:
        home = None
    if home is not None and not os.environ.get(ENV_TRACKER_HOME) and not (home / TRACKER_KEY_FILE).is_file():
        home = None  # no local tracker here: the command finds the one the user means
    where = ["--home", str(home)] if home is not None else []
    return shlex.join([*command, "tracker", "token", *where, "--actor", "you@example.com"])


def token_input(mint: str) -> dict[str, Any]:
    """The VS Code input that prompts once for the tracker's token and keeps it in VS Code's secret storage; its
    description names ``mint``, the command that prints one for a local tracker (:func:`mint_command`)."""
    return {
        "type": "promptString",
        "id": TOKEN_INPUT_ID,
        "description": f"Bee tracker token, a JWT. For a local tracker, what this command prints: {mint}",
        "password": True,
    }


Action = Literal["added", "updated", "unchanged", "removed"]


@dataclass(frozen=True)
class Change:
    name: str
    action: Action


def _container(document: JsonText, key: str, empty: dict[str, Any] | list[Any], path: Path) -> None:
    """Make sure the top-level ``key`` holds an object (array, for ``empty`` a list), adding an empty one.

    Raises:
        ConfigFileError: it holds something else.
    """
    if not document.has((key,)):
        document.put((key,), empty)
        return
    value = document.get((key,))
    if not isinstance(value, type(empty)):
        kind = "an object" if isinstance(empty, dict) else "an array"
        raise ConfigFileError(path, f'"{key}" is a JSON {json_type(value)}, not {kind}; fix it')


def _is_token_input(item: Any) -> bool:
    return isinstance(item, dict) and item.get("id") == TOKEN_INPUT_ID


def _merge_entry(document: JsonText, where: Where, ours: dict[str, Any]) -> bool:
    """Set Bee's keys in the entry at ``where``; keys the user added stay, and so do headers Bee does not set. An
    entry that signs in through OAuth (``headers`` empty) loses the ``Authorization`` header an earlier setup wrote
    (and ``headers`` when nothing else is left in it). Whether anything changed."""
    changed = False
    for key, value in ours.items():
        inner = (*where, key)
        if key == "headers" and document.has(inner) and isinstance(document.get(inner), dict):
            for header, text in value.items():
                changed = document.put((*inner, header), text) or changed
            if not value:
                changed = document.delete((*inner, "Authorization")) or changed
                if not document.get(inner):
                    changed = document.delete(inner) or changed
        elif key == "headers" and not value:
            continue  # nothing to add
        else:
            changed = document.put(inner, value) or changed
    return changed


def merge(
    document: JsonText,
    editor: Editor,
    wanted: dict[str, dict[str, Any]],
    *,
    path: Path,
    prompt: dict[str, Any] | None = None,
) -> list[Change]:
    """Set Bee's entries in ``document``, and ``prompt`` as the input that prompts for the token (VS Code's
    :func:`token_input`); once the tracker's entry signs in through OAuth, the input Bee added earlier for it is taken
    out (nothing asks for it now).

    Raises:
        ConfigFileError: the servers (or inputs) are not an object (array), or an entry Bee owns is not an object.
    """
    changes = []
    _container(document, editor.servers_key, {}, path)
    for name, ours in wanted.items():
        where = (editor.servers_key, name)
        if not document.has(where):
            document.put(where, {key: value for key, value in ours.items() if value != {}})
            changes.append(Change(name, "added"))
            continue
        existing = document.get(where)
        if not isinstance(existing, dict):
            raise ConfigFileError(
                path, f'"{editor.servers_key}.{name}" is a JSON {json_type(existing)}, not an object; fix or remove it'
            )
        changes.append(Change(name, "updated" if _merge_entry(document, where, ours) else "unchanged"))
    if prompt is not None:
        _container(document, "inputs", [], path)
        at = next((k for k, item in enumerate(document.get(("inputs",))) if _is_token_input(item)), None)
        if at is None:
            document.append(("inputs",), prompt)
            changes.append(Change(f"input {TOKEN_INPUT_ID}", "added"))
        elif _merge_entry(document, ("inputs", at), prompt):
            changes.append(Change(f"input {TOKEN_INPUT_ID}", "updated"))
    elif any(entry.get("headers") == {} for entry in wanted.values()):  # the tracker now signs in by itself
        changes += _remove_inputs(document)
    return changes


def remove(document: JsonText, editor: Editor, names: Sequence[str]) -> list[Change]:
    """Remove Bee's entries ``names`` (and VS Code's token input) from ``document``; everything else stays."""
    changes = []
    if document.has((editor.servers_key,)) and isinstance(document.get((editor.servers_key,)), dict):
        for name in names:
            if document.delete((editor.servers_key, name)):
                changes.append(Change(name, "removed"))
    return changes + _remove_inputs(document)


def _remove_inputs(document: JsonText) -> list[Change]:
    """Take Bee's token input out of ``document`` (and ``inputs`` when that empties it)."""
    inputs = document.get(("inputs",)) if document.has(("inputs",)) else None
    if not isinstance(inputs, list):
        return []
    ours = [k for k, item in enumerate(inputs) if _is_token_input(item)]
    for at in reversed(ours):
        document.delete(("inputs", at))
    if not ours:
        return []
    if not document.get(("inputs",)):  # emptied by taking Bee's input out: an empty list says nothing
        document.delete(("inputs",))
    return [Change(f"input {TOKEN_INPUT_ID}", "removed")]


@dataclass
class Outcome:
    """What `setup-mcp` did to one file."""

    path: Path
    changes: list[Change]
    written: bool
    #: HTTP hosts left out because no URL was given for them.
    skipped: list[str] = field(default_factory=list)


def apply(
    editor: Editor,
    hosts: Sequence[HostEntry],
    *,
    project: Path,
    home: Path,
    command: Sequence[str],
    urls: Mapping[str, TrackerAccess],
    removing: bool = False,
) -> Outcome:
    """Merge Bee's entries into ``editor``'s file (or, ``removing``, take them out) and write it if it changed.

    A tracker whose ``token_env`` is None is given VS Code's token prompt (other editors refuse it), which names
    the command that prints a local tracker's token (:func:`mint_command`, with ``command`` as `bee`).

    Removing never creates a file. The change is spliced into the file's text (every byte it does not touch stays
    as it was) and written only over the bytes it was made from (:func:`bee_cli.jsonfile.rewrite`); one holding a
    literal token is made readable by its owner only.

    Raises:
        ConfigFileError: the file is not valid JSON (JSONC for VS Code), has an unexpected shape, is read-only, lies
            outside the project (home folder) through a symlink, or kept changing while Bee wrote it.
        ValueError: ``urls`` names a host that is not an installed HTTP host, or asks for a prompt the editor lacks,
            or the project's path (or `bee`'s) is not UTF-8.
        OSError: the file cannot be written.
    """
    http_hosts = {host.name for host in hosts if host.transport == "http"}
    unknown = sorted(set(urls) - http_hosts)
    if unknown:
        raise ValueError(f"no installed HTTP host is named {', '.join(unknown)}: install its package (bee-tracker)")
    for name in (str(project), *command):
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:  # bytes that are not UTF-8, which Python keeps as lone surrogates
            raise ValueError(
                f"{name!r} is not valid UTF-8, and editors read their configuration as UTF-8: rename it"
            ) from None
    place = editor.place(project, home)
    wanted = entries(editor, hosts, checkout=project, command=command, urls=urls)
    shown = [access.for_editor(editor) for access in urls.values()]
    prompt = token_input(mint_command(command, project)) if any(map(_prompted, shown)) else None
    changes: list[Change] = []

    def edit(document: JsonText | None) -> JsonText | None:
        nonlocal changes
        if document is None:
            if removing:
                changes = []
                return None
            document = JsonText("", jsonc=editor.jsonc)
        if removing:
            changes = remove(document, editor, [entry_name(host) for host in hosts])
        else:
            changes = merge(document, editor, wanted, path=place.path, prompt=prompt)
        return document

    secret = any(access.literal for access in urls.values()) and not removing
    written = rewrite(place, edit, jsonc=editor.jsonc, secret=secret)
    return Outcome(place.path, changes, written=written, skipped=_skipped(hosts, urls, removing))


def _skipped(hosts: Sequence[HostEntry], urls: Mapping[str, TrackerAccess], removing: bool) -> list[str]:
    if removing:
        return []
    return [entry_name(host) for host in hosts if host.transport == "http" and host.name not in urls]
