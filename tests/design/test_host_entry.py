"""The design host registers itself like every host: through the bee.hosts entry point, with a strict root."""

from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_contracts.hosts import installed_hosts
from bee_design.context import DesignContext


def test_the_design_host_is_in_the_registry_with_its_start_command() -> None:
    design = {entry.name: entry for entry in installed_hosts()}["design"]
    assert design.transport == "stdio" and design.check == "mcp"
    assert design.argv(Path("/repo")) == ["design", "mcp", "--stdio", "--root", "/repo"]


def test_the_root_must_be_an_absolute_existing_directory(tmp_path: Path) -> None:
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
