"""The front end of the editors' stdio hosts: `bee mcp serve` and `bee design mcp`, relayed to a warm host.

An editor starts one of these per window and waits for its first answer; a cold host spends most of a second
importing the SDK. The front end imports only the standard library and bee-contracts' light modules (with the host
registry, the ``registry`` module and ``__init__`` of each host package up to the one named, which import nothing
more): it resolves the host's identity exactly as the host would (the view, the checkout and the instance it
selects, the log level, and the environment the host reads at start), asks the warm supervisor for that host
(:mod:`bee_cli.attach`), and relays stdio to it (:mod:`bee_cli.relay`), surviving the host's restarts and upgrades.

It serves only the exact command lines the click commands accept, read with the grammar each stdio host declares in
the host registry (:class:`bee_contracts.hosts.HostEntry`): its command words, its valued options (each at most once,
``--name value`` or ``--name=value``), the flags that select its views and those that select nothing — today
``mcp serve [--checkout D] [--instance-root D] [--discovery] [--log-level L]`` and ``design mcp [--stdio]
--checkout R [--instance-root D] [--log-level L]`` (``--root R`` too) — with arguments the host would accept.
Anything else (``--help``, an unknown or repeated option, a checkout the host would refuse) is declined and goes the
click way, which serves or refuses it as before. So does every command when ``BEE_WARM=0``, and one for which no warm
host is ready within ``$BEE_WARM_WAIT_SECONDS`` (10 s by default): then one line on stderr says why, and the host is
served cold, in this process.
"""

from __future__ import annotations

import os
import sys

from bee_contracts.layout import Checkout
from bee_contracts.rundir import seconds_setting
from bee_contracts.serving import log_level
from bee_contracts.warm import ENV_WAIT, ENV_WARM, WAIT_SECONDS, WarmUnavailable, identity_digest, identity_of

# Annotations only (mypy reads this name as True): the typing module is a megabyte the front end need not load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from bee_contracts.hosts import HostEntry

#: What a flag that selects nothing is read as (a view's flag is read as the view's name).
_PLAIN = ""


def _stdio_host(args: list[str]) -> HostEntry | None:
    """The installed stdio host whose serve command ``args`` names, if any."""
    from bee_contracts.hosts import each_host

    try:
        for entry in each_host():
            command = entry.command
            if entry.transport == "stdio" and command and tuple(args[: len(command)]) == command:
                return entry
    except Exception:  # a broken installation: the click way reports it
        return None
    return None


def _options(args: list[str], valued: dict[str, str], flags: dict[str, str]) -> dict[str, str] | None:
    """``args`` as click would read these options (``--name value`` or ``--name=value``, each setting at most once;
    a flag that selects a view sets ``view``), or None for anything else."""
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
            key, value = ("view", flags[arg]) if flags[arg] != _PLAIN else (arg, "1")
        else:
            return None
        if key in found:
            return None
        found[key] = value
        index += 1
    return found


def _grammar(entry: HostEntry) -> tuple[dict[str, str], dict[str, str]]:
    """``entry``'s valued options (spelling → setting) and flags (flag → the view it selects, or :data:`_PLAIN`)."""
    flags = dict.fromkeys(entry.flags, _PLAIN)
    flags.update({selecting[0]: view for view, selecting in entry.views if len(selecting) == 1})
    return dict(entry.options), flags


def target(args: list[str], environ: Mapping[str, str]) -> dict[str, str] | None:
    """The identity of the warm host that would serve ``args``, or None when the front end declines them."""
    entry = _stdio_host(args)
    if entry is None:
        return None
    options = _options(args[len(entry.command) :], *_grammar(entry))
    if options is None:
        return None
    given_instance = options.get("instance_root")
    if given_instance is not None and (
        not given_instance or (os.path.exists(given_instance) and not os.path.isdir(given_instance))
    ):
        return None  # what click's --instance-root refuses: it says why
    if "checkout" not in options and entry.absolute_checkout:
        return None  # click says the checkout is missing
    checkout = Checkout.find(options.get("checkout", "."), given_instance, environ, absolute=entry.absolute_checkout)
    # None: the host refuses this checkout (missing, not a directory, a .bee linking out of it, ...) and says why.
    level = log_level(options.get("log_level"), environ)
    if checkout is None or level is None:
        return None
    return _identity(options.get("view", entry.name), checkout.path, checkout.instance, level, environ)


def _identity(view: str, checkout: str, instance: str, level: str, environ: Mapping[str, str]) -> dict[str, str] | None:
    try:
        return identity_of(view, checkout, instance, level, environ)
    except WarmUnavailable:
        return None  # gone since it was checked: the click command says so


def wait_seconds(environ: Mapping[str, str]) -> float:
    """How long to wait for a warm host: ``$BEE_WARM_WAIT_SECONDS`` when it is a positive number, else 10 s."""
    return seconds_setting(environ, ENV_WAIT, WAIT_SECONDS)


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
