"""Eight people asking at once, and again as soon as they are answered, for dependency graphs Graphviz cannot draw
in time, while someone else uses the board: that person's board page stays within 3x its unloaded time.

The scenario is tests/harness/board_graph_load.py. (The same code before the drawing queue: 543 ms unloaded,
7,265 ms under this attack, every graph a 500.)

This is the one test whose promise is a ratio of times. The unloaded median is measured first, in the same test and
on the same server, then the median under the attack; both from many samples. The numbers are printed and shown
when an assertion fails; the test writes no file: `./dev bench board_graph_load` records them in
tests/perf/reports/board_graph_load.json.
"""

import json
from pathlib import Path

import pytest

from bee_tracker.board import drawing
from tests.harness.board_graph_load import RATIO, import_hostile_graphs, measure
from tests.harness.tracker import TrackerFactory

pytestmark = [pytest.mark.e2e, pytest.mark.alone]


@pytest.mark.timeout(1200)
def test_eight_hostile_graph_requests_keep_another_persons_board_within_three_times_its_pace(
    tracker_factory: TrackerFactory, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    import_hostile_graphs(home, tmp_path)
    report = measure(tracker_factory(None, "--log-level", "warning", home=home))
    print(json.dumps(report, indent=2))

    assert report["boardPageUnderAttack"]["p50Ms"] <= RATIO * report["boardPageUnloaded"]["p50Ms"], report
    assert max(report["dotRunningWhileSampled"]) <= drawing.CONCURRENT, report  # never more dot than the queue allows
    assert set(report["attackAnswers"]) <= {"200", "422", "503"}, report  # refused or not drawn: never a 500
    assert set(report["retryAfter"]) <= {str(drawing.RETRY_AFTER_SECONDS)}, report
