"""A checkout joined to a space on a real tracker, as a user gets one: `bee init`, a token file, `bee collab join`.

Plans are built with the tracker's own tools over MCP (the official client, real tokens), the way `bee plan` does,
so tests of the readers do not depend on the writers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bee_contracts.userconfig import UserSettings
from tests.conftest import make_checkout
from tests.harness.tracker import TrackerProcess, tracker_client

ALICE, BOB = "alice@example.com", "bob@example.com"


def bee(
    *argv: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """The installed `bee` run in ``cwd`` (``env`` adds to the environment), never raising on failure."""
    executable = str(Path(sys.executable).parent / "bee")
    return subprocess.run(
        [executable, *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def bee_here(*argv: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`bee ARGV` as :func:`bee` runs it, but in this process: the click group the console script runs, in ``cwd``
    with ``env`` laid over the environment, its exit code and its two streams.

    A `bee collab` process spends about a second of CPU importing the MCP client before it does anything, and the
    collaboration tests run dozens of commands; what only a process shows (a signal, the environment it inherits)
    keeps :func:`bee`. An exception the command did not turn into an exit code is raised here: a real `bee` would
    have printed a traceback, which no test expects. The command runs in a thread of its own, so that a test on an
    event loop can call it (commands run their own loop); the caller waits, so the working directory and the
    environment it changes are seen by nothing else.
    """
    import contextlib
    import threading

    from click.testing import CliRunner, Result

    from bee_cli.group import make_cli

    outcome: list[Result] = []

    def run() -> None:
        with contextlib.chdir(cwd):
            outcome.append(CliRunner().invoke(make_cli(), list(argv), env=env, prog_name="bee"))

    thread = threading.Thread(target=run, name="bee " + " ".join(argv[:2]))
    thread.start()
    thread.join()
    [result] = outcome
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(["bee", *argv], result.exit_code, result.stdout, result.stderr)


@dataclass
class Joined:
    """A checkout bound to ``space`` on ``tracker`` as ``actor``, whose token is in ``token_file``."""

    checkout: Path
    tracker: TrackerProcess
    token_file: Path
    actor: str
    space: str

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()

    def bee(self, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """`bee ARGV` in this checkout, in this process (:func:`bee_here`)."""
        return bee_here(*argv, cwd=self.checkout, env=env)

    def bee_process(self, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """`bee ARGV` in this checkout, as a process of its own (:func:`bee`)."""
        return bee(*argv, cwd=self.checkout, env=env)

    @property
    def binding_file(self) -> Path:
        """Where `bee collab join` recorded the binding: the user's settings for the checkout's instance."""
        return UserSettings(self.checkout / ".bee").path("collab.json")

    def binding(self) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(self.binding_file.read_text())
        return found

    async def calls(self, *calls: tuple[str, dict[str, Any]], actor: str | None = None) -> list[dict[str, Any]]:
        """The ``data`` of each tracker tool call, made in order as ``actor`` (default: this checkout's)."""
        token = self.token if actor in (None, self.actor) else self.tracker.token(actor or "")
        answers = []
        async with tracker_client(self.tracker.url, token) as client:
            for tool, arguments in calls:
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, (tool, arguments, result.content)
                answers.append(result.structured_content["data"])
        return answers

    async def lease(self) -> dict[str, Any]:
        [lease] = await self.calls(("lease_get", {"id": self.binding()["leaseId"]}))
        return lease


def join(
    tmp_path: Path,
    tracker: TrackerProcess,
    *,
    actor: str = ALICE,
    space: str = "team",
    ttl: int = 600,
    name: str = "checkout",
) -> Joined:
    """A fresh copy of the sample checkout, initialised and joined to ``space``."""
    checkout = make_checkout(tmp_path / name)
    token_file = tmp_path / f"{name}.token"
    token_file.write_text(tracker.token(actor) + "\n")
    token_file.chmod(0o600)
    for argv in (
        ("init",),
        (
            "collab",
            "join",
            "--tracker",
            tracker.url,
            "--space",
            space,
            "--ttl",
            str(ttl),
            "--token-file",
            str(token_file),
        ),
    ):
        done = bee_here(*argv, cwd=checkout)
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
    return Joined(checkout, tracker, token_file, actor, space)


async def sample_plan(joined: Joined) -> dict[str, str]:
    """A plan of six steps in every state, ordered against their numbering; returns the ids by step name.

    ``build`` (.1) comes after ``design`` (.2), which Bob completed; Bob holds ``build``; ``test`` (.3) waits on it;
    ``docs`` (.4) and ``changelog`` (.5) are ready; ``polish`` (.6) is blocked by its status.
    """
    [plan] = await joined.calls(
        ("create", {"title": "Ship search", "issue_type": "epic", "labels": [f"space:{joined.space}"]})
    )
    plan_id = plan["id"]
    names = ["build", "design", "test", "docs", "changelog", "polish"]
    created = await joined.calls(
        *(
            ("create", {"title": name.title(), "parent": plan_id, "acceptance_criteria": f"{name} is done"})
            for name in names
        )
    )
    ids = {name: step["id"] for name, step in zip(names, created, strict=True)}
    await joined.calls(
        ("link", {"id": ids["build"], "target": ids["design"]}),
        ("link", {"id": ids["test"], "target": ids["build"]}),
        ("update", {"id": ids["polish"], "status": "blocked"}),
    )
    await joined.calls(
        ("claim", {"id": ids["design"]}),
        ("complete", {"id": ids["design"], "summary": "reviewed"}),
        ("claim", {"id": ids["build"]}),
        actor=BOB,
    )
    return {"plan": plan_id, **ids}
