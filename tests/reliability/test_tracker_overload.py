"""10x overload: 1,000 concurrent clients from four processes against `--max-in-flight 100`
(tests/harness/overload.py).

Every request must be answered: a 200 with a JSON-RPC result, or a 503 with Retry-After (shed at the edge). None may
be closed without a response. Both admission rules are provoked: by cost (as the tracker ships) and by count alone
(`--max-queue-seconds 0`). How long the admitted requests take against the client floor is measured, not tested:
`./dev bench tracker_overload` (tests/perf/bench_tracker_overload.py).
"""

import httpx
import pytest

from tests.harness.overload import MAX_IN_FLIGHT, generate, summary, unanswered
from tests.harness.tracker import TrackerFactory

pytestmark = pytest.mark.e2e


@pytest.mark.timeout(900)
@pytest.mark.parametrize("admission", [(), ("--max-queue-seconds", "0")], ids=["by-cost", "by-count"])
def test_thousand_clients_are_all_answered_served_or_shed(
    tracker_factory: TrackerFactory, admission: tuple[str, ...]
) -> None:
    server = tracker_factory(None, "--max-in-flight", str(MAX_IN_FLIGHT), "--log-level", "warning", *admission)
    outcomes = generate(server.url, server.token("load@example.com"))
    assert unanswered(outcomes) == {}, summary(outcomes)
    kinds = {kind for kind, _, _ in outcomes}
    assert "served" in kinds and "busy-503" in kinds, summary(outcomes)  # 10x the limit: some served, some shed
    assert httpx.get(f"http://127.0.0.1:{server.port}/health", timeout=30).status_code == 200
