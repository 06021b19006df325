"""The host registry: installed packages declare their hosts through the bee.hosts entry point."""

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
