"""A Beads user's real instruction file runs against Bee through the `bd` shim: every `bd` command line of the
AGENTS.md of a public Beads repository (tests/fixtures/agents, see its SOURCES.tsv), in the file's order, run as a
process through the launcher `bee bd install-shim` writes, each asserted to succeed and to do what it says.

The lines run as the file spells them, but for what no shell could run either: the ids the file names as examples
(``<id>``, ``<parent-id>``, ``bd-42``, ``bd-123``) become the issue the agent is working on (the one it claimed last,
else the first `bd ready --json` lists), and a template argument (``-t bug|feature|task``, ``-p 0-4``) runs once per
value it offers. Run on a checkout's own store (found as `bd` finds its ``.beads``: from the working directory) and on
a team's tracker over HTTP (``$BEE_TRACKER_URL``, a real token).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.harness.tracker import TrackerProcess

pytestmark = pytest.mark.e2e

AGENTS_MD = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "edenduthie__infon__AGENTS.md"
BEE = str(Path(sys.executable).parent / "bee")
AGENT = "agent@example.com"

_FENCE = re.compile(r"^[ \t]*```[a-z]*\n(.*?)^[ \t]*```", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"`(bd [^`]+)`")
#: The ids the file gives as examples.
_EXAMPLE_ID = re.compile(r"<[a-z-]*id>|\bbd-\d+\b")
_RANGE = re.compile(r"(\d)-(\d)")


def command_lines(text: str) -> list[str]:
    """Every `bd` command line of a Markdown file, in its order: the lines of its code blocks that start with
    ``bd``, and its inline code spans that do."""
    found: list[tuple[int, str]] = []
    blocks = [(match.start(1), match.end(1)) for match in _FENCE.finditer(text)]
    for start, end in blocks:
        offset = start
        for line in text[start:end].splitlines(keepends=True):
            if line.lstrip().startswith("bd "):  # a block may be indented under a list item
                found.append((offset, line.split("#", 1)[0].strip()))
            offset += len(line)
    for match in _INLINE.finditer(text):
        if not any(start <= match.start() < end for start, end in blocks):
            found.append((match.start(), match.group(1).strip()))
    return [line for _, line in sorted(found)]


def _values(argument: str, after: str | None) -> list[str]:
    """The values a template argument offers (``a|b|c``; ``0-4`` after ``-p``), or the argument itself."""
    if "|" in argument and not argument.startswith("-"):
        return argument.split("|")
    ranged = _RANGE.fullmatch(argument)
    if ranged and after == "-p":
        return [str(n) for n in range(int(ranged[1]), int(ranged[2]) + 1)]
    return [argument]


def expanded(argv: list[str]) -> list[list[str]]:
    """One argument list per value of the templates in ``argv``, taken together in turn."""
    choices = [_values(arg, argv[i - 1] if i else None) for i, arg in enumerate(argv)]
    runs = max(len(values) for values in choices)
    return [[values[n % len(values)] for values in choices] for n in range(runs)]


@dataclass
class Agent:
    """An agent following the file: its shim, where it works, and the issue it is working on."""

    shim: Path
    cwd: Path
    env: dict[str, str]
    working_on: str | None = None
    created: list[str] = field(default_factory=list)

    def run(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        shim = str(self.shim)
        return subprocess.run(
            [shim, *argv], cwd=self.cwd, env=self.env, capture_output=True, text=True, timeout=120, check=False
        )

    def json(self, *argv: str) -> Any:
        done = self.run([*argv, "--json"])
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def issue(self, issue_id: str) -> dict[str, Any]:
        shown: dict[str, Any] = self.json("show", issue_id)[0]
        return shown

    def current(self) -> str:
        """The issue the file's example ids stand for: the one claimed last and still open, else the first ready."""
        if self.working_on is None or self.issue(self.working_on)["status"] == "closed":
            self.working_on = str(self.json("ready")[0]["id"])
        return self.working_on


def _flag(argv: list[str], *names: str) -> str | None:
    for index, arg in enumerate(argv):
        for name in names:
            if arg == name and index + 1 < len(argv):
                return argv[index + 1]
            if arg.startswith(f"{name}="):
                return arg.split("=", 1)[1]
    return None


def _check_create(agent: Agent, argv: list[str], done: subprocess.CompletedProcess[str]) -> None:
    as_json = "--json" in argv
    issue_id = json.loads(done.stdout)["id"] if as_json else done.stdout.split("Created issue: ")[1].split()[0]
    agent.created.append(issue_id)
    issue = agent.issue(issue_id)
    assert issue["title"] == argv[1] and issue["description"] == _flag(argv, "--description")
    assert issue["priority"] == int(_flag(argv, "-p") or 2)
    assert issue["issue_type"] == (_flag(argv, "-t") or "task")
    deps = _flag(argv, "--deps")
    if deps:
        kind, target = deps.split(":")
        assert {"id": target, "dependency_type": kind}.items() <= next(
            d for d in issue["dependencies"] if d["id"] == target
        ).items()


def _check_update(agent: Agent, argv: list[str]) -> None:
    issue = agent.issue(argv[1])
    if "--claim" in argv:
        assert (issue["status"], issue["assignee"]) == ("in_progress", AGENT)
        agent.working_on = argv[1]
    if _flag(argv, "--priority") is not None:
        assert issue["priority"] == int(str(_flag(argv, "--priority")))


def _check(agent: Agent, argv: list[str], done: subprocess.CompletedProcess[str]) -> None:
    """The command worked and did what it says."""
    if argv[0] == "dolt":  # Dolt sync: refused by name, exit 2 (the tracker is one shared store)
        assert done.returncode == 2 and "bd dolt is not supported" in done.stderr, done
        return
    assert done.returncode == 0, (argv, done.stderr)
    if argv[0] == "ready":
        listed = json.loads(done.stdout) if "--json" in argv else None
        assert listed is None or all(issue["status"] == "open" for issue in listed)
        assert listed is not None or done.stdout.strip()
    elif argv[0] == "create":
        _check_create(agent, argv, done)
    elif argv[0] == "update":
        _check_update(agent, argv)
    elif argv[0] == "close":
        issue = agent.issue(argv[1])
        assert (issue["status"], issue["close_reason"]) == ("closed", _flag(argv, "--reason"))
    else:
        raise AssertionError(f"the file runs a bd command this test does not check: {argv}")


def _follow(agent: Agent) -> list[list[str]]:
    """Run every command line of the file as the agent; the argument lists run."""
    ran = []
    for line in command_lines(AGENTS_MD.read_text(encoding="utf-8")):
        for template in expanded(shlex.split(line)[1:]):
            argv = [_EXAMPLE_ID.sub(lambda _: agent.current(), arg) for arg in template]
            before = agent.json("list", "--all", "-n", "0") if argv[0] == "dolt" else None
            _check(agent, argv, agent.run(argv))
            if before is not None:
                assert agent.json("list", "--all", "-n", "0") == before
            ran.append(argv)
    return ran


def _shim(tmp_path: Path) -> Path:
    shims = tmp_path / "shims"
    shims.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    argv = [BEE, "bd", "install-shim", str(shims)]
    installed = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    assert installed.returncode == 0, installed.stderr
    return shims / "bd"


def _env(tmp_path: Path, shim: Path, **extra: str) -> dict[str, str]:
    """An agent's environment: the shim first on PATH (no other bd there), and nothing of this test run's tracker."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("BEE_", "BEADS_", "BD_"))}
    return {**kept, "PATH": f"{shim.parent}{os.pathsep}/usr/bin{os.pathsep}/bin", "BEADS_ACTOR": AGENT, **extra}


def test_the_files_command_lines_are_the_ones_a_beads_agent_is_told_to_run() -> None:
    """The fixture is the instruction file the issue means: bd's own commands for agents, as bd writes them."""
    lines = command_lines(AGENTS_MD.read_text(encoding="utf-8"))
    assert lines[:3] == [
        "bd ready --json",
        'bd create "Issue title" --description="Detailed context" -t bug|feature|task -p 0-4 --json',
        'bd create "Issue title" --description="What this issue is about" -p 1 --deps discovered-from:bd-123 --json',
    ]
    for wanted in ("bd update <id> --claim --json", 'bd close bd-42 --reason "Completed" --json', "bd dolt push"):
        assert wanted in lines
    assert len(lines) == 14


def test_a_beads_agents_md_runs_unchanged_through_the_shim_on_a_checkouts_store(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    (checkout / ".beads").mkdir(parents=True)
    (checkout / ".beads" / "issues.jsonl").write_text("")
    shim = _shim(tmp_path)
    env = _env(tmp_path, shim)
    argv = [BEE, "tracker", "import", ".beads"]
    imported = subprocess.run(argv, cwd=checkout, env=env, capture_output=True, check=False)
    assert imported.returncode == 0, imported.stderr
    agent = Agent(shim, checkout, env)
    ran = _follow(agent)
    _after(agent, ran)


def test_a_beads_agents_md_runs_unchanged_through_the_shim_on_a_teams_tracker(
    tmp_path: Path, store_url: str, tracker_factory: Callable[..., TrackerProcess]
) -> None:
    server = tracker_factory(store_url)
    shim = _shim(tmp_path)
    env = _env(tmp_path, shim, BEE_TRACKER_URL=server.url, BEE_TRACKER_TOKEN=server.token(AGENT))
    agent = Agent(shim, tmp_path, env)
    ran = _follow(agent)
    _after(agent, ran)


def _after(agent: Agent, ran: list[list[str]]) -> None:
    """The session as a whole: every line ran (templates once per value), and the store holds what it made."""
    assert len(ran) == 18  # 14 lines, the create template five times
    assert [argv[:2] for argv in ran if argv[0] == "create"][:5] == [["create", "Issue title"]] * 5
    listed = {issue["id"]: issue for issue in agent.json("list", "--all", "-n", "0")}
    assert set(listed) == set(agent.created) and len(listed) == 7
    closed = [issue for issue in listed.values() if issue["status"] == "closed"]
    assert sorted(issue["close_reason"] for issue in closed) == ["Completed", "Done"]
    found_bug = next(issue for issue in listed.values() if issue["title"] == "Found bug")
    assert found_bug["created_by"] == AGENT


def test_the_templates_expand_as_a_reader_would_fill_them_in() -> None:
    runs = expanded(["create", "T", "-t", "bug|feature|task", "-p", "0-4", "--json"])
    assert [(argv[3], argv[5]) for argv in runs] == [("bug", "0"), ("feature", "1"), ("task", "2"), ("bug", "3"),
                                                      ("feature", "4")]  # fmt: skip
    assert expanded(["update", "x", "--priority", "1"]) == [["update", "x", "--priority", "1"]]
