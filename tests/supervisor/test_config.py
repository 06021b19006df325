"""The service file: the documented defaults, and a clear error naming the line and key for everything malformed."""

from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_contracts.hosts import HostEntry
from bee_supervisor.config import HealthSpec, ServiceSpec, SupervisorSpec, load_config, parse_address, parse_config
from bee_supervisor.defaults import default_config
from bee_supervisor.states import RestartPolicy

ROOT = Path(__file__).resolve().parents[2]
HOSTS = [
    HostEntry("core", "stdio", ("mcp", "serve", "--checkout", "{checkout}"), "mcp"),
    HostEntry(
        "tracker", "http", ("tracker", "serve", "--sign-in", "builtin"), "health", port=8765, fd_args=("--fd", "{fd}")
    ),
]
TEAM_ENV = {"BEE_TRACKER_STORE": "postgresql://bee@db/bee", "BEE_TRACKER_JWT_SECRET_FILE": "/run/secrets/key"}


def parse(text: str, environ: dict[str, str] | None = None, cwd: Path | None = None) -> SupervisorSpec:
    return parse_config(text, "svc.toml", cwd=cwd or Path("/work"), environ=environ or {}, hosts=HOSTS)


def refused(text: str, environ: dict[str, str] | None = None) -> BeeError:
    with pytest.raises(BeeError) as caught:
        parse(text, environ)
    return caught.value


def test_services_tracker_toml_is_the_built_in_default(tmp_path: Path) -> None:
    from_file = load_config(ROOT / "services" / "tracker.toml", cwd=tmp_path, environ={}, hosts=HOSTS)
    assert from_file == default_config(tmp_path, hosts=HOSTS)
    [tracker] = from_file.services
    assert tracker.command == (
        *("bee", "tracker", "serve", "--sign-in", "builtin"),
        *("--fd", "{listen_fd}", "--fd", "{check_fd}"),
    )
    from bee_tracker.registry import TRACKER

    assert HOSTS[1].args == TRACKER.args  # what the registry says `bee up` runs
    assert tracker.version_command == ("bee", "--version", "--json") and tracker.contract


def test_services_team_toml_runs_two_replicas_on_postgresql_with_secrets_from_the_environment(tmp_path: Path) -> None:
    spec = load_config(ROOT / "services" / "team.toml", cwd=tmp_path, environ=TEAM_ENV, hosts=HOSTS)
    [tracker] = spec.services
    assert tracker.replicas == 2 and tracker.listen == ("0.0.0.0", 8765)
    assert "postgresql://bee@db/bee" in tracker.command and "/run/secrets/key" in tracker.command
    assert tracker.command[tracker.command.index("--allowed-host") + 1] == "localhost"
    with pytest.raises(
        BeeError, match=r"team\.toml:\d+: services\.tracker\.command: \$\{BEE_TRACKER_STORE\} is not set"
    ):
        load_config(ROOT / "services" / "team.toml", cwd=tmp_path, environ={}, hosts=HOSTS)


def test_a_minimal_service_gets_every_default() -> None:
    spec = parse('[services.job]\ncommand = ["/bin/true"]\n', cwd=Path("/work"))
    assert spec.services == (ServiceSpec("job", ("/bin/true",)),)
    assert spec.services[0].health == HealthSpec() and spec.services[0].restart == RestartPolicy()
    assert spec.state == Path("/work/.bee/supervisor") and spec.logs == spec.state / "logs"


def test_relative_paths_are_taken_from_the_working_directory() -> None:
    spec = parse(
        '[supervisor]\nstate = "run"\nlogs = "/var/log/bee"\n[services.job]\ncommand = ["./job"]\ndirectory = "sub"\n'
    )
    assert spec.state == Path("/work/run") and spec.logs == Path("/var/log/bee")
    assert spec.services[0].directory == Path("/work/sub")


def test_environment_values_expand_and_fall_back() -> None:
    spec = parse(
        '[services.job]\ncommand = ["run", "${WHO}", "${MISSING:-nobody}"]\n'
        'environment = { LEVEL = "${LVL:-info}", N = 3 }\n',
        environ={"WHO": "me"},
    )
    assert spec.services[0].command == ("run", "me", "nobody")
    assert spec.services[0].environment == {"LEVEL": "info", "N": "3"}


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ('[services.job]\ncommand = ["a"\nreplicas = 1\n', "svc.toml:3", "not valid TOML"),
        ('[services.job]\ncomand = ["a"]\n', "svc.toml:2: services.job.comand", "unknown key (known keys: command,"),
        (
            '[services.job]\ncommand = ["a"]\nreplicas = "2"\n',
            "svc.toml:3: services.job.replicas",
            "whole number from 1 to 64",
        ),
        ('[services.job]\ncommand = ["a"]\nreplicas = 0\n', "svc.toml:3: services.job.replicas", "got 0"),
        (
            '[services.job]\ncommand = "bee tracker serve"\n',
            "svc.toml:2: services.job.command",
            'never a shell string: write command = ["bee", "tracker", "serve"]',
        ),
        ("[services.job]\ncommand = []\n", "svc.toml:2: services.job.command", "non-empty list of strings"),
        ("[services.job]\nreplicas = 1\n", "svc.toml:1: services.job", "missing key command"),
        (
            '[services.job]\ncommand = ["a"]\n\n[services.job.restart]\nstart_retries = -1\n',
            "svc.toml:5: services.job.restart.start_retries",
            "from 0 to 1000",
        ),
        (
            '[services.job]\ncommand = ["a"]\n[services.job.restart]\npolicy = "sometimes"\n',
            "svc.toml:4: services.job.restart.policy",
            '"always", "on-failure" or "never"',
        ),
        (
            '[services.job]\ncommand = ["a"]\n[services.job.restart]\nbackoff = 5\nbackoff_max = 1\n',
            "svc.toml:5: services.job.restart.backoff_max",
            "at least backoff (5)",
        ),
        (
            '[services.job]\ncommand = ["a"]\n[services.job.health]\ncheck = "tcp"\n',
            "svc.toml:4: services.job.health.check",
            '"http", "mcp" or "process"',
        ),
        (
            '[services.job]\ncommand = ["a"]\n[services.job.health]\ncheck = "http"\n',
            "svc.toml:3: services.job.health",
            "needs url",
        ),
        (
            '[services.job]\ncommand = ["a"]\nhealth = { check = "http", urll = "x" }\n',
            "svc.toml:3: services.job.health.urll",
            "unknown key",
        ),
        (
            '[services.job]\ncommand = ["a"]\nreplicas = 2\n',
            "svc.toml:3: services.job.replicas",
            "need a shared address",
        ),
        ('[services.job]\ncommand = ["a"]\nlisten = "8765"\n', "svc.toml:3: services.job.listen", "HOST:PORT"),
        (
            '[services.job]\ncommand = ["a"]\nlisten = "127.0.0.1:8765"\n',
            "svc.toml:2: services.job.command",
            "add {listen_fd}",
        ),
        (
            '[services.job]\ncommand = ["a", "{check_fd}"]\n',
            "svc.toml:2: services.job.command",
            'need listen = "HOST:PORT"',
        ),
        (
            '[services.job]\ncommand = ["a"]\nhost = "nope"\n',
            "svc.toml:3: services.job.host",
            "(installed: core, tracker)",
        ),
        (
            '[services.job]\ncommand = ["a"]\ncontract = true\n',
            "svc.toml:3: services.job.contract",
            "needs version_command",
        ),
        ('[services.job]\ncommand = ["a"]\ncontract = "yes"\n', "svc.toml:3: services.job.contract", "true or false"),
        (
            '[services.job]\ncommand = ["a"]\nversion_command = ["a", "--version"]\ncontract = true\n',
            "svc.toml:1: services.job.health.check",
            'use check = "http" or "mcp"',
        ),
        ('[services.Job]\ncommand = ["a"]\n', "svc.toml:1: services.Job", "lowercase"),
        (
            '[services.job]\ncommand = ["a"]\nenvironment = ["A=1"]\n',
            "svc.toml:3: services.job.environment",
            "table of NAME",
        ),
        (
            '[supervisor]\nlog_backups = 0\n[services.job]\ncommand = ["a"]\n',
            "svc.toml:2: supervisor.log_backups",
            "from 1 to 1000",
        ),
        (
            '[supervisor]\nstate = 3\n[services.job]\ncommand = ["a"]\n',
            "svc.toml:2: supervisor.state",
            "non-empty string",
        ),
        ("[services]\n", "svc.toml:1: services", "defines no service"),
        ('[servics.job]\ncommand = ["a"]\n', "svc.toml:1: servics", "unknown key (known keys: services, supervisor)"),
    ],
)
def test_a_malformed_file_is_refused_naming_the_line_and_key(text: str, where: str, message: str) -> None:
    error = refused(text)
    assert error.message.startswith(where), error.message
    assert message in error.message, error.message
    assert error.details is not None
    assert error.details["file"] == "svc.toml"


def test_a_syntax_error_quotes_the_offending_line() -> None:
    error = refused('[services.job]\ncommand = ["a"]\nreplicas == 2\n')
    assert error.message.startswith("svc.toml:3: not valid TOML") and "`replicas == 2`" in error.message
    assert error.details is not None
    assert error.details["line"] == 3


def test_a_registered_host_brings_its_check_and_version_command() -> None:
    spec = parse('[services.core]\nhost = "core"\ncommand = ["bee", "mcp", "serve"]\n')
    [core] = spec.services
    assert core.health.check == "mcp" and core.contract
    assert core.version_command == ("bee", "--version", "--json")


def test_an_unknown_service_is_named_with_the_known_ones() -> None:
    spec = parse('[services.a]\ncommand = ["x"]\n[services.b]\ncommand = ["y"]\n')
    assert spec.service("b").name == "b"
    with pytest.raises(BeeError, match=r"no service 'c' in svc.toml \(it defines: a, b\)") as caught:
        spec.service("c")
    assert caught.value.code == "not_found"


def test_a_missing_file_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(BeeError, match="no service file at") as caught:
        load_config(tmp_path / "missing.toml")
    assert caught.value.code == "not_found"


@pytest.mark.parametrize(("text", "address"), [("127.0.0.1:8765", ("127.0.0.1", 8765)), ("[::1]:80", ("::1", 80))])
def test_parse_address(text: str, address: tuple[str, int]) -> None:
    assert parse_address(text) == address


@pytest.mark.parametrize("text", ["8765", ":8765", "host:", "host:0", "host:70000", "host:http"])
def test_parse_address_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_address(text)


def test_every_key_of_the_service_file_is_documented() -> None:
    from bee_supervisor import config

    guide = (ROOT / "docs" / "hosts" / "supervisor.md").read_text()
    tables = [
        ("supervisor.", config._SUPERVISOR_KEYS),
        ("", config._SERVICE_KEYS - {"health", "restart"}),
        ("health.", config._HEALTH_KEYS),
        ("restart.", config._RESTART_KEYS),
    ]
    missing = [prefix + key for prefix, keys in tables for key in sorted(keys) if f"| `{prefix}{key}` |" not in guide]
    assert not missing, f"docs/hosts/supervisor.md does not document {missing}"
