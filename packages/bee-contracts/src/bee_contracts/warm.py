"""The warm-host protocol: how a `bee` front end, the warm supervisor and a warm host find and trust each other.

An editor starts `bee mcp serve` or `bee design mcp`; the front end (``bee_cli.frontend``) relays its stdio to a
warm host that the per-installation warm supervisor keeps for one **identity**: the view (its name in the host
registry), the resolved checkout and which folder it is (device and inode, so that a checkout deleted and created
again under the same path gets a host of its own), the resolved instance root, the log level and a digest of the
environment the host reads from its process (:func:`read_environment`). The host's process is started with that
environment and nothing else, so no editor's other variables reach a host another editor shares. Everything here is
the part all three agree on:

- where the sockets live: a private directory (:func:`warm_dir`), ``$XDG_RUNTIME_DIR/bee`` when that directory is
  the user's and mode 0700, else ``/tmp/bee-<uid>``, refused when it is not owned by the user or is open to group or
  others; inside it one folder per installation (``warm-<key>``), so two Bee installations of one user never share
  a host;
- what a host's socket is named: the digest of its identity (:func:`identity_digest`), computed here from what the
  user's own front end resolved — nothing from the checkout chooses a path or a command;
- the one-line JSON handshake each connection opens with (:func:`send_line`, :func:`read_line`), and the uid check
  of the peer (:func:`peer_uid`, SO_PEERCRED) both sides make.

Stdlib only (beside the data of :mod:`bee_contracts.serving`), and cheap: the front end imports this before anything
else, and its whole cost is the editor's wait.
"""

from __future__ import annotations

import json
import os
import socket
import time

# Re-exported (the ``as`` marks it for mypy): the warm front end's names, which now live with `bee bd`'s answerer's.
from bee_contracts.rundir import ENV_WARM as ENV_WARM  # noqa: PLC0414
from bee_contracts.rundir import WarmUnavailable as WarmUnavailable  # noqa: PLC0414
from bee_contracts.rundir import installation_key as installation_key  # noqa: PLC0414
from bee_contracts.rundir import peer_uid as peer_uid  # noqa: PLC0414
from bee_contracts.rundir import private_problem, sha256_hex
from bee_contracts.rundir import runtime_dir as runtime_dir  # noqa: PLC0414
from bee_contracts.serving import LOG_LEVELS

# Annotations only: the typing module is a megabyte the front end need not load (mypy reads this name as True).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

#: The version of the handshake and relay protocol; a host refuses a front end whose wire it does not speak.
WIRE = 1
#: Wires a host of this installation accepts.
SUPPORTED_WIRES = (1,)

#: How long a front end waits for a warm host before it serves cold (seconds; default :data:`WAIT_SECONDS`).
ENV_WAIT = "BEE_WARM_WAIT_SECONDS"
#: How long a warm host with no session waits before it exits (seconds; default :data:`IDLE_SECONDS`).
ENV_IDLE = "BEE_WARM_IDLE_SECONDS"
#: How long the warm supervisor holding no host waits before it exits (seconds; default :data:`SUPERVISOR_IDLE`).
ENV_SUPERVISOR_IDLE = "BEE_WARM_SUPERVISOR_IDLE_SECONDS"
#: ``0`` keeps no spare warm host (bee_supervisor.spares): a restart is then a cold start, and each identity costs
#: one host's memory instead of two.
ENV_SPARES = "BEE_WARM_SPARES"
#: Variables only the front end reads: they do not make another host.
FRONTEND_ONLY = (ENV_WARM, ENV_WAIT)

WAIT_SECONDS = 10.0
IDLE_SECONDS = 900.0
SUPERVISOR_IDLE = 60.0


#: The longest handshake line either side reads (the front end's environment travels in it).
MAX_LINE_BYTES = 1024 * 1024
#: The control socket of the warm supervisor, in the installation's folder.
CONTROL_SOCKET = "control.sock"
#: The folder holding each warm host's socket, in the installation's folder.
HOSTS_FOLDER = "hosts"

#: The variables, besides every ``BEE_*`` one, that a host reads from its process environment: where the user's
#: settings and runtime folder are, the CA bundle its HTTP clients trust, its locale, time zone and temporary folder.
#: Proxies (every ``*_proxy`` name, in any case, as the standard library reads them) and ``LC_*`` count too.
_ENV_ALSO = frozenset(
    {"HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "SSL_CERT_FILE", "SSL_CERT_DIR", "LANG", "LANGUAGE", "TZ", "TMPDIR"}
)
#: Unix socket paths are at most 107 bytes on Linux.
_MAX_SOCKET_PATH = 107


def _canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def _host_reads(key: str) -> bool:
    if key.startswith("BEE_"):
        return key not in FRONTEND_ONLY
    return key in _ENV_ALSO or key.startswith("LC_") or key.lower().endswith("_proxy")


def read_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The part of ``environ`` a host reads from its process: every ``BEE_*`` variable but the front end's own,
    proxies, the CA bundle, locale, time zone, temporary folder and the user's folders (see :data:`_ENV_ALSO`).

    A warm host's process environment is exactly this, so two editors that differ in any of it get two hosts, and
    one that differs in nothing else lends the other nothing.
    """
    return {key: value for key, value in environ.items() if _host_reads(key)}


#: What the warm supervisor reads from its environment: where the private directory is, its idle time, the
#: installed-version seam (bee_supervisor.installed), and the locale, time zone and temporary folder.
_SUPERVISOR_READS = frozenset(
    {
        "XDG_RUNTIME_DIR",
        ENV_SUPERVISOR_IDLE,
        ENV_SPARES,
        "BEE_INSTALLED_VERSION_FILE",
        "HOME",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
    }
)


def supervisor_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment the warm supervisor is started with: what it reads of ``environ``, nothing else.

    It is started by whichever front end finds none running, and then serves every editor of the installation; each
    host it starts gets its own front end's environment (:func:`read_environment`), never the supervisor's.
    """
    return {key: value for key, value in environ.items() if key in _SUPERVISOR_READS or key.startswith("LC_")}


def environment_digest(environ: Mapping[str, str]) -> str:
    """A digest of :func:`read_environment`: two environments a host would start the same in have the same one."""
    return "sha256:" + sha256_hex(_canonical(read_environment(environ)))


def folder_id(path: str) -> str:
    """Which folder ``path`` is now: ``device:inode``. A folder deleted and created again under the same path is
    another one.

    Raises:
        WarmUnavailable: ``path`` cannot be examined.
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        raise WarmUnavailable(f"cannot examine {path}: {exc.strerror or exc}") from None
    return f"{info.st_dev}:{info.st_ino}"


def make_identity(
    view: str, checkout: str, instance: str, log_level: str, environ: Mapping[str, str], *, place: str
) -> dict[str, str]:
    """The identity of the warm host that serves ``view`` (a view's name in the host registry,
    :meth:`bee_contracts.hosts.HostEntry.every_view`) of ``checkout`` (resolved; the folder ``place``, see
    :func:`folder_id`) with ``instance`` (resolved: :class:`bee_contracts.layout.Checkout`) to a front end with
    ``environ``."""
    return {
        "view": view,
        "checkout": checkout,
        "place": place,
        "instance": instance,
        "logLevel": log_level,
        "environment": environment_digest(environ),
    }


def identity_of(view: str, checkout: str, instance: str, log_level: str, environ: Mapping[str, str]) -> dict[str, str]:
    """The identity of the warm host serving ``view`` of ``checkout`` as that folder is now: what the front end asks
    for and the host serves (the supervisor checks it with :func:`check_identity`).

    Raises:
        WarmUnavailable: ``checkout`` cannot be examined.
    """
    return make_identity(view, checkout, instance, log_level, environ, place=folder_id(checkout))


def identity_digest(identity: dict[str, str]) -> str:
    """32 hex digits naming ``identity``: its socket's name and its service's."""
    return sha256_hex(_canonical(identity))[:32]


# -- the private directory ---------------------------------------------------------------------------------------


def warm_dir(environ: Mapping[str, str], uid: int | None = None) -> str:
    """This installation's folder in :func:`runtime_dir`: the warm supervisor's state, control socket and hosts.

    Raises:
        WarmUnavailable: as :func:`runtime_dir`, or the folder (or its hosts folder) is not private.
    """
    uid = os.getuid() if uid is None else uid
    path = os.path.join(runtime_dir(environ, uid), f"warm-{installation_key()}")
    for folder in (path, os.path.join(path, HOSTS_FOLDER)):
        problem = private_problem(folder, uid, create=True)
        if problem is not None:
            raise WarmUnavailable(problem)
    return path


def host_socket(folder: str, digest: str) -> str:
    """The socket of the warm host named ``digest`` in installation folder ``folder``.

    Raises:
        WarmUnavailable: the path is too long for a Unix socket.
    """
    path = os.path.join(folder, HOSTS_FOLDER, f"{digest}.sock")
    if len(os.fsencode(path)) > _MAX_SOCKET_PATH:
        raise WarmUnavailable(f"the socket path {path} is too long for a Unix socket; set XDG_RUNTIME_DIR shorter")
    return path


def control_socket(folder: str) -> str:
    """The warm supervisor's control socket in installation folder ``folder``.

    Raises:
        WarmUnavailable: the path is too long for a Unix socket.
    """
    path = os.path.join(folder, CONTROL_SOCKET)
    if len(os.fsencode(path)) > _MAX_SOCKET_PATH:
        raise WarmUnavailable(f"the socket path {path} is too long for a Unix socket; set XDG_RUNTIME_DIR shorter")
    return path


# -- the handshake -----------------------------------------------------------------------------------------------


def send_line(sock: socket.socket, message: Mapping[str, object]) -> None:
    """Write ``message`` as one JSON line (blocking, under the socket's timeout)."""
    sock.sendall(json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n")


def read_line(sock: socket.socket, deadline: float, limit: int = MAX_LINE_BYTES) -> dict[str, object]:
    """Read exactly one JSON object line from blocking ``sock`` by ``deadline`` (``time.monotonic()``), and not a
    byte more: what follows the line belongs to the protocol after the handshake.

    Raises:
        WarmUnavailable: the peer closed, sent more than ``limit`` bytes, sent something that is not a JSON object,
            or did not finish by ``deadline``.
    """
    data = bytearray()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WarmUnavailable("no answer in time")
        sock.settimeout(remaining)
        try:
            # MSG_PEEK, then consume only up to the newline: the rest stays in the socket for the relay.
            chunk = sock.recv(65536, socket.MSG_PEEK)
        except TimeoutError:
            raise WarmUnavailable("no answer in time") from None
        except OSError as exc:
            raise WarmUnavailable(f"the connection failed ({exc.strerror or exc})") from None
        if not chunk:
            raise WarmUnavailable("the other side closed the connection")
        newline = chunk.find(b"\n")
        take = len(chunk) if newline < 0 else newline + 1
        data += sock.recv(take)
        if len(data) > limit:
            raise WarmUnavailable(f"a handshake line over {limit} bytes")
        if newline >= 0:
            break
    try:
        value = json.loads(bytes(data))
    except ValueError:
        raise WarmUnavailable("a handshake line that is not JSON") from None
    if not isinstance(value, dict):
        raise WarmUnavailable("a handshake line that is not a JSON object")
    return value


# -- the messages, each written once ------------------------------------------------------------------------------

if TYPE_CHECKING:
    from typing import Literal, NotRequired, TypedDict

    class Ensure(TypedDict):
        """Front end → warm supervisor: keep the host of ``identity`` (started with ``environ``) running."""

        bee: Literal["ensure"]
        wire: int
        identity: dict[str, str]
        environ: dict[str, str]

    class Ready(TypedDict):
        """Warm supervisor → front end: the host runs at ``socket``, of the installed ``versionInfo``."""

        bee: Literal["ready"]
        socket: str
        versionInfo: dict[str, str]
        pid: int | None

    class Hello(TypedDict):
        """Front end (or the supervisor's probe) → warm host, the first line of a connection."""

        bee: Literal["hello"]
        wire: int
        role: Literal["session", "probe"]
        identity: dict[str, str]
        environ: dict[str, str]

    class Welcome(TypedDict):
        """Warm host → front end: who it is, and what the front end needs to carry a session over a restart."""

        bee: Literal["welcome"]
        wire: int
        identity: dict[str, str]
        versionInfo: dict[str, str]
        pid: int
        serverInfo: dict[str, object]
        reads: list[str]
        dispatcher: dict[str, object] | None
        notes: NotRequired[list[str]]

    class Unresponsive(TypedDict):
        """Front end → warm supervisor: the host of ``identity``, process ``pid``, stopped answering."""

        bee: Literal["unresponsive"]
        wire: int
        identity: dict[str, str]
        pid: object

    class Refused(TypedDict):
        """Either side's answer to a line it will not serve: ``code`` says which rule, ``error`` why."""

        bee: Literal["refused"]
        code: str
        error: str


#: The keys of an identity (:func:`make_identity`).
IDENTITY_KEYS = frozenset({"view", "checkout", "place", "instance", "logLevel", "environment"})


class Refusal(Exception):
    """A line that is not served: ``code`` (``request``, ``wire``, ``uid``, ``identity``, ``hello``, ``fatal``) and
    the message the other side prints."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def answer(self) -> Refused:
        return {"bee": "refused", "code": self.code, "error": self.message}


def ensure_message(identity: dict[str, str], environ: dict[str, str]) -> Ensure:
    return {"bee": "ensure", "wire": WIRE, "identity": identity, "environ": environ}


def hello_message(identity: dict[str, str], environ: dict[str, str], role: Literal["session", "probe"]) -> Hello:
    return {"bee": "hello", "wire": WIRE, "role": role, "identity": identity, "environ": environ}


def ready_message(socket_path: str, version_info: dict[str, str], pid: int | None) -> Ready:
    return {"bee": "ready", "socket": socket_path, "versionInfo": version_info, "pid": pid}


def welcome_message(
    identity: dict[str, str],
    version_info: dict[str, str],
    server_info: Mapping[str, object],
    reads: list[str],
    dispatcher: dict[str, object] | None,
) -> Welcome:
    """A warm host's welcome: ``reads`` are its read-only tools, ``dispatcher`` for a view the tool that invokes
    others by name and which of those are reads (what the front end may send again after a restart)."""
    return {
        "bee": "welcome",
        "wire": WIRE,
        "identity": identity,
        "versionInfo": version_info,
        "pid": os.getpid(),
        "serverInfo": dict(server_info),
        "reads": reads,
        "dispatcher": dispatcher,
    }


def unresponsive_message(identity: dict[str, str], pid: object) -> Unresponsive:
    return {"bee": "unresponsive", "wire": WIRE, "identity": identity, "pid": pid}


def _wire(message: Mapping[str, object]) -> None:
    if message.get("wire") not in SUPPORTED_WIRES:
        raise Refusal(
            "wire", f"the front end speaks wire {message.get('wire')!r}; this Bee speaks {list(SUPPORTED_WIRES)}"
        )


def check_environ(raw: object) -> dict[str, str]:
    """``raw`` when it is an environment (an object of strings).

    Raises:
        Refusal: ``request`` otherwise.
    """
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise Refusal("request", "the environment is not an object of strings")
    return raw


def check_identity(raw: object, views: Collection[str]) -> dict[str, str]:
    """``raw`` when it is an identity a host could serve now: every key and no other, one of ``views`` (those of the
    stdio hosts installed) and a known log level, a resolved absolute checkout that is still the same folder, and an
    absolute instance.

    Raises:
        Refusal: ``request``, saying which part is wrong.
    """
    if not isinstance(raw, dict) or set(raw) != IDENTITY_KEYS or not all(isinstance(v, str) for v in raw.values()):
        raise Refusal("request", "the identity is malformed")
    identity: dict[str, str] = raw
    if identity["view"] not in views:
        known = ", ".join(sorted(views)) or "none"
        raise Refusal("request", f"unknown view {identity['view']!r} (the stdio hosts installed serve {known})")
    if identity["logLevel"] not in LOG_LEVELS:
        raise Refusal("request", f"unknown log level {identity['logLevel']!r}")
    checkout = identity["checkout"]
    if not os.path.isabs(checkout) or not os.path.isdir(checkout) or os.path.realpath(checkout) != checkout:
        raise Refusal("request", f"the checkout {checkout!r} is not a resolved absolute directory")
    try:
        place = folder_id(checkout)
    except WarmUnavailable as exc:
        raise Refusal("request", str(exc)) from None
    if place != identity["place"]:
        raise Refusal("request", f"the checkout {checkout!r} is another folder now (it was deleted and created again)")
    if not os.path.isabs(identity["instance"]):
        raise Refusal("request", f"the instance root {identity['instance']!r} is not an absolute path")
    return identity


def check_ensure(request: object, views: Collection[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The identity and environment of a valid ensure request for one of ``views`` (the warm supervisor's check).

    Raises:
        Refusal: ``wire`` for a wire this installation does not speak, ``request`` for anything malformed.
    """
    if not isinstance(request, dict) or request.get("bee") != "ensure":
        raise Refusal("request", "not an ensure request")
    _wire(request)
    identity = check_identity(request.get("identity"), views)
    environ = check_environ(request.get("environ"))
    if environment_digest(environ) != identity["environment"]:
        raise Refusal("request", "the environment does not match the identity's digest")
    return identity, environ


def check_unresponsive(report: Mapping[str, object]) -> tuple[dict[str, str], object]:
    """The identity and pid of a front end's report that its host stopped answering.

    Raises:
        Refusal: ``wire`` or ``request`` for a report this installation cannot read.
    """
    _wire(report)
    identity = report.get("identity")
    if not isinstance(identity, dict) or set(identity) != IDENTITY_KEYS:
        raise Refusal("request", "a malformed report")
    return identity, report.get("pid")


def check_hello(hello: Mapping[str, object], identity: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """The role (``session`` or ``probe``) and environment of a hello a host of ``identity`` accepts.

    Raises:
        Refusal: the hello is malformed, speaks no wire this host does, or names another identity.
    """
    if hello.get("bee") != "hello":
        raise Refusal("hello", "the first line is not a Bee hello")
    _wire(hello)
    role = hello.get("role")
    if role not in ("session", "probe"):
        raise Refusal("hello", f"unknown role {role!r}")
    if hello.get("identity") != dict(identity):
        raise Refusal("identity", "this host serves another view, checkout, instance or environment")
    environ = check_environ(hello.get("environ", {}))
    if role == "session" and environment_digest(environ) != identity["environment"]:
        raise Refusal("identity", "the environment differs from the one this host was started with")
    return str(role), environ
