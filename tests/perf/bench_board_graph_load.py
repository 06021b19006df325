"""The board page of one person while eight others ask for graphs Graphviz cannot draw in time, against the same
page unloaded, on one server in one run (not a test; `./dev bench board_graph_load`).

The scenario is tests/harness/board_graph_load.py, the same the test of the promise runs
(tests/reliability/test_board_graph_load.py: under attack at most 3x the unloaded median). Writes the medians, the
ratio, the ``dot`` processes seen while sampling and what the attackers were answered to
tests/perf/reports/board_graph_load.json.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from tests.harness.board_graph_load import import_hostile_graphs, measure
from tests.harness.tracker import TrackerProcess
from tests.perf._report import write_report


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        import_hostile_graphs(home, Path(scratch))
        server = TrackerProcess(home, None, "--log-level", "warning")
        server.start()
        try:
            report = measure(server)
        finally:
            server.stop()
    path = write_report("board_graph_load", report)
    print(json.dumps(report, indent=2), f"\nreport: {path}")


if __name__ == "__main__":
    main()
