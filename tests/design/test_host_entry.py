"""The design host registers itself like every host: through the bee.hosts entry point, with a strict checkout, and
keeps its state in the checkout's Bee instance, selected as the core host selects it."""

from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_contracts.hosts import installed_hosts
from bee_design.bundle.reading import read_bundle
from bee_design.bundle.store import BundleStore
from bee_design.context import DesignContext
from tests.design.helpers import SHOP


def test_the_design_host_is_in_the_registry_with_its_start_command() -> None:
    design = {entry.name: entry for entry in installed_hosts()}["design"]
    assert design.transport == "stdio" and design.check == "mcp"
    assert design.argv(Path("/repo")) == ["design", "mcp", "--stdio", "--checkout", "/repo"]
    assert ("--root", "checkout") in design.options and design.absolute_checkout


def test_the_checkout_must_be_an_absolute_existing_directory(tmp_path: Path) -> None:
    assert DesignContext.open(str(tmp_path)).root == tmp_path.resolve()
    (tmp_path / "file").write_text("x")
    for given, message in (
        ("relative", "is relative"),
        (str(tmp_path / "nope"), "does not exist"),
        (str(tmp_path / "file"), "is not a directory"),
        ("", "is empty"),
    ):
        with pytest.raises(BeeError, match=message) as caught:
            DesignContext.open(given)
        assert caught.value.code == "invalid_argument"


def test_the_design_state_lives_in_the_instance_selected_as_the_core_hosts_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    assert DesignContext.open(root).instance == root / ".bee"
    chosen = tmp_path / "state"
    ctx = DesignContext.open(root, chosen)
    assert ctx.instance == chosen and ctx.files.state_dir(create=True) == chosen / "design"
    monkeypatch.setenv("BEE_INSTANCE_ROOT", str(tmp_path / "env"))
    assert DesignContext.open(root).files.state_dir() == tmp_path / "env" / "design"
    BundleStore(DesignContext.open(root).files).add(read_bundle(SHOP), "shop")
    assert BundleStore(DesignContext.open(root).files).ids() == ["shop"]
    assert not (root / ".bee").exists()
    assert BundleStore(DesignContext.open(root, chosen).files).ids() == []


def test_a_dot_bee_linking_out_of_the_checkout_is_refused_at_start_and_one_inside_is_followed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    elsewhere = tmp_path / "other" / ".bee"
    elsewhere.mkdir(parents=True)
    (root / ".bee").symlink_to(elsewhere)
    with pytest.raises(BeeError, match="outside the checkout") as caught:
        DesignContext.open(root)
    assert caught.value.code == "outside_root"
    assert DesignContext.open(root, elsewhere).instance == elsewhere  # chosen on purpose: used
    (root / ".bee").unlink()
    (root / "state").mkdir()
    (root / ".bee").symlink_to(root / "state")
    assert DesignContext.open(root).files.state_dir(create=True) == root / "state" / "design"
