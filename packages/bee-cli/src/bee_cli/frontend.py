"""The front end of the editors' stdio hosts: `bee mcp serve` and `bee design mcp`, relayed to a warm host.

An editor starts one of these per window and waits for its first answer; a cold host spends most of a second
importing the SDK. The front end imports only the standard library (and :mod:`bee_contracts.warm`): it resolves
the host's identity exactly as the host would (the view, the checkout or root, the instance root, the log level, and
the environment the host reads at start), asks the warm supervisor for that host (:mod:`bee_cli.attach`), and relays
stdio to it (:mod:`bee_cli.relay`), surviving the host's restarts and upgrades.

It serves only the exact command lines the click commands accept with these options —
``mcp serve [--checkout D] [--instance-root D] [--discovery] [--log-level L]`` and
``design mcp [--stdio] --root R [--log-level L]`` — with arguments the host would accept. Anything else (``--help``,
an unknown or repeated option, a checkout that is not a directory) is declined and goes the click way, which serves
or refuses it as before. So does every command when ``BEE_WARM=0``, and one for which no warm host is ready within
``$BEE_WARM_WAIT_SECONDS`` (10 s by default): then one line on stderr says why, and the host is served cold, in this
process.
"""

from __future__ import annotations

import os
import sys

from bee_contracts.warm import (
    ENV_WAIT,
    ENV_WARM,
    LOG_LEVELS,
    WAIT_SECONDS,
    WarmUnavailable,
    identity_digest,
    identity_of,
    resolve_instance,
)

# Annotations only (mypy reads this name as True): the typing module is a megabyte the front end need not load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

_CORE_OPTIONS = {"--checkout": "checkout", "--instance-root": "instance_root", "--log-level": "log_level"}
_DESIGN_OPTIONS = {"--root": "root", "--log-level": "log_level"}


def _options(args: list[str], valued: dict[str, str], flags: dict[str, str]) -> dict[str, str] | None:
    """``args`` as click would read these options (``--name value`` or ``--name=value``, each at most once), or
    None for anything else."""
    found: dict[str, str] = {}
    index = 0
    while index < len(args):
        arg = args[index]
        name, equals, value = arg.partition("=")
        if name in valued:
            if not equals:
                index += 1
                if index >= len(args):
                    return None
                value = args[index]
            key = valued[name]
        elif arg in flags:
            key, value = flags[arg], "1"
        else:
            return None
        if key in found:
            return None
        found[key] = value
        index += 1
    return found


def _log_level(given: str | None, environ: Mapping[str, str]) -> str | None:
    level = given if given is not None else environ.get("BEE_LOG_LEVEL", "warning")
    return level if level in LOG_LEVELS else None


def _dot_bee_leaves(checkout: str) -> bool:
    """Whether ``checkout``/.bee is a symlink leading out of ``checkout`` (a resolved path)."""
    candidate = os.path.join(checkout, ".bee")
    if not os.path.islink(candidate):
        return False
    resolved = os.path.realpath(candidate)
    return os.path.commonpath([resolved, checkout]) != checkout


def target(args: list[str], environ: Mapping[str, str]) -> dict[str, str] | None:
    """The identity of the warm host that would serve ``args``, or None when the front end declines them."""
    if args[:2] == ["mcp", "serve"]:
        options = _options(args[2:], _CORE_OPTIONS, {"--discovery": "discovery"})
        if options is None:
            return None
        checkout = os.path.realpath(os.path.expanduser(options.get("checkout", ".")))
        if not os.path.isdir(checkout):
            return None  # the click command says what is wrong with it
        given_instance = options.get("instance_root")
        if given_instance is not None and os.path.exists(given_instance) and not os.path.isdir(given_instance):
            return None
        if given_instance is None and not environ.get("BEE_INSTANCE_ROOT") and _dot_bee_leaves(checkout):
            # The host refuses such a link (outside_root: bee_contracts.layout.checkout_instance); resolved here
            # and passed on as --instance-root, the warm host would serve the instance it points at.
            return None
        level = _log_level(options.get("log_level"), environ)
        if level is None:
            return None
        view = "core-discovery" if "discovery" in options else "core"
        instance = resolve_instance(checkout, given_instance, environ)
        return _identity(view, checkout, instance, level, environ)
    if args[:2] == ["design", "mcp"]:
        options = _options(args[2:], _DESIGN_OPTIONS, {"--stdio": "stdio"})
        if options is None or "root" not in options:
            return None
        given_root = options["root"]
        if not os.path.isabs(given_root) or not os.path.isdir(given_root):
            return None
        level = _log_level(options.get("log_level"), environ)
        if level is None:
            return None
        return _identity("design", os.path.realpath(given_root), "", level, environ)
    return None


def _identity(view: str, checkout: str, instance: str, level: str, environ: Mapping[str, str]) -> dict[str, str] | None:
    try:
        return identity_of(view, checkout, instance, level, environ)
    except WarmUnavailable:
        return None  # gone since it was checked: the click command says so


def wait_seconds(environ: Mapping[str, str]) -> float:
    """How long to wait for a warm host: ``$BEE_WARM_WAIT_SECONDS`` when it is a positive number, else 10 s."""
    try:
        value = float(environ.get(ENV_WAIT, "") or WAIT_SECONDS)
    except ValueError:
        return WAIT_SECONDS
    return value if 0 < value < float("inf") else WAIT_SECONDS


def serve_warm_or_decline(args: list[str]) -> None:
    """Serve ``args`` through a warm host and end the process; return (having done nothing visible, or having
    printed why on stderr) when the command should go the click way instead."""
    environ = os.environ
    if environ.get(ENV_WARM) == "0":
        return
    identity = target(args, environ)
    if identity is None:
        return
    from bee_cli.attach import attach_first

    try:
        attached = attach_first(identity, identity_digest(identity), dict(environ), wait_seconds(environ))
    except WarmUnavailable as exc:
        sys.stderr.write(f"bee: serving in this process (no warm host: {exc})\n")
        sys.stderr.flush()
        return
    notes = attached.welcome.get("notes")
    for note in notes if isinstance(notes, list) else []:
        sys.stderr.write(f"bee: {note}\n")  # what a cold host logs at start, on this editor's stderr
    sys.stderr.flush()
    from bee_cli.relay import Relay

    code = Relay(attached, identity, dict(environ), wait_seconds(environ)).run()
    sys.stderr.flush()
    os._exit(code)
