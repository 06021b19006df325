"""The generated reference and the version in the docs must match the contracts."""

import re
from pathlib import Path

from bee_contracts import __version__
from bee_contracts.reference import render_all

ROOT = Path(__file__).resolve().parents[2]


def test_generated_reference_matches_the_contracts() -> None:
    stale = []
    for relative, text in render_all().items():
        path = ROOT / "docs" / "reference" / relative
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(relative)
    assert not stale, f"docs/reference is stale for {stale}; run ./dev docs and commit the result"


def test_every_package_and_the_docs_carry_the_lockstep_version() -> None:
    for version_file in (ROOT / "packages").glob("*/src/*/_version.py"):
        found = re.search(r'__version__ = "([^"]+)"', version_file.read_text())
        assert found and found.group(1) == __version__, f"{version_file} is not at {__version__}"
    for doc in ["README.md", "docs/operations.md"]:
        assert f"`{__version__}`" in (ROOT / doc).read_text(), f"{doc} does not state version `{__version__}`"


def test_cli_reference_matches_the_installed_commands() -> None:
    from bee_cli.reference import render

    path = ROOT / "docs" / "reference" / "cli.md"
    assert path.is_file() and path.read_text(encoding="utf-8") == render(), (
        "docs/reference/cli.md is stale; run ./dev docs and commit the result"
    )


def test_generated_tool_shapes_match_the_catalogs() -> None:
    import warnings

    from bee_contracts import HOSTS, load_catalog
    from bee_contracts.codegen import SHAPES, generate

    stale = []
    for host in HOSTS:
        if not load_catalog(host):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # the generator's notice about its future defaults
            text = generate(host)
        path = SHAPES / f"{host}.py"
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(host)
    assert not stale, f"bee_contracts/shapes is stale for {stale}; run ./dev docs and commit the result"


def test_every_tool_has_an_args_and_a_result_shape() -> None:
    import importlib

    from bee_contracts import HOSTS, load_catalog
    from bee_contracts.codegen import stem

    for host in HOSTS:
        specs = load_catalog(host)
        if not specs:
            continue
        module = importlib.import_module(f"bee_contracts.shapes.{host}")
        for spec in specs:
            args = getattr(module, f"{stem(spec.name)}Args")
            assert set(args.__annotations__) == set(spec.input_schema.get("properties", {})), spec.name
            result = getattr(module, f"{stem(spec.name)}Result")
            assert set(result.__annotations__) == set(spec.output_schema.get("properties", {})), spec.name


def test_the_module_map_in_the_development_guide_matches_the_docstrings() -> None:
    from tests import module_map

    text = module_map.DOC.read_text(encoding="utf-8")
    assert module_map.rewritten(text, module_map.render()) == text, "run ./dev docs: the module map drifted"


def test_the_tool_map_in_the_development_guide_matches_the_catalogs_handlers_and_tests() -> None:
    from tests import tool_map

    text = tool_map.DOC.read_text(encoding="utf-8")
    assert tool_map.rewritten(text, tool_map.render()) == text, "run ./dev docs: the tool map drifted"
    for host, (handlers, _) in tool_map.HOSTS.items():  # every handler the map names exists
        assert (tool_map.ROOT / handlers).exists(), host
