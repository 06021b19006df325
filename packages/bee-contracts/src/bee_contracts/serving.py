"""The serve command of a stdio host as data: the options both hosts take, their log levels and the one log format.

The hosts make their click options of it (:mod:`bee_hostkit.options`), each host's registry entry names its options
with it (:class:`bee_contracts.hosts.HostEntry`), and the `bee` front end parses a command line with it before
anything heavy loads: plain data and one function, no imports.
"""

from __future__ import annotations

# Annotations only (mypy reads this name as True): the front end need not load typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

#: The valued options every stdio host's serve command takes, each with the setting it gives: the checkout served,
#: the instance it selects (:class:`bee_contracts.layout.Checkout`) and the log level. A host's registry entry may
#: name more spellings of one (the design host keeps ``--root`` for ``--checkout``).
SERVE_OPTIONS = (("--checkout", "checkout"), ("--instance-root", "instance_root"), ("--log-level", "log_level"))

#: The descriptors the warm supervisor hands a warm host (never typed by people): its listening socket, and its own
#: socket for the supervisor's probes.
WARM_FD = "--warm-fd"
WARM_CHECK_FD = "--warm-check-fd"

LOG_LEVELS = ("debug", "info", "warning", "error")
DEFAULT_LOG_LEVEL = "warning"
#: The log level when ``--log-level`` is not given.
ENV_LOG_LEVEL = "BEE_LOG_LEVEL"
#: How a stdio host's log lines look on stderr (never on stdout, which is the protocol's).
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def log_level(given: str | None, environ: Mapping[str, str]) -> str | None:
    """``given``, else ``$BEE_LOG_LEVEL``, else ``warning``; None when that is not one of :data:`LOG_LEVELS`."""
    level = given if given is not None else environ.get(ENV_LOG_LEVEL, DEFAULT_LOG_LEVEL)
    return level if level in LOG_LEVELS else None
