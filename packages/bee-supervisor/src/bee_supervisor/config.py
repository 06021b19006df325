"""The service file: what `bee supervise --config FILE` runs, read from TOML and checked key by key.

A service file has an optional ``[supervisor]`` table and one ``[services.NAME]`` table per service (the format is
documented in docs/hosts/supervisor.md; ``services/`` in the repository holds the defaults). Every key is checked
here, before anything starts: an unknown key, a value of the wrong type or out of range, or a TOML syntax error is a
:class:`~bee_contracts.BeeError` whose message names the file, the line and the dotted key.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bee_contracts import BeeError, ErrorCode
from bee_contracts.hosts import HostEntry, installed_hosts
from bee_contracts.layout import INSTANCE_DIRNAME, selected_instance
from bee_supervisor._lines import key_lines, line_of
from bee_supervisor.states import RestartPolicy

#: The state folder inside a Bee instance: lock, status and (by default) logs.
STATE_DIRNAME = "supervisor"
#: Placeholders a command may contain, replaced per replica.
PLACEHOLDERS = ("{listen_fd}", "{check_fd}", "{replica}")

#: ``warm`` is never written in a file: the warm supervisor gives it to the warm hosts it starts.
Check = Literal["http", "mcp", "process", "warm"]

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


@dataclass(frozen=True)
class HealthSpec:
    """How a replica is checked: before it counts as ready, and every ``interval`` seconds after."""

    check: Check = "process"
    #: For ``http`` without ``listen``: the URL to GET. With ``listen``, the replica's own check socket and ``path``.
    url: str | None = None
    path: str = "/health"
    interval: float = 1.0
    timeout: float = 5.0
    #: Failed checks in a row that make the supervisor restart a running replica.
    failures: int = 3
    #: For ``warm``: the warm host's socket, and the identity its hello names (bee_contracts.warm).
    socket: str | None = None
    identity: Mapping[str, str] | None = None


@dataclass(frozen=True)
class ServiceSpec:
    """One ``[services.NAME]`` table, with every default filled in."""

    name: str
    command: tuple[str, ...]
    environment: Mapping[str, str] = field(default_factory=dict)
    directory: Path | None = None
    replicas: int = 1
    #: The address the supervisor binds once and hands every replica (``{listen_fd}``); None: the service binds.
    listen: tuple[str, int] | None = None
    #: The registered host this service runs (``bee.hosts``), if any.
    host: str | None = None
    #: Whether the version and contract digest are checked before the replica is ready.
    contract: bool = False
    #: The command that prints the version triple as JSON (``--version --json``).
    version_command: tuple[str, ...] | None = None
    health: HealthSpec = field(default_factory=HealthSpec)
    restart: RestartPolicy = field(default_factory=RestartPolicy)
    #: Whether a spare is kept, started ahead, to take over when a replica starts again (bee_supervisor.spares):
    #: only for a service checked on a socket of its own (``http`` with ``listen``, a warm host).
    spares: bool = True
    #: Where the table and each of its keys are in the file, for messages (not part of what the service is).
    line: int | None = field(default=None, compare=False)
    key_lines: Mapping[str, int] = field(default_factory=dict, compare=False)
    #: ``command`` and ``version_command`` as written, ``${NAME}`` unexpanded: what logs and messages show, since an
    #: expanded value may be a secret.
    shown: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class SupervisorSpec:
    """A whole service file."""

    services: tuple[ServiceSpec, ...]
    state: Path
    logs: Path
    log_max_bytes: int = 10 * 1024 * 1024
    log_backups: int = 5
    #: The file it was read from, or a description of where the defaults came from.
    source: str = field(default="", compare=False)

    def service(self, name: str) -> ServiceSpec:
        """The service called ``name``.

        Raises:
            BeeError: ``not_found`` naming the services the file defines.
        """
        for service in self.services:
            if service.name == name:
                return service
        known = ", ".join(s.name for s in self.services) or "none"
        raise BeeError(
            ErrorCode.NOT_FOUND,
            f"no service {name!r} in {self.source} (it defines: {known})",
            details={"service": name},
        )


def default_state(cwd: Path) -> Path:
    """``<instance>/supervisor`` for the instance selected from ``cwd`` ($BEE_INSTANCE_ROOT or the nearest .bee),
    else ``<cwd>/.bee/supervisor``."""
    instance = selected_instance(cwd)
    return (instance if instance is not None else cwd / INSTANCE_DIRNAME) / STATE_DIRNAME


# -- reading -------------------------------------------------------------------------------------------------


_SUPERVISOR_KEYS = {"state", "logs", "log_max_bytes", "log_backups"}
_SERVICE_KEYS = {
    "command",
    "environment",
    "directory",
    "replicas",
    "listen",
    "host",
    "contract",
    "spares",
    "version_command",
    "health",
    "restart",
}
_HEALTH_KEYS = {"check", "url", "path", "interval", "timeout", "failures"}
_RESTART_KEYS = {
    "policy",
    "start_seconds",
    "start_retries",
    "start_timeout",
    "backoff",
    "backoff_max",
    "jitter",
    "stop_timeout",
}


class _Reader:
    """Typed access to the parsed document; every failure names the file, line and dotted key."""

    def __init__(self, source: str, text: str, environ: Mapping[str, str]) -> None:
        self.source = source
        self.lines = key_lines(text)
        self.environ = environ

    def fail(self, path: tuple[str, ...], message: str) -> BeeError:
        line = line_of(self.lines, path)
        where = f"{self.source}:{line}" if line else self.source
        key = ".".join(path)
        return BeeError(
            ErrorCode.INVALID_ARGUMENT,
            f"{where}: {key}: {message}",
            details={"file": self.source, "line": line, "key": key},
        )

    def table(self, value: Any, path: tuple[str, ...], known: set[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected a table, got {_kind(value)}")
        for key in value:
            if key not in known:
                raise self.fail((*path, key), f"unknown key (known keys: {', '.join(sorted(known))})")
        return value

    def expand(self, text: str, path: tuple[str, ...]) -> str:
        """``${NAME}`` and ``${NAME:-default}`` from the supervisor's environment."""

        def one(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            value = self.environ.get(name)
            if value is None or (value == "" and default is not None):
                if default is None:
                    raise self.fail(path, f"${{{name}}} is not set in the environment (or write ${{{name}:-default}})")
                return default
            return value

        return _ENV.sub(one, text)

    def string(self, table: dict[str, Any], key: str, path: tuple[str, ...], default: str | None = None) -> str | None:
        if key not in table:
            return default
        value = table[key]
        if not isinstance(value, str) or not value:
            raise self.fail((*path, key), f"expected a non-empty string, got {_kind(value)}")
        return self.expand(value, (*path, key))

    def argv(self, table: dict[str, Any], key: str, path: tuple[str, ...]) -> tuple[str, ...] | None:
        if key not in table:
            return None
        value = table[key]
        if isinstance(value, str):
            raise self.fail(
                (*path, key),
                f"a command is a list of arguments, never a shell string: write {key} = {_argv_hint(value)}",
            )
        if not isinstance(value, list) or not value or not all(isinstance(a, str) for a in value) or not value[0]:
            raise self.fail((*path, key), f"expected a non-empty list of strings, got {_kind(value)}")
        return tuple(self.expand(arg, (*path, key)) for arg in value)

    def number(
        self,
        table: dict[str, Any],
        key: str,
        path: tuple[str, ...],
        default: float,
        *,
        low: float,
        high: float,
        whole: bool = False,
    ) -> float:
        if key not in table:
            return default
        value = table[key]
        ok = isinstance(value, int) if whole else isinstance(value, int | float)
        if not ok or isinstance(value, bool) or not low <= value <= high:
            kind = "a whole number" if whole else "a number"
            raise self.fail((*path, key), f"expected {kind} from {_plain(low)} to {_plain(high)}, got {value!r}")
        return float(value)

    def boolean(self, table: dict[str, Any], key: str, path: tuple[str, ...], default: bool) -> bool:
        if key not in table:
            return default
        value = table[key]
        if not isinstance(value, bool):
            raise self.fail((*path, key), f"expected true or false, got {value!r}")
        return value


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return f"a list {value!r}" if len(repr(value)) < 60 else "a list"
    return repr(value)


def _plain(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def _argv_hint(text: str) -> str:
    return "[" + ", ".join(f'"{part}"' for part in text.split()) + "]"


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as a pair.

    Raises:
        ValueError: the text is not an address with a port from 1 to 65535.
    """
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"expected HOST:PORT with a port from 1 to 65535, got {text!r}")
    return host.strip("[]"), int(port)


def load_config(
    path: Path,
    *,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    hosts: list[HostEntry] | None = None,
) -> SupervisorSpec:
    """Read and check the service file at ``path``.

    Relative paths in it (``state``, ``logs``, ``directory``) are taken from ``cwd`` (default: the working
    directory), as the supervisor runs there. ``hosts`` defaults to the installed ``bee.hosts`` registry.

    Raises:
        BeeError: ``not_found`` when the file does not exist; ``invalid_argument`` naming the line and key of
            anything malformed.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BeeError(ErrorCode.NOT_FOUND, f"no service file at {path}", details={"file": str(path)}) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BeeError(ErrorCode.INVALID_ARGUMENT, f"cannot read the service file {path}: {exc}") from None
    return parse_config(text, str(path), cwd=cwd, environ=environ, hosts=hosts)


def parse_config(
    text: str,
    source: str,
    *,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    hosts: list[HostEntry] | None = None,
) -> SupervisorSpec:
    """Check the service file ``text`` (named ``source`` in messages); see :func:`load_config`."""
    base = (cwd or Path.cwd()).resolve()
    reader = _Reader(source, text, os.environ if environ is None else environ)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        line = int(found.group(1)) if found else None
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        where = f"{source}:{line}" if line else source
        shown = text.splitlines()[line - 1].strip() if line and line <= len(text.splitlines()) else ""
        raise BeeError(
            ErrorCode.INVALID_ARGUMENT,
            f"{where}: not valid TOML: {message}" + (f" in `{shown}`" if shown else ""),
            details={"file": source, "line": line},
        ) from None
    reader.table(document, (), {"supervisor", "services"})
    settings = reader.table(document.get("supervisor", {}), ("supervisor",), _SUPERVISOR_KEYS)
    state_text = reader.string(settings, "state", ("supervisor",))
    state = base / state_text if state_text else default_state(base)
    logs_text = reader.string(settings, "logs", ("supervisor",))
    logs = base / logs_text if logs_text else state / "logs"
    log_max_bytes = reader.number(
        settings, "log_max_bytes", ("supervisor",), 10 * 1024 * 1024, low=1024, high=2**40, whole=True
    )
    log_backups = reader.number(settings, "log_backups", ("supervisor",), 5, low=1, high=1000, whole=True)

    registry = {entry.name: entry for entry in (installed_hosts() if hosts is None else hosts)}
    services_table = document.get("services", {})
    if not isinstance(services_table, dict):
        raise reader.fail(("services",), f"expected a table of services, got {_kind(services_table)}")
    if not services_table:
        raise reader.fail(("services",), "the file defines no service: add a [services.NAME] table")
    services = tuple(_service(reader, name, value, base, registry) for name, value in services_table.items())
    return SupervisorSpec(
        services=services,
        state=state,
        logs=logs,
        log_max_bytes=int(log_max_bytes),
        log_backups=int(log_backups),
        source=source,
    )


def _service(reader: _Reader, name: str, value: Any, base: Path, registry: dict[str, HostEntry]) -> ServiceSpec:
    """The ``[services.NAME]`` table ``value`` as a service, checked key by key (the first problem met is reported)."""
    path = ("services", name)
    if not _NAME.match(name):
        raise reader.fail(path, "a service name is 1-40 lowercase letters, digits, - or _, starting with a letter")
    table = reader.table(value, path, _SERVICE_KEYS)
    command = reader.argv(table, "command", path)
    if command is None:
        raise reader.fail(path, "missing key command (the program and its arguments, as a list)")
    host_name = reader.string(table, "host", path)
    entry = _host_entry(reader, host_name, path, registry)
    environment = _environment(reader, table.get("environment", {}), (*path, "environment"))
    directory_text = reader.string(table, "directory", path)
    directory = (base / directory_text) if directory_text else None
    listen = _listen(reader, table, path)
    replicas = _replicas(reader, table, path, listen)
    used = _placeholders(reader, command, path, listen)
    # What logs and messages show: the commands as written, before ${NAME} is expanded (see ServiceSpec.shown).
    shown = {"command": tuple(table["command"])}
    contract = reader.boolean(table, "contract", path, entry is not None)
    version = _version_command(reader, table, path, command=command, entry=entry, contract=contract)
    if version is not None:
        shown["version_command"] = version[1]
    health = _health(reader, table.get("health", {}), (*path, "health"), entry=entry, listen=listen, used=used)
    if contract and health.check == "process":
        raise reader.fail(
            (*path, "health", "check"),
            'a contract is checked through the host\'s handshake: use check = "http" or "mcp" (or contract = false)',
        )
    restart = _restart(reader, table.get("restart", {}), (*path, "restart"))
    spares = reader.boolean(table, "spares", path, True)
    return ServiceSpec(
        name=name,
        command=command,
        environment=environment,
        directory=directory,
        replicas=replicas,
        listen=listen,
        host=host_name,
        contract=contract,
        version_command=version[0] if version is not None else None,
        health=health,
        restart=restart,
        spares=spares,
        line=line_of(reader.lines, path),
        key_lines={key: line for key in table if (line := line_of(reader.lines, (*path, key)))},
        shown=shown,
    )


def _host_entry(
    reader: _Reader, host_name: str | None, path: tuple[str, ...], registry: dict[str, HostEntry]
) -> HostEntry | None:
    """The registered host a service names in ``host`` (None when it names none)."""
    if host_name is None:
        return None
    entry = registry.get(host_name)
    if entry is None:
        known = ", ".join(sorted(registry)) or "none"
        raise reader.fail((*path, "host"), f"no installed package declares a host {host_name!r} (installed: {known})")
    return entry


def _environment(reader: _Reader, value: Any, path: tuple[str, ...]) -> dict[str, str]:
    """A service's ``environment`` table: each value a string or a number, ``${NAME}`` expanded."""
    if not isinstance(value, dict):
        raise reader.fail(path, f'expected a table of NAME = "value", got {_kind(value)}')
    environment: dict[str, str] = {}
    for key, raw in value.items():
        if not isinstance(raw, str | int | float) or isinstance(raw, bool):
            raise reader.fail((*path, key), f"expected a string or a number, got {_kind(raw)}")
        environment[key] = reader.expand(str(raw), (*path, key))
    return environment


def _listen(reader: _Reader, table: dict[str, Any], path: tuple[str, ...]) -> tuple[str, int] | None:
    """The address the supervisor binds for a service (``listen``), or None when the service binds its own."""
    listen_text = reader.string(table, "listen", path)
    if listen_text is None:
        return None
    try:
        return parse_address(listen_text)
    except ValueError as exc:
        raise reader.fail((*path, "listen"), str(exc)) from None


def _replicas(reader: _Reader, table: dict[str, Any], path: tuple[str, ...], listen: tuple[str, int] | None) -> int:
    """How many replicas a service runs: more than one only on an address the supervisor shares among them."""
    replicas = int(reader.number(table, "replicas", path, 1, low=1, high=64, whole=True))
    if replicas > 1 and listen is None:
        raise reader.fail(
            (*path, "replicas"),
            'several replicas need a shared address: add listen = "HOST:PORT" and pass {listen_fd} in command',
        )
    return replicas


def _placeholders(
    reader: _Reader, command: tuple[str, ...], path: tuple[str, ...], listen: tuple[str, int] | None
) -> set[str]:
    """The placeholders ``command`` uses: ``{listen_fd}`` exactly when the supervisor binds (``listen``), since
    otherwise nothing would take the bound socket, and ``{check_fd}`` only then."""
    used = {p for p in PLACEHOLDERS if any(p in arg for arg in command)}
    if listen is not None and "{listen_fd}" not in used:
        raise reader.fail((*path, "command"), "with listen, the command must pass the shared socket: add {listen_fd}")
    if listen is None and used & {"{listen_fd}", "{check_fd}"}:
        raise reader.fail((*path, "command"), '{listen_fd} and {check_fd} need listen = "HOST:PORT"')
    return used


def _version_command(
    reader: _Reader,
    table: dict[str, Any],
    path: tuple[str, ...],
    *,
    command: tuple[str, ...],
    entry: HostEntry | None,
    contract: bool,
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The command that prints a service's version triple and how it is shown, or None without one: the file's
    ``version_command``, else, when the contract is checked, the registered host's own beside ``command``."""
    given = reader.argv(table, "version_command", path)
    if given is not None:
        return given, tuple(table["version_command"])
    if not contract:
        return None
    if entry is None:
        raise reader.fail(
            (*path, "contract"),
            "checking the contract needs version_command (or host, naming a registered Bee host)",
        )
    return (command[0], *entry.version_args), (table["command"][0], *entry.version_args)


def _health(
    reader: _Reader,
    value: Any,
    path: tuple[str, ...],
    *,
    entry: HostEntry | None,
    listen: tuple[str, int] | None,
    used: set[str],
) -> HealthSpec:
    table = reader.table(value, path, _HEALTH_KEYS)
    default: Check = "process"
    if entry is not None:
        default = "http" if entry.check == "health" else "mcp"
    check = reader.string(table, "check", path, default)
    if check not in ("http", "mcp", "process"):
        raise reader.fail((*path, "check"), f'expected "http", "mcp" or "process", got {check!r}')
    url = reader.string(table, "url", path)
    health_path = reader.string(table, "path", path, "/health") or "/health"
    if not health_path.startswith("/"):
        raise reader.fail((*path, "path"), f"expected a path starting with /, got {health_path!r}")
    if check == "http":
        if listen is None and url is None:
            raise reader.fail(path, 'an http check needs url = "http://HOST:PORT/health" (or listen on the service)')
        if listen is not None and url is None and "{check_fd}" not in used:
            raise reader.fail(
                path,
                "with listen, the http check asks each replica on its own socket: pass {check_fd} in the command "
                "(or give url)",
            )
        if url is not None and not url.startswith(("http://", "https://")):
            raise reader.fail((*path, "url"), f"expected an http:// or https:// URL, got {url!r}")
    if check == "mcp" and listen is not None:
        raise reader.fail((*path, "check"), "the mcp check speaks over the service's stdin and stdout: drop listen")
    return HealthSpec(
        check=check,  # type: ignore[arg-type]  # narrowed by the membership test above
        url=url,
        path=health_path,
        interval=reader.number(table, "interval", path, 1.0, low=0.05, high=3600),
        timeout=reader.number(table, "timeout", path, 5.0, low=0.05, high=600),
        failures=int(reader.number(table, "failures", path, 3, low=1, high=1000, whole=True)),
    )


def _restart(reader: _Reader, value: Any, path: tuple[str, ...]) -> RestartPolicy:
    table = reader.table(value, path, _RESTART_KEYS)
    default = RestartPolicy()
    policy = reader.string(table, "policy", path, default.restart)
    if policy not in ("always", "on-failure", "never"):
        raise reader.fail((*path, "policy"), f'expected "always", "on-failure" or "never", got {policy!r}')
    backoff = reader.number(table, "backoff", path, default.backoff, low=0, high=3600)
    backoff_max = reader.number(table, "backoff_max", path, max(default.backoff_max, backoff), low=0, high=86400)
    if backoff_max < backoff:
        raise reader.fail((*path, "backoff_max"), f"must be at least backoff ({_plain(backoff)})")
    return RestartPolicy(
        restart=policy,  # type: ignore[arg-type]  # narrowed by the membership test above
        start_seconds=reader.number(table, "start_seconds", path, default.start_seconds, low=0, high=3600),
        start_retries=int(
            reader.number(table, "start_retries", path, default.start_retries, low=0, high=1000, whole=True)
        ),
        start_timeout=reader.number(table, "start_timeout", path, default.start_timeout, low=0.1, high=3600),
        backoff=backoff,
        backoff_max=backoff_max,
        jitter=reader.number(table, "jitter", path, default.jitter, low=0, high=1),
        stop_timeout=reader.number(table, "stop_timeout", path, default.stop_timeout, low=0.1, high=3600),
    )
