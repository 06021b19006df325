"""A checkout with an instance whose skill bridge holds a local directory (and optionally a tracker), set up the
way a user does it: with `bee init` and `bee skill bridge add` run as commands."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import bee_executable
from tests.core.skills_helpers import skill_md, write_skill

GIT = skill_md("git-workflow", "Branch and commit the way this team does.")
NOTES = skill_md("release-notes", "Write release notes from merged pull requests.", prerequisites=["git-workflow"])
#: Where a tracker provider's token comes from: the variable the host is started with.
TOKEN_ENV = "BEE_TEST_TRACKER_TOKEN"


def bee(*args: str, cwd: Path) -> str:
    completed = subprocess.run(
        [str(bee_executable()), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout


def skills_directory(root: Path) -> Path:
    write_skill(root, "git-workflow", GIT)
    write_skill(root, "team/release-notes", NOTES)
    write_skill(root, "broken", "---\nname: broken\n---\n")
    return root


def bridge(checkout: Path, skills: Path, tracker: Any | None = None) -> None:
    """`bee init`, then the local directory as provider ``local`` and the tracker (if any) as ``team``."""
    bee("init", cwd=checkout)
    bee("skill", "bridge", "add", "local", "--dir", str(skills), cwd=checkout)
    if tracker is not None:
        bee("skill", "bridge", "add", "team", "--mcp", tracker.url, "--token-env", TOKEN_ENV, cwd=checkout)
