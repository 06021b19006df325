"""What every `bee tracker` command shares: the ``--home`` and ``--store`` options, and the store a local command
works on."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from bee_tracker.config import TrackerConfig, default_home

if TYPE_CHECKING:
    from bee_tracker.store import SqlStore

home_option = click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Tracker home (embedded database and signing key). Default $BEE_TRACKER_HOME, else <instance>/tracker "
    "for $BEE_INSTANCE_ROOT or the nearest .bee directory above the working directory, else ./.bee/tracker.",
)
store_option = click.option(
    "--store",
    "store_url",
    default=None,
    help="Store URL: postgresql://… for a shared database, or a SQLite path. "
    "Default $BEE_TRACKER_STORE or <home>/tracker.db.",
)


def config_of(home: Path | None, store_url: str | None, **values: Any) -> TrackerConfig:
    return TrackerConfig(home=home or default_home(), store_url=store_url, **values)


def local_store(config: TrackerConfig) -> SqlStore:
    """The store a local command works on; an embedded one lives in the (private) home, created if needed."""
    from bee_tracker.home import init_home
    from bee_tracker.store import open_store

    if config.store_in_home:
        init_home(config.home)
    return open_store(config.store)
