"""The code before a change, for benchmarks that measure before and after in one run.

:func:`export` writes the ``packages/`` folder of a commit (``git archive``) into a folder of the caller's, so a
benchmark can import the old modules beside the new ones, or run the old ``bee`` with the old sources first on
``PYTHONPATH``. The commit is :data:`BASELINE` unless ``BEE_BENCH_BASELINE`` names another; a checkout without it (a
shallow clone) gets None, and the benchmark reports the new numbers alone.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The main branch before issue 20's diff kernel and tracker start-up work.
BASELINE = os.environ.get("BEE_BENCH_BASELINE", "a096cef62e6250d9e65ce36b6ad86f4c2025bc59")


def export(folder: Path, rev: str = BASELINE) -> Path | None:
    """``packages/`` as commit ``rev`` had it, written under ``folder``; None when this checkout lacks the commit."""
    known = subprocess.run(
        ["git", "-C", str(ROOT), "cat-file", "-e", f"{rev}^{{commit}}"], capture_output=True, check=False
    )
    if known.returncode != 0:
        return None
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "packages"], capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(folder, filter="data")
    return folder / "packages"


def source_paths(packages: Path) -> list[Path]:
    """Each package's ``src`` folder under an exported ``packages/``: what goes first on ``PYTHONPATH``."""
    return sorted(path / "src" for path in packages.iterdir() if (path / "src").is_dir())
