"""The edge's admission rule as a pure object: the clock and the finishing times are plain numbers."""

import json
import logging

import pytest

from bee_hostkit.http.admission import HALF_LIFE_SECONDS, PRIOR_COST_SECONDS, Admission


def admitted(admission: Admission, now: float, count: int) -> int:
    """How many of ``count`` requests arriving at ``now`` are admitted (none finishes meanwhile)."""
    return sum(admission.try_enter(now) is None for _ in range(count))


def finish_steadily(admission: Admission, start: float, interval: float, count: int) -> float:
    """``count`` requests, one in flight at a time, each taking ``interval``; returns the clock after them."""
    now = start
    for _ in range(count):
        assert admission.try_enter(now) is None
        now += interval
        admission.leave(now)
    return now


def test_a_cold_host_admits_what_the_prior_cost_fits_in_the_target_not_the_whole_count() -> None:
    admission = Admission(100, 1, max_queue_seconds=4 * PRIOR_COST_SECONDS, floor=1)
    # in_flight * prior <= target for in_flight 0..4: five admitted, the sixth would wait behind too much.
    assert admitted(admission, 0.0, 5) == 5
    refusal = admission.try_enter(0.0)
    assert refusal == admission.queued_body
    assert json.loads(refusal) == {
        "error": "busy",
        "error_description": "the host holds as much work as it finishes in 0.02 s; retry after 1 s",
        "retry_after_seconds": 1,
    }


def test_count_only_admits_up_to_the_limit_and_answers_with_the_limit() -> None:
    admission = Admission(3, 2)
    assert admitted(admission, 0.0, 3) == 3
    refusal = admission.try_enter(0.0)
    assert refusal is not None and json.loads(refusal)["error_description"] == (
        "the host is at its limit of 3 requests in flight; retry after 2 s"
    )
    admission.leave(1.0)
    assert admission.try_enter(1.0) is None


def test_the_hard_limit_holds_even_when_the_cost_would_admit_more() -> None:
    admission = Admission(2, 1, max_queue_seconds=10.0, floor=1)
    assert admitted(admission, 0.0, 2) == 2
    assert admission.try_enter(0.0) == admission.at_limit_body


def test_cheap_measured_requests_raise_what_is_admitted() -> None:
    admission = Admission(1000, 1, max_queue_seconds=0.1, floor=1)
    now = finish_steadily(admission, 0.0, 0.001, 200)
    assert admission.cost(now) == pytest.approx(0.001, rel=0.05)
    # About target / cost: 0.1 s / ~1 ms.
    assert 95 <= admitted(admission, now, 1000) <= 101


def test_dear_measured_requests_lower_what_is_admitted_down_to_the_floor() -> None:
    admission = Admission(100, 1, max_queue_seconds=0.1, floor=4)
    now = finish_steadily(admission, 0.0, 0.05, 50)
    # 0.05 s each: two fit in the target, but the floor admits four whatever the estimate.
    assert admitted(admission, now, 10) == 4


def test_the_floor_never_exceeds_the_hard_limit() -> None:
    admission = Admission(2, 1, max_queue_seconds=0.001, floor=4)
    assert admitted(admission, 0.0, 10) == 2


def test_one_slow_call_counts_at_most_twice_the_target_and_cheap_calls_bring_the_estimate_back() -> None:
    admission = Admission(100, 1, max_queue_seconds=0.1, floor=4)
    now = finish_steadily(admission, 0.0, 0.002, 100)
    before = admission.cost(now)
    # A caller holds one request for 30 s (a slow body, a dear call): one interval, capped at 0.2 s.
    now = finish_steadily(admission, now, 30.0, 1)
    inflated = admission.cost(now)
    # The 30 s also aged every earlier interval away, so the capped one dominates; it can weigh no more than the cap.
    assert before < inflated <= 2 * 0.1
    # The floor still admits, so cheap calls keep being measured and the estimate comes back.
    assert admitted(admission, now, 4) == 4
    for _ in range(4):
        admission.leave(now)
    now = finish_steadily(admission, now, 0.002, 2000)  # four seconds: two half-lives
    assert admission.cost(now) == pytest.approx(0.002, rel=0.1)


def test_an_estimate_decays_to_the_prior_when_the_host_is_idle() -> None:
    admission = Admission(100, 1, max_queue_seconds=0.1, floor=1)
    now = finish_steadily(admission, 0.0, 0.05, 100)
    assert admission.cost(now) == pytest.approx(0.05, rel=0.05)
    later = now + 20 * HALF_LIFE_SECONDS
    assert admission.cost(later) == pytest.approx(PRIOR_COST_SECONDS, rel=0.01)


def test_an_idle_gap_is_not_measured_as_work() -> None:
    admission = Admission(100, 1, max_queue_seconds=0.1, floor=1)
    now = finish_steadily(admission, 0.0, 0.001, 50)
    # Nothing in flight for ten seconds; the next request's interval starts when it arrives.
    finish_steadily(admission, now + 10.0, 0.001, 1)
    assert admission.cost(now + 10.001) < PRIOR_COST_SECONDS


def test_overlapping_requests_are_measured_by_how_often_one_finishes() -> None:
    # Ten in flight, one finishing every 3 ms (one GIL serving them in turn): the cost is 3 ms, not 30 ms.
    admission = Admission(100, 1, max_queue_seconds=1.0, floor=1)
    now = 0.0
    assert admitted(admission, now, 10) == 10
    for _ in range(500):
        now += 0.003
        admission.leave(now)
        assert admission.try_enter(now) is None
    assert admission.cost(now) == pytest.approx(0.003, rel=0.05)


def test_shedding_is_logged_once_an_interval_with_its_counts(caplog: pytest.LogCaptureFixture) -> None:
    admission = Admission(2, 1, max_queue_seconds=0.001, floor=1)
    with caplog.at_level(logging.WARNING, logger="bee.hostkit.edge"):
        assert admitted(admission, 0.0, 5) == 1  # the first request; the next four are shed by cost
        assert len(caplog.records) == 1  # the first shed is reported at once, the rest wait for the interval
        admission.try_enter(11.0)
    assert [record.getMessage() for record in caplog.records][1] == (
        "shedding: answered 4 with 503 (0 at the limit of 2 requests in flight, 4 over 0.001 s of queued work at "
        "5.0 ms a request)"
    )


# -- fair shares between clients -------------------------------------------------------------------------------


def admitted_for(admission: Admission, now: float, client: str, count: int) -> int:
    return sum(admission.try_enter(now, client) is None for _ in range(count))


def test_under_the_target_any_client_is_admitted_whatever_it_already_holds() -> None:
    # At the prior cost, the default target is the floor of 32: one client may take all of it, beside another.
    admission = Admission(100, 1, max_queue_seconds=0.15, floor=32)
    assert admitted_for(admission, 0.0, "bob", 1) == 1
    assert admitted_for(admission, 0.0, "ann", 40) == 31


def test_a_client_below_its_share_is_admitted_past_the_target_and_the_one_above_it_is_shed() -> None:
    admission = Admission(100, 1, max_queue_seconds=0.15, floor=32)
    assert admitted_for(admission, 0.0, "hog", 100) == 32
    assert admission.try_enter(0.0, "hog") == admission.queued_body  # alone, it is shed by the queued work
    # Another client comes: below its equal share (16 of 32), while the hog holds more than its own.
    assert admitted_for(admission, 0.0, "bob", 100) == 16
    assert admission.try_enter(0.0, "bob") == admission.share_body
    assert admission.try_enter(0.0, "hog") == admission.share_body
    assert admission.in_flight == 48  # past the target by what the hog holds beyond its share, never the limit
    # The hog finishes one: still above its share, so Bob's finished slot is Bob's again, not the hog's.
    admission.leave(0.1, "hog")
    admission.leave(0.1, "bob")
    assert admission.try_enter(0.1, "hog") == admission.share_body
    assert admission.try_enter(0.1, "bob") is None


def test_one_client_never_takes_the_last_tenth_of_the_limit() -> None:
    by_count = Admission(100, 1)
    assert admitted_for(by_count, 0.0, "hog", 200) == 90
    assert json.loads(by_count.try_enter(0.0, "hog") or b"")["error_description"] == (
        "this client holds its share of the requests in flight (at most 90 of the host's 100, an equal part of what "
        "the host admits while other clients are served); retry after 1 s"
    )
    assert admitted_for(by_count, 0.0, "bob", 5) == 5
    assert admitted_for(by_count, 0.0, "ann", 10) == 5
    assert by_count.try_enter(0.0, "cat") == by_count.at_limit_body
    # Below ten in flight nothing is kept: one client may hold all of a small limit.
    assert admitted_for(Admission(9, 1), 0.0, "hog", 20) == 9


def test_many_clients_within_their_shares_fill_the_target_and_the_next_is_shed_by_cost() -> None:
    admission = Admission(100, 1, max_queue_seconds=0.15, floor=32)
    assert sum(admission.try_enter(0.0, f"agent-{n}") is None for n in range(40)) == 32
    assert admission.try_enter(0.0, "one-more") == admission.queued_body


def test_a_client_that_leaves_is_forgotten() -> None:
    admission = Admission(100, 1, max_queue_seconds=0.15, floor=32)
    assert admitted_for(admission, 0.0, "hog", 100) == 32
    assert admitted_for(admission, 0.0, "bob", 1) == 1
    admission.leave(0.01, "bob")
    # Alone again, the hog's share is the whole target: it is shed by cost, not by share.
    assert admission.try_enter(0.01, "hog") == admission.queued_body


def test_shedding_by_share_is_counted_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    admission = Admission(10, 1)
    with caplog.at_level(logging.WARNING, logger="bee.hostkit.edge"):
        assert admitted_for(admission, 0.0, "hog", 20) == 9
    assert caplog.records[0].getMessage() == (
        "shedding: answered 1 with 503 (0 at the limit of 10 requests in flight, 0 over - s of queued work at 5.0 ms "
        "a request, 1 beyond their client's share)"
    )


def test_streams_are_counted_apart_from_calls_within_their_own_cap() -> None:
    from bee_hostkit.http.admission import Streams

    calls = Admission(2, 1)
    streams = Streams(3, 1)
    assert [streams.try_enter() for _ in range(4)] == [True, True, True, False]
    assert b"3 listen streams open" in streams.body and json.loads(streams.body)["retry_after_seconds"] == 1
    # Three open streams take nothing from the calls' count: both calls are admitted.
    assert calls.try_enter(0.0) is None and calls.try_enter(0.0) is None
    streams.leave()
    assert streams.try_enter()
    assert Streams(None, 1).try_enter()
