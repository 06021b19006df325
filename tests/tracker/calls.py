"""Calling tracker tools in-process, the way the host does (schema-validated, one actor per call)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import BeeError
from bee_tracker import calls
from bee_tracker.model import epoch
from bee_tracker.store.readiness import whole_second

ALICE, BOB = "alice@example.com", "bob@example.com"


def call(store: Any, tool: str, actor: str = ALICE, /, **args: Any) -> dict[str, Any]:
    """The ``data`` of a successful call of ``tool`` by ``actor`` (an ``actor=`` keyword is a tool argument)."""
    result: dict[str, Any] = calls.call(store, tool, actor, args)
    assert set(result) == {"data"}, result
    data: dict[str, Any] = result["data"]
    return data


def refused(store: Any, code: str, tool: str, actor: str = ALICE, /, **args: Any) -> BeeError:
    """The error of a call that must fail with ``code``."""
    with pytest.raises(BeeError) as info:
        calls.call(store, tool, actor, args)
    assert info.value.code == code, info.value
    return info.value


def created_second(store: Any, issue_id: str) -> float:
    """The issue's creation time in the whole seconds Beads orders by (ready's order: newest second, then id)."""
    created = whole_second(epoch(call(store, "get", ALICE, id=issue_id)["issue"]["created_at"]))
    assert created is not None
    return created


def new(store: Any, title: str = "Task", actor: str = ALICE, /, **args: Any) -> str:
    """Create an issue; return its id."""
    issue_id: str = call(store, "create", actor, title=title, **args)["id"]
    return issue_id


def bee(
    *argv: str, cwd: Path | None = None, env: dict[str, str | None] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed `bee` command as a user would, capturing its output (never raising on failure).

    ``env`` changes the environment: a value replaces a variable, None removes it.
    """
    executable = str(Path(sys.executable).parent / "bee")
    environment = {**os.environ}
    for name, value in (env or {}).items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return subprocess.run(
        [executable, *argv], capture_output=True, text=True, timeout=120, check=False, cwd=cwd, env=environment
    )
