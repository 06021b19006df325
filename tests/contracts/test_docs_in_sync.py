"""The generated reference and the version in the docs must match the contracts."""

import re
from pathlib import Path

from bee_contracts import __version__
from bee_contracts.reference import render_all

ROOT = Path(__file__).resolve().parents[2]


def test_generated_reference_matches_the_contracts():
    stale = []
    for relative, text in render_all().items():
        path = ROOT / "docs" / "reference" / relative
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(relative)
    assert not stale, f"docs/reference is stale for {stale}; run ./dev docs and commit the result"


def test_every_package_and_the_docs_carry_the_lockstep_version():
    for version_file in (ROOT / "packages").glob("*/src/*/_version.py"):
        found = re.search(r'__version__ = "([^"]+)"', version_file.read_text())
        assert found and found.group(1) == __version__, f"{version_file} is not at {__version__}"
    for doc in ["README.md", "docs/operations.md"]:
        assert f"`{__version__}`" in (ROOT / doc).read_text(), f"{doc} does not state version `{__version__}`"


def test_cli_reference_matches_the_installed_commands():
    from bee_cli.reference import render

    path = ROOT / "docs" / "reference" / "cli.md"
    assert path.is_file() and path.read_text(encoding="utf-8") == render(), (
        "docs/reference/cli.md is stale; run ./dev docs and commit the result"
    )
