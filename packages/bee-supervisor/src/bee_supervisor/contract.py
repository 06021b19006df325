"""The contract check: a host is ready only when the version triple it reports equals the installed one.

The triple is ``version`` (the lockstep version of every Bee package), ``contractVersion`` and ``contractDigest``
(a sha256 over the catalogs, limits and error codes). A host reports it twice, and both must match: the answer of
its ``--version --json`` command, and its handshake — the JSON of ``GET /health`` for an HTTP host, the
``dev.bee/contract`` ``_meta`` stamp of its MCP handshake for a stdio host.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

#: The fields compared, in the order messages name them.
VERSION_KEYS = ("version", "contractVersion", "contractDigest")

VersionInfo = dict[str, str]


def triple(value: Any) -> VersionInfo | None:
    """The version triple in ``value`` (a health body, a stamp, a version answer), or None when it has none."""
    if not isinstance(value, Mapping):
        return None
    found = {key: value[key] for key in VERSION_KEYS if isinstance(value.get(key), str)}
    return found or None


def differences(expected: Mapping[str, str], found: Mapping[str, str] | None) -> list[str]:
    """One phrase per field that differs, e.g. ``version 0.2.0 (installed: 0.1.0)``; empty when all match."""
    if found is None:
        return ["no version triple (version, contractVersion, contractDigest)"]
    return [
        f"{key} {found.get(key, 'missing')} (installed: {expected[key]})"
        for key in VERSION_KEYS
        if found.get(key) != expected[key]
    ]


def refusal(where: str, expected: Mapping[str, str], found: Mapping[str, str] | None) -> str | None:
    """The message that refuses a host whose triple from ``where`` differs from ``expected``; None when equal."""
    differ = differences(expected, found)
    if not differ:
        return None
    return f"refused: {where} reports {'; '.join(differ)} — restart it from the installed Bee, or reinstall"


async def version_answer(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path | None, timeout: float = 60.0, shown: str = ""
) -> VersionInfo | str:
    """Run a ``--version --json`` command; its triple, or a message saying why there is none.

    Messages name the command as ``shown`` (default: ``argv``): the caller passes it as written, so that a secret
    expanded into an argument never reaches a log.
    """
    shown = shown or shlex.join(argv)
    try:
        with anyio.fail_after(timeout):
            completed = await anyio.run_process(
                list(argv), env=dict(env), cwd=cwd, check=False, stdin=subprocess.DEVNULL
            )
    except TimeoutError:
        return f"`{shown}` did not answer within {timeout:.0f} s"
    except OSError as exc:
        return f"`{shown}` could not run: {exc.strerror or exc}"
    if completed.returncode != 0:
        tail = completed.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return f"`{shown}` failed with exit status {completed.returncode}: {tail[0]}"
    try:
        found = triple(json.loads(completed.stdout))
    except ValueError:
        found = None
    if found is None:
        return f"`{shown}` printed no version triple as JSON"
    return found
