"""One import from start to end, in one transaction: the importer of the form chosen, the checks of the whole, and
the kept readiness brought up to date.

The importer (:mod:`.legacy`, :mod:`.backup`, on :mod:`.transfer`) checks each line; the whole is then checked for
the team's work it would discard (:mod:`.worked`) and the dependency cycles it would close (:mod:`.graph`). Its own
module so that :mod:`.transfer`, which the form importers build on, imports neither of them.
"""

from __future__ import annotations

import gc
from typing import Any, Final

from bee_contracts import BeeError, ErrorCode, invalid
from bee_contracts.words import counted
from bee_tracker.store import backup, graph, legacy, readiness, worked
from bee_tracker.store.db import Tx
from bee_tracker.store.sources import Backup, Choice
from bee_tracker.store.transfer import Options, Run

#: Cycles a refusal lists in its details (the message spells out the first).
_CYCLES_LISTED: Final = 100
#: A store holding more than this many issues for each one an import wrote or removed has its readiness brought up to
#: date around what the import touched: a few statements per 400 issues touched. A smaller one (or an empty one) is
#: rebuilt whole: a few statements over every row, which then costs less (measured: 20,000 issues into 20,000 took
#: 450 statements and four times the rebuild's time on PostgreSQL). Either way the cost follows the import's size.
_STORE_PER_TOUCHED: Final = 8


def run_import(tx: Tx, choice: Choice, *, configured_prefix: str | None, options: Options) -> dict[str, Any]:
    """Import what ``choice`` names in this transaction, bring the kept readiness up to date; return the report.

    Raises:
        BeeError: ``invalid_argument`` naming the first bad line, or a dependency cycle the import would close;
            ``conflict`` naming the issues the team worked on that the import would replace or delete (unless
            ``options`` allows either). The transaction then rolls back whole.
    """
    run = Run(tx, configured_prefix=configured_prefix, options=options)
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
            if choice.events is not None:
                backup.load_events(run, choice.events)
    except BaseException:
        run.bulk.close(abandon=True)  # the writer lets go of the connection before it rolls back
        raise
    finally:
        run.bulk.close()
        if collecting:
            gc.enable()
    _check_worked(run)
    _check_cycles(run)
    report = run.report.as_dict()
    touched = run.report.imported + len(run.removed)
    prior, since, removed, parents = run.prior, run.base, run.removed, run.removed_parents
    del run  # its entry per id goes before the readiness is brought up to date, which holds a row per issue
    if prior and _holds_more_than(tx, _STORE_PER_TOUCHED * touched):
        readiness.after_import(tx, since, removed, parents)
    else:
        readiness.rebuild(tx)
    return report


def _holds_more_than(tx: Tx, count: int) -> bool:
    """Whether the store holds more than ``count`` issues (counting no further)."""
    found = tx.row("SELECT COUNT(*) FROM (SELECT 1 FROM issues LIMIT ?) upto", [count + 1])
    return found is not None and int(found[0]) > count


def _check_worked(run: Run) -> None:
    """Raises: BeeError: ``conflict`` when the import replaces issues the team worked on, without discard_changes."""
    discarded = run.discarded()
    if not discarded:
        return
    if run.options.discard_changes:
        run.report.discarded = discarded
        return
    raise BeeError(
        ErrorCode.CONFLICT,
        f"this import would replace or delete {counted(len(discarded), 'issue')} the team changed since their "
        f"import, discarding that work: {worked.spelled_out(discarded)}. To keep the work, leave those issues out "
        "of the file; to replace them anyway, import again with --discard-changes (the report then lists what was "
        "discarded). Nothing was imported",
        details={"changed": discarded},
    )


def _check_cycles(run: Run) -> None:
    """Raises: BeeError: ``invalid_argument`` when the import closes a dependency cycle, without allow_cycles."""
    found = graph.import_cycles(run.tx, run.base, run.named)
    if not found:
        return
    listed = [
        {
            "cycle": [edges[0][0], *(edge[2] for edge in edges)],
            "edges": [{"id": source, "type": kind, "target": target} for source, kind, target in edges],
        }
        for edges in found
    ]
    if run.options.allow_cycles:
        run.report.cycles = listed
        return
    spelled = " ".join(f"{source} -[{kind}]->" for source, kind, _ in found[0]) + f" {found[0][0][0]}"
    more = f" (and {counted(len(found) - 1, 'more cycle')}, listed in the details)" if len(found) > 1 else ""
    raise invalid(
        f"this import would close a dependency cycle: {spelled}{more}. Every issue in a cycle waits on itself and is "
        "never ready, so the link tool refuses one; remove one of its dependencies from the file, or import again "
        "with --allow-cycles to take the cycles as they are (as Beads' own import does). Nothing was imported",
        cycles=listed[:_CYCLES_LISTED],
        cycleCount=len(found),
    )
