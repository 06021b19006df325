"""The transition function, walked through time by hand: each test is named after the transition it provokes."""

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bee_supervisor.states import (
    PROCESS_STATES,
    RUNNING_STATES,
    STOPPED_STATES,
    Event,
    RestartPolicy,
    State,
    Status,
    backoff_delay,
    describe_exit,
    transition,
)

POLICY = RestartPolicy(start_seconds=1.0, start_retries=2, backoff=1.0, backoff_max=8.0, jitter=0.0)


def step(status: Status, event: Event, now: float, policy: RestartPolicy = POLICY, **extra: Any) -> Status:
    return transition(status, event, now=now, policy=policy, **extra)


def started(now: float = 0.0) -> Status:
    return step(Status(), Event.START, now)


def running(now: float = 0.0, ready_at: float = 0.5) -> Status:
    return step(started(now), Event.READY, ready_at)


def test_stopped_to_starting_on_start() -> None:
    status = started(now=10.0)
    assert status.state is State.STARTING
    assert status.since == 10.0 and status.started_at == 10.0 and status.retries == 0 and status.due is None


def test_starting_to_running_when_ready() -> None:
    status = running(now=0.0, ready_at=0.4)
    assert status.state is State.RUNNING and status.since == 0.4 and status.started_at == 0.0


def test_starting_to_backoff_when_the_process_exits() -> None:
    status = step(started(), Event.EXIT, 0.2, exit_code=3)
    assert status.state is State.BACKOFF
    assert status.retries == 1 and status.due == 0.2 + 1.0
    assert "exit status 3 during start 1" in status.reason


def test_backoff_to_starting_when_due() -> None:
    backoff = step(started(), Event.EXIT, 0.2, exit_code=1)
    assert step(backoff, Event.TICK, 1.19) is backoff  # not due yet: nothing changes
    again = step(backoff, Event.TICK, 1.2)
    assert again.state is State.STARTING and again.started_at == 1.2 and again.retries == 1


def test_backoff_to_fatal_after_retries() -> None:
    status, now = started(), 0.0
    for attempt in range(1, 3):
        status = step(status, Event.EXIT, now + 0.1, exit_code=1)
        assert status.state is State.BACKOFF and status.retries == attempt
        assert status.due is not None
        now = status.due
        status = step(status, Event.TICK, now)
    status = step(status, Event.EXIT, now + 0.1, exit_code=1)
    assert status.state is State.FATAL
    assert status.retries == 3 and status.due is None
    assert "the start failed 3 times in a row (start_retries is 2)" in status.reason


def test_backoff_delays_double_up_to_the_cap() -> None:
    delays = [backoff_delay(POLICY, attempt, 0.5) for attempt in range(1, 7)]
    assert delays == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


def test_backoff_jitter_spreads_each_delay_either_way() -> None:
    policy = RestartPolicy(backoff=2.0, backoff_max=60.0, jitter=0.25)
    assert backoff_delay(policy, 2, 0.0) == 3.0
    assert backoff_delay(policy, 2, 0.5) == 4.0
    assert backoff_delay(policy, 2, 1.0) == 5.0


def test_the_jitter_draw_decides_the_due_time() -> None:
    early = step(started(), Event.EXIT, 0.0, policy=RestartPolicy(jitter=0.5), draw=0.0)
    late = step(started(), Event.EXIT, 0.0, policy=RestartPolicy(jitter=0.5), draw=1.0)
    assert (early.due, late.due) == (0.5, 1.5)


def test_running_to_backoff_when_it_exits_within_start_seconds() -> None:
    status = step(running(), Event.EXIT, 0.9, exit_code=1)
    assert status.state is State.BACKOFF and status.retries == 1


def test_running_to_exited_then_starting_when_it_ran_its_start_period() -> None:
    crashed_once = step(started(), Event.EXIT, 0.1, exit_code=1)
    assert crashed_once.due is not None
    status = step(step(crashed_once, Event.TICK, crashed_once.due), Event.READY, 1.5)

    assert status.retries == 1
    exited = step(status, Event.EXIT, 60.0, exit_code=1)
    assert exited.state is State.EXITED
    assert exited.retries == 0 and exited.due == 60.0  # a good start: the crash-loop count begins again
    assert step(exited, Event.TICK, 60.0).state is State.STARTING


def test_running_to_exited_for_good_under_policy_never() -> None:
    never = RestartPolicy(restart="never", start_seconds=0.0)
    status = step(step(step(Status(), Event.START, 0.0, never), Event.READY, 0.1, never), Event.EXIT, 5.0, never)
    assert status.state is State.EXITED and status.due is None
    assert step(status, Event.TICK, 100.0, never) is status


def test_running_to_exited_under_on_failure_restarts_only_after_a_failure() -> None:
    policy = RestartPolicy(restart="on-failure", start_seconds=0.0)
    up = step(step(Status(), Event.START, 0.0, policy), Event.READY, 0.1, policy)
    assert step(up, Event.EXIT, 5.0, policy, exit_code=0).due is None
    assert step(up, Event.EXIT, 5.0, policy, exit_code=2).due == 5.0
    assert step(up, Event.EXIT, 5.0, policy, exit_code=-9).due == 5.0  # killed by a signal is a failure


def test_starting_to_stopping_on_refuse_then_fatal_on_exit() -> None:
    refusing = step(started(), Event.REFUSE, 0.3, reason="refused: version 9 (installed: 1)")
    assert refusing.state is State.STOPPING and refusing.refused
    fatal = step(refusing, Event.EXIT, 0.4, exit_code=-15)
    assert fatal.state is State.FATAL and fatal.reason == "refused: version 9 (installed: 1)"
    assert not fatal.refused and fatal.due is None


def test_running_to_stopping_on_stop_then_stopped() -> None:
    stopping = step(running(), Event.STOP, 3.0)
    assert stopping.state is State.STOPPING
    stopped = step(stopping, Event.EXIT, 3.5, exit_code=-15)
    assert stopped.state is State.STOPPED and stopped.reason == "ended by SIGTERM"


def test_starting_to_stopping_on_stop_is_not_a_failed_start() -> None:
    stopped = step(step(started(), Event.STOP, 0.1), Event.EXIT, 0.2, exit_code=-9)
    assert stopped.state is State.STOPPED and stopped.retries == 0


def test_backoff_to_stopped_on_stop() -> None:
    backoff = step(started(), Event.EXIT, 0.1, exit_code=1)
    stopped = step(backoff, Event.STOP, 0.2)
    assert stopped.state is State.STOPPED and stopped.due is None
    assert step(stopped, Event.TICK, 100.0) is stopped  # the old due time no longer starts it


def test_exited_to_stopped_on_stop() -> None:
    exited = step(running(), Event.EXIT, 10.0, exit_code=0)
    assert step(exited, Event.STOP, 10.1).state is State.STOPPED


def test_fatal_to_starting_on_start_resets_retries() -> None:
    fatal = Status(State.FATAL, since=5.0, retries=4, reason="crash loop")
    again = step(fatal, Event.START, 9.0)
    assert again.state is State.STARTING and again.retries == 0 and again.reason == ""


def test_events_that_do_not_apply_change_nothing() -> None:
    up = running()
    for status, event in [
        (up, Event.READY),
        (up, Event.START),
        (up, Event.TICK),
        (Status(), Event.EXIT),
        (Status(), Event.STOP),
        (Status(), Event.READY),
        (Status(), Event.REFUSE),
        (Status(State.FATAL), Event.STOP),
        (step(up, Event.STOP, 1.0), Event.START),
    ]:
        assert step(status, event, 50.0) is status, (status.state, event)


def test_describe_exit_names_the_signal() -> None:
    assert describe_exit(0) == "exit status 0"
    assert describe_exit(-9) == "ended by SIGKILL"
    assert describe_exit(-200) == "ended by signal 200"


def test_the_groupings_cover_every_state() -> None:
    assert RUNNING_STATES | STOPPED_STATES | {State.STOPPING} == set(State)
    assert not RUNNING_STATES & STOPPED_STATES
    assert {State.STARTING, State.RUNNING, State.STOPPING} == PROCESS_STATES


@given(
    st.lists(
        st.tuples(
            st.sampled_from(list(Event)),
            st.floats(0, 5),
            st.sampled_from([0, 1, -9, -15]),
            st.floats(0, 1),
        ),
        max_size=60,
    )
)
def test_any_sequence_of_events_keeps_the_status_consistent(events: list[tuple[Event, float, int, float]]) -> None:
    status, now = Status(), 0.0
    for event, elapsed, code, draw in events:
        now += elapsed
        before = status
        status = transition(status, event, now=now, policy=POLICY, exit_code=code, draw=draw)
        assert status.since <= now
        assert status.retries <= POLICY.start_retries + 1
        assert (status.due is not None) <= (status.state in (State.BACKOFF, State.EXITED))
        if status.state is State.BACKOFF:
            assert status.due is not None and status.due >= status.since
        if status.state is State.FATAL and before.state is not State.FATAL:
            assert before.refused or status.retries == POLICY.start_retries + 1
        if status.state is State.STARTING and before.state is not State.STARTING:
            assert status.started_at == now
