"""compose.yaml, the team deployment: valid against the Compose Specification's JSON schema (as vendored by the
pinned check-jsonschema release, not written here), and keeping the promises docs/operations.md makes about it.

No container engine runs here, so what can be checked without one is checked: the schema, the topology, where
secrets come from, and that every file it references exists and agrees with it.
"""

import hashlib
import re
import tomllib
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "compose.yaml"
VENDOR = resources.files("check_jsonschema.builtin_schemas.vendor")


def load(path: Path) -> Any:
    return YAML(typ="safe", pure=True).load(path.read_text())


@pytest.fixture(scope="module")
def compose() -> Any:
    return load(COMPOSE)


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    import json

    text = (VENDOR / "compose-spec.json").read_bytes()
    # The vendored file is exactly the one the release pins (it ships the digest beside it).
    assert hashlib.sha256(text).hexdigest() == (VENDOR / "sha256" / "compose-spec.sha256").read_text().strip()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def test_compose_yaml_is_valid_against_the_compose_specification(compose: Any, schema: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(compose), key=lambda error: list(error.absolute_path))
    assert not errors, [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors]


def test_the_schema_catches_a_broken_file(schema: dict[str, Any]) -> None:
    # The check can fail: a misspelt key and a wrong type are both reported.
    broken = {"services": {"tracker": {"imagee": "x", "deploy": {"replicas": [2]}}}}
    assert len(list(jsonschema.Draft202012Validator(schema).iter_errors(broken))) >= 2


def test_postgresql_keeps_its_data_in_a_named_volume_and_is_health_checked(compose: Any) -> None:
    postgres = compose["services"]["postgres"]
    mounts = {entry.split(":")[1]: entry.split(":")[0] for entry in postgres["volumes"]}
    assert mounts["/var/lib/postgresql/data"] in compose["volumes"]  # a named volume, not a bind mount
    assert postgres["healthcheck"]["test"][:2] == ["CMD", "pg_isready"]


def test_two_or_more_tracker_replicas_sit_behind_one_published_address(compose: Any) -> None:
    services = compose["services"]
    tracker, proxy = services["tracker"], services["proxy"]
    replicas = re.fullmatch(r"\$\{BEE_TRACKER_REPLICAS:-(\d+)\}", str(tracker["deploy"]["replicas"]))
    assert replicas and int(replicas.group(1)) >= 2
    assert tracker["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert "ports" not in tracker  # replicas are reached through the proxy only
    published = [name for name, service in services.items() if service.get("ports")]
    assert published == ["proxy"]
    assert proxy["depends_on"]["tracker"]["condition"] == "service_healthy"
    # The proxy's upstreams are the tracker service on the port the tracker listens on.
    caddyfile = (ROOT / "services/containers/proxy/Caddyfile").read_text()
    command = tracker["command"]
    port = command[command.index("--port") + 1]
    assert re.search(rf"dynamic a tracker {port}\b", caddyfile)
    assert proxy["ports"] == [f"${{BEE_TRACKER_PORT:-{port}}}:{port}"]


def _values(node: object, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], object]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _values(value, (*path, str(key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _values(value, (*path, str(index)))
    else:
        yield path, node


def test_every_secret_comes_from_the_environment_and_none_is_written_down(compose: Any) -> None:
    secretish = re.compile(r"PASSWORD|SECRET|TOKEN|KEY", re.IGNORECASE)
    for service in compose["services"].values():
        for name, value in (service.get("environment") or {}).items():
            if secretish.search(name):
                assert re.fullmatch(r"\$\{[A-Z_]+:\?[^}]+\}", value), f"{name} is not required from the environment"
    assert compose["secrets"]["tracker_jwt_secret"] == {"environment": "BEE_TRACKER_JWT_SECRET"}
    command = compose["services"]["tracker"]["command"]
    assert command[command.index("--jwt-secret-file") + 1] == "/run/secrets/tracker_jwt_secret"
    store = command[command.index("--store") + 1]
    assert store.startswith("postgresql://") and ":" not in store.split("//", 1)[1].split("@")[0]  # no password
    for path, value in _values(compose):
        assert not (isinstance(value, str) and re.search(r"postgresql://[^@/\s]*:[^@/\s]*@", value)), path


def test_every_file_compose_yaml_references_exists() -> None:
    compose = load(COMPOSE)
    tracker = compose["services"]["tracker"]
    assert (ROOT / tracker["build"]["context"] / tracker["build"]["dockerfile"]).is_file()
    for service in compose["services"].values():
        for entry in service.get("volumes", []):
            source = entry.split(":")[0]
            if source.startswith("./"):
                assert (ROOT / source).is_file(), entry


def test_the_tracker_image_installs_bee_tracker_and_the_bee_packages_it_needs() -> None:
    dockerfile = (ROOT / "services/containers/tracker/Dockerfile").read_text()
    copied = set(re.findall(r"^COPY packages/(bee-[a-z]+) ", dockerfile, re.MULTILINE))

    def bee_dependencies(name: str) -> set[str]:
        project = tomllib.loads((ROOT / "packages" / name / "pyproject.toml").read_text())["project"]
        found: set[str] = {name}
        for requirement in project["dependencies"]:
            name_match = re.match(r"[A-Za-z0-9_.-]+", requirement)
            assert name_match is not None
            dependency = name_match.group(0)
            if dependency.startswith("bee-"):
                found |= bee_dependencies(dependency)
        return found

    assert copied == bee_dependencies("bee-tracker") | bee_dependencies("bee-cli")
    ignored = (ROOT / "services/containers/tracker/Dockerfile.dockerignore").read_text()
    assert {f"!packages/{name}" for name in copied} <= set(ignored.split())
