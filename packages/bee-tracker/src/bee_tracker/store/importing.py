"""One import from start to end: the importer of the form chosen, run in one transaction (see :mod:`.transfer`).

Its own module so that :mod:`.transfer`, which the form importers build on, imports neither of them.
"""

from __future__ import annotations

import gc
from typing import Any

from bee_tracker.store import backup, legacy
from bee_tracker.store.db import Tx
from bee_tracker.store.sources import Backup, Choice
from bee_tracker.store.transfer import Run


def run_import(tx: Tx, choice: Choice, *, configured_prefix: str | None) -> dict[str, Any]:
    """Import what ``choice`` names in this transaction; return the report.

    Raises:
        BeeError: ``invalid_argument`` naming the first bad line (the transaction then rolls back whole).
    """
    run = Run(tx, configured_prefix=configured_prefix)
    run.report.source = choice.describe()
    # Parsing makes millions of small objects that all live until their batch is written: the cyclic collector
    # would walk them again and again for nothing (none of them forms a cycle).
    collecting = gc.isenabled()
    gc.disable()
    try:
        if isinstance(choice.source, Backup):
            backup.load(run, choice.source)
        else:
            legacy.load(run, choice.source)
    except BaseException:
        run.bulk.close(abandon=True)  # the writer lets go of the connection before it rolls back
        raise
    finally:
        run.bulk.close()
        if collecting:
            gc.enable()
    return run.report.as_dict()
