"""The dead-code check ./dev test runs: vulture over the packages, with the names only a framework uses.

Two kinds of names are used where vulture cannot see: those ``tests/vulture_whitelist.py`` lists, each with who uses
it, and the tool handlers, which the hosts bind from the catalogs by name (:mod:`bee_hostkit.handlers`). The
handlers' names are read from the catalogs here rather than written into the whitelist, so the catalog stays the
only list of tools.

    python -m tests.dead_code [VULTURE ARGS]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bee_contracts import HOSTS, load_catalog

ROOT = Path(__file__).resolve().parents[1]


def handler_names() -> list[str]:
    """Every tool's name: its handler function is named after it."""
    return sorted({spec.name for host in HOSTS for spec in load_catalog(host)})


def main(args: list[str]) -> int:
    command = [
        sys.executable,
        "-m",
        "vulture",
        "packages",
        "tests/vulture_whitelist.py",
        "--min-confidence=60",
        # The generated TypedDicts: clients read their keys, Bee's code does not.
        "--exclude=*/shapes/*",
        # Functions click calls.
        "--ignore-decorators=@*.command,@*.group",
        f"--ignore-names={','.join(handler_names())}",
        *args,
    ]
    return subprocess.run(command, cwd=ROOT, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
