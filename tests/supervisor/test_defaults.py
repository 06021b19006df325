"""The built-in service file comes from the host registry."""

from pathlib import Path

import pytest

from bee_contracts.hosts import HostEntry, installed_hosts
from bee_supervisor.defaults import default_config, host_service


def test_the_installed_tracker_is_the_default_service(tmp_path: Path) -> None:
    spec = default_config(tmp_path)
    [tracker] = spec.services
    assert tracker.name == "tracker" and tracker.listen == ("127.0.0.1", 8765) and tracker.contract
    assert spec.state == tmp_path / ".bee" / "supervisor"


def test_the_registry_port_is_the_trackers_default_port() -> None:
    from bee_tracker.config import DEFAULT_PORT

    assert {entry.name: entry for entry in installed_hosts()}["tracker"].port == DEFAULT_PORT


def test_a_port_and_a_directory_can_be_chosen(tmp_path: Path) -> None:
    spec = default_config(tmp_path, ports={"tracker": 9999}, directory=Path("/srv/checkout"))
    assert spec.services[0].listen == ("127.0.0.1", 9999)
    assert spec.services[0].directory == Path("/srv/checkout")


def test_stdio_hosts_are_left_to_editors(tmp_path: Path) -> None:
    core = HostEntry("core", "stdio", ("mcp", "serve"), "mcp")
    assert default_config(tmp_path, hosts=[core]).services == ()
    with pytest.raises(ValueError, match="not an HTTP host"):
        host_service(core)
