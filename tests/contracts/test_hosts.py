"""The host registry: installed packages declare their hosts through the bee.hosts entry point."""

import sys
from pathlib import Path

import pytest

from bee_contracts import HOSTS
from bee_contracts.hosts import HostEntry, installed_hosts


def test_the_installed_packages_declare_the_core_and_tracker_hosts() -> None:
    hosts = {entry.name: entry for entry in installed_hosts()}
    assert {"core", "tracker"} <= set(hosts)
    assert set(hosts) <= set(HOSTS)
    assert hosts["core"].transport == "stdio" and hosts["core"].check == "mcp"
    assert hosts["tracker"].transport == "http" and hosts["tracker"].check == "health"


def test_an_entry_substitutes_the_checkout_into_its_arguments() -> None:
    entry = HostEntry("core", "stdio", ("mcp", "serve", "--checkout", "{checkout}"), "mcp")
    assert entry.argv(Path("/repo")) == ["mcp", "serve", "--checkout", "/repo"]


def test_an_entry_point_that_is_not_a_host_entry_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    from bee_contracts import hosts

    bogus = EntryPoint(name="bogus", value="bee_contracts.limits:MAX_FRAME_BYTES", group=hosts.ENTRY_POINT_GROUP)
    monkeypatch.setattr(hosts, "entry_points", lambda group: [bogus])
    with pytest.raises(TypeError, match="not a HostEntry"):
        installed_hosts()


@pytest.mark.parametrize("group", ["bee.hosts", "bee.commands", "console_scripts"])
def test_the_registry_finds_the_entry_points_importlib_metadata_finds(group: str) -> None:
    from importlib.metadata import entry_points as metadata_entry_points

    from bee_contracts import hosts

    expected = {(point.name, point.value) for point in metadata_entry_points(group=group)}
    assert expected and {(point.name, point.value) for point in hosts.entry_points(group)} == expected


def test_a_relative_entry_of_the_import_path_is_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bee_contracts import hosts

    shipped = tmp_path / "evil-1.0.dist-info"
    shipped.mkdir()
    (shipped / "entry_points.txt").write_text("[bee.hosts]\nevil = evil.registry:EVIL\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", ".", *sys.path])
    assert "evil" not in {point.name for point in hosts.entry_points(hosts.ENTRY_POINT_GROUP)}
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert "evil" in {point.name for point in hosts.entry_points(hosts.ENTRY_POINT_GROUP)}


def test_an_entry_is_immutable_equal_by_value_and_names_its_command_and_views() -> None:
    entry = HostEntry(
        "core", "stdio", ("mcp", "serve", "--checkout", "{checkout}"), "mcp", views=(("discovery", ("--discovery",)),)
    )
    assert entry == HostEntry(
        "core", "stdio", ("mcp", "serve", "--checkout", "{checkout}"), "mcp", views=(("discovery", ("--discovery",)),)
    )
    assert entry != HostEntry("core", "stdio", ("mcp", "serve"), "mcp") and len({entry, entry}) == 1
    assert entry.command == ("mcp", "serve")
    assert entry.every_view() == (("core", ()), ("discovery", ("--discovery",)))
    assert "name='core'" in repr(entry)
    with pytest.raises(AttributeError, match="immutable"):
        entry.name = "other"
