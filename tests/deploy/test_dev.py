"""./dev and the Hatch workspace agree: one Hatch release, every package a member, listed in dependency order."""

import importlib.machinery
import importlib.util
import re
import tomllib
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_dev() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("bee_dev", str(ROOT / "dev"))
    spec = importlib.util.spec_from_loader("bee_dev", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_dev_installs_the_hatch_release_the_workspace_requires() -> None:
    dev = load_dev()
    required = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["requires-hatch"]
    assert f"hatch{required}" == dev.HATCH


def test_hatchs_record_of_what_it_installed_lives_and_dies_with_the_environment() -> None:
    # Hatch keys that record by the project's path: outside the environment, a fresh clone at a path used before
    # got a new, empty .venv that Hatch took as installed (CI then failed with "ruff: not found").
    dev = load_dev()
    environment = dev.hatch_environment()
    assert Path(environment["HATCH_ENV_TYPE_VIRTUAL_PATH"]) == dev.VENV
    assert Path(environment["HATCH_DATA_DIR"]).is_relative_to(dev.VENV)


def test_every_package_is_a_member_and_comes_after_the_bee_packages_it_needs() -> None:
    dev = load_dev()
    assert sorted(dev.PACKAGES) == sorted(path.name for path in (ROOT / "packages").iterdir() if path.is_dir())
    for position, name in enumerate(dev.PACKAGES):
        needed = dev.bee_dependencies(name)
        assert needed[-1] == name and set(needed) <= set(dev.PACKAGES[: position + 1]), (name, needed)
    assert dev.bee_dependencies("bee-tracker") == ["bee-contracts", "bee-hostkit", "bee-tracker"]


def test_the_readmes_two_commands_are_still_the_quick_start() -> None:
    readme = (ROOT / "README.md").read_text()
    quick_start = re.search(r"```sh\n(.*?)```", readme, re.DOTALL)
    assert quick_start and quick_start.group(1).split("\n")[:2] == ["./dev up", "./dev test"]


def test_only_the_tracker_asks_for_the_http_extra_so_the_stdio_hosts_install_without_it() -> None:
    dev = load_dev()
    assert [name for name in dev.PACKAGES if dev.with_http(name)] == ["bee-tracker"]
    hostkit = tomllib.loads((ROOT / "packages/bee-hostkit/pyproject.toml").read_text())["project"]
    extra = {re.match(r"[A-Za-z0-9_.-]+", r).group(0) for r in hostkit["optional-dependencies"][dev.HTTP_EXTRA]}  # type: ignore[union-attr]
    base = {re.match(r"[A-Za-z0-9_.-]+", r).group(0) for r in hostkit["dependencies"]}  # type: ignore[union-attr]
    assert {"uvicorn", "httptools"} <= extra and not extra & base
