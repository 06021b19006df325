"""The command-line options of both stdio hosts, defined once: the checkout and instance every command names, and
what a serve command adds (its log level, the warm supervisor's descriptors) with its logging and its transport.

The spellings and log levels are data in :mod:`bee_contracts.serving`; a host's serve command takes its options from
the host's registry entry (:func:`serve_options`), which the `bee` front end reads too, so the command line the front
end serves warm is the one the command accepts.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from bee_contracts.serving import DEFAULT_LOG_LEVEL, ENV_LOG_LEVEL, LOG_FORMAT, LOG_LEVELS, WARM_CHECK_FD, WARM_FD
from bee_contracts.spare import SPARE_OPTION

if TYPE_CHECKING:
    from bee_contracts.hosts import HostEntry
    from bee_contracts.layout import Checkout
    from bee_hostkit.host import Host

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

logger = logging.getLogger(__name__)

#: What ``--checkout`` says when a command does not say what its checkout is for.
CHECKOUT_HELP = "The checkout (repository working tree) this command works on."
_INSTANCE_HELP = "Use this Bee instance instead of <checkout>/.bee (also $BEE_INSTANCE_ROOT)."


def checkout_option(purpose: str = CHECKOUT_HELP, *, also: tuple[str, ...] = ()) -> Decorator:
    """``--checkout DIR`` (the current folder by default; ``also`` names more spellings), given to the command as
    ``checkout: Path``."""
    return click.option(
        "--checkout",
        *also,
        "checkout",
        type=click.Path(file_okay=False, path_type=Path),
        default=".",
        show_default=True,
        help=purpose,
    )


#: ``--instance-root DIR``, given to the command as ``instance_root: Path | None``.
instance_option: Decorator = click.option(
    "--instance-root", type=click.Path(file_okay=False, path_type=Path), default=None, help=_INSTANCE_HELP
)


@dataclass(frozen=True)
class ServeOptions:
    """What a stdio host's serve command was given (:func:`serve_options`): the checkout as given, the instance
    root, the log level, and the descriptors of a warm host (None for a host serving its own stdio) and of a spare's
    channel to the supervisor (:mod:`bee_contracts.spare`)."""

    entry: HostEntry
    checkout: str
    instance_root: str | None
    log_level: str
    warm_fd: int | None
    warm_check_fd: int | None
    spare_fd: int | None = None

    def start(self) -> Checkout:
        """Send the log to stderr at the level given, and select the checkout and instance to serve
        (:meth:`~bee_contracts.layout.Checkout.select`).

        Raises:
            click.BadParameter: the checkout is not one the host serves (exit status 2: the command line is wrong).
            BeeError: ``outside_root`` for a ``.bee`` that is a symlink out of the checkout.
        """
        from bee_contracts import BeeError, ErrorCode
        from bee_contracts.layout import Checkout

        logging.basicConfig(stream=sys.stderr, level=self.log_level.upper(), format=LOG_FORMAT)
        try:
            return Checkout.select(self.checkout, self.instance_root, os.environ, absolute=self.entry.absolute_checkout)
        except BeeError as exc:
            if exc.code is not ErrorCode.INVALID_ARGUMENT:
                raise
            spellings = [spelling for spelling, setting in self.entry.options if setting == "checkout"]
            raise click.BadParameter(exc.message, param_hint=spellings) from None

    def run(self, host: Host, checkout: Checkout, view: str, notes: Callable[[], list[str]] | None = None) -> None:
        """Serve ``view`` of ``checkout`` with ``host``: over this process's stdio, or as a warm host on the
        descriptors the warm supervisor handed over. ``notes`` are what the editor is told when its session starts
        (logged at start here; a warm host sends them to each front end, which prints them on its editor's stderr).

        Raises:
            BeeError: ``invalid_argument`` when a warm descriptor is not a listening Unix stream socket.
        """
        if self.warm_fd is None:
            from bee_hostkit.stdio.transport import serve_stdio

            for note in notes() if notes is not None else []:
                logger.warning("%s", note)
            serve_stdio(host)
            return
        from bee_hostkit.stdio.warm import serve_warm_fd

        serve_warm_fd(
            host,
            self.warm_fd,
            view=view,
            checkout=checkout.path,
            instance=checkout.instance,
            log_level=self.log_level,
            check_fd=self.warm_check_fd,
            spare_fd=self.spare_fd,
            notes=notes,
        )


def serve_options(entry: HostEntry, checkout_help: str) -> Decorator:
    """The options of ``entry``'s serve command, in every spelling its registry entry names (``--checkout``, required
    when the entry wants it absolute; ``--instance-root``; ``--log-level``) and the warm supervisor's hidden
    descriptors (``--warm-fd``, ``--warm-check-fd``, ``--spare-fd``), handed to the command as one
    ``options: ServeOptions`` argument."""

    def spellings(setting: str) -> list[str]:
        return [spelling for spelling, named in entry.options if named == setting]

    checkout: dict[str, Any] = {"required": True} if entry.absolute_checkout else {"default": ".", "show_default": True}
    options = [
        click.option(*spellings("checkout"), "checkout", metavar="DIRECTORY", help=checkout_help, **checkout),
        click.option(
            *spellings("instance_root"), "instance_root", type=click.Path(file_okay=False), help=_INSTANCE_HELP
        ),
        click.option(
            *spellings("log_level"),
            "log_level",
            type=click.Choice(LOG_LEVELS),
            default=lambda: os.environ.get(ENV_LOG_LEVEL, DEFAULT_LOG_LEVEL),
            show_default=f"{DEFAULT_LOG_LEVEL}, or ${ENV_LOG_LEVEL}",
            help="Log level; logs go to stderr, never to the protocol stream.",
        ),
        # Handed over by the warm supervisor, never typed by people: hidden.
        click.option(WARM_FD, "warm_fd", type=click.IntRange(0), default=None, hidden=True),
        click.option(WARM_CHECK_FD, "warm_check_fd", type=click.IntRange(0), default=None, hidden=True),
        click.option(SPARE_OPTION, "spare_fd", type=click.IntRange(0), default=None, hidden=True),
    ]

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(command)
        def packed(
            *,
            checkout: str,
            instance_root: str | None,
            log_level: str,
            warm_fd: int | None,
            warm_check_fd: int | None,
            spare_fd: int | None,
            **given: Any,
        ) -> Any:
            options = ServeOptions(entry, checkout, instance_root, log_level, warm_fd, warm_check_fd, spare_fd)
            return command(options=options, **given)

        decorated: Callable[..., Any] = packed
        for option in reversed(options):
            decorated = option(decorated)
        return decorated

    return decorate
