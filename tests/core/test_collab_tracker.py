"""The core's tracker client against a real `bee tracker serve`: every failure becomes one clear contracts error.

Faults between the two are made by a relay in front of the tracker (requests slowed, or lost on the way).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import BeeError
from bee_core.collab.tracker import Tracker, run
from bee_hostkit import Deadline
from tests.harness.postgres import free_port
from tests.harness.relay import Relay
from tests.harness.tracker import TrackerProcess

pytestmark = pytest.mark.e2e

ALICE = "alice@example.com"


@pytest.fixture
def tracker(tracker_factory: Callable[..., TrackerProcess], tmp_path: Path) -> TrackerProcess:
    return tracker_factory(str(tmp_path / "tracker.db"))


def failure(url: str, token: str, seconds: float, *calls: tuple[str, str, dict[str, Any]]) -> BeeError:
    """The error of running ``calls`` (``("call" | "write", tool, arguments)``) against ``url``."""

    async def work(tracker: Tracker) -> None:
        for how, tool, arguments in calls:
            await getattr(tracker, how)(tool, arguments)

    with pytest.raises(BeeError) as info:
        run(url, token, Deadline(seconds), work)
    return info.value


def test_answers_and_tool_errors_keep_the_trackers_words(tracker: TrackerProcess) -> None:
    token = tracker.token(ALICE)

    async def work(client: Tracker) -> list[dict[str, Any]]:
        return [await client.write("create", {"title": "one"}), await client.call("search", {"query": "one"})]

    created, found = run(tracker.url, token, Deadline(30), work)
    assert [issue["id"] for issue in found["issues"]] == [created["id"]]

    missing = failure(tracker.url, token, 30, ("call", "get", {"id": "bd-nope"}))
    assert (missing.code, missing.retryable, missing.outcome_unknown) == ("not_found", False, False)
    assert "no issue 'bd-nope'" in missing.message and missing.details == {"id": "bd-nope"}
    refused = failure(tracker.url, token, 30, ("write", "claim", {"id": "bd-nope"}))
    assert refused.code == "not_found" and refused.outcome_unknown is False  # answered: nothing was written
    unknown = failure(tracker.url, token, 30, ("call", "no_such_tool", {}))
    assert unknown.code == "unsupported" and "does not serve no_such_tool" in unknown.message


def test_a_refused_token_is_unauthorized_without_echoing_it(tracker: TrackerProcess) -> None:
    error = failure(tracker.url, "abc.def.ghi", 30, ("call", "search", {}))
    assert error.code == "unauthorized" and "refused the token" in error.message and "abc.def" not in error.message


def test_a_tracker_that_is_not_there_is_unavailable_and_retryable() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    error = failure(url, "x.y.z", 30, ("call", "search", {}))
    assert (error.code, error.retryable) == ("unavailable", True) and url in error.message


def test_a_lost_write_is_an_unknown_outcome_and_a_lost_read_is_not(tracker: TrackerProcess) -> None:
    token = tracker.token(ALICE)
    # A request that is never answered ends at the server's silence limit (unavailable) or at the caller's deadline
    # (deadline_exceeded), whichever comes first on a busy machine; either way a lost write's outcome is unknown and
    # a lost read's is not.
    lost = ("unavailable", "deadline_exceeded")
    with Relay(tracker.port, swallow=b'"name":"create"') as relay:
        write = failure(relay.url, token, 2, ("call", "search", {}), ("write", "create", {"title": "lost"}))
        assert write.code in lost and (write.retryable, write.outcome_unknown) == (True, True)
        assert "may or may not have been made" in write.message
        read = failure(relay.url, token, 2, ("call", "create", {"title": "lost"}))  # not declared a write
        assert read.code in lost and read.outcome_unknown is False


def test_a_unit_of_work_past_its_deadline_is_deadline_exceeded(tracker: TrackerProcess) -> None:
    token = tracker.token(ALICE)
    with Relay(tracker.port, delay=0.4) as relay:
        error = failure(relay.url, token, 3, *[("call", "search", {})] * 10)
    assert (error.code, error.retryable) == ("deadline_exceeded", True) and "3-second deadline" in error.message
