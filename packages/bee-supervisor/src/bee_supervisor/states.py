"""A replica's states and the one pure function that moves between them (supervisord's model).

Everything that happens to a replica is an :class:`Event`; :func:`transition` maps the current :class:`Status`,
the event and the time to the next status, and nothing else decides a state. It reads no clock and draws no
random number: ``now`` and the jitter draw are arguments, so tests walk through time exactly. The runner in
:mod:`bee_supervisor.replica` performs what a new state asks for (spawn on STARTING, signal on STOPPING, wait until
``due`` in BACKOFF) and feeds back what happened.

Crash loops are caught as supervisord catches them: a process that exits before it has run ``start_seconds`` (or
before it became ready) is a failed start; failed starts back off exponentially, with jitter, and after
``start_retries`` of them in a row the replica is FATAL until someone starts it again.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, assert_never


class State(StrEnum):
    """What a replica is doing (the names and meanings of supervisord's process states)."""

    STOPPED = "stopped"  # not running, and not meant to be (never started, or stopped on request)
    STARTING = "starting"  # a process was spawned; it is not ready yet
    RUNNING = "running"  # the process passed its health and contract checks
    BACKOFF = "backoff"  # a start failed; the next one is due at Status.due
    STOPPING = "stopping"  # the process was asked to stop (SIGTERM, then SIGKILL after the stop timeout)
    EXITED = "exited"  # a running process ended; a restart is due at Status.due if the policy wants one
    FATAL = "fatal"  # the start failed too often in a row, or the host was refused: only a start request helps


#: The supervisor wants the replica up: a process exists or a start is coming.
RUNNING_STATES = frozenset({State.STARTING, State.RUNNING, State.BACKOFF})
#: The replica rests until something starts it.
STOPPED_STATES = frozenset({State.STOPPED, State.EXITED, State.FATAL})
#: A process exists and can be signalled.
PROCESS_STATES = frozenset({State.STARTING, State.RUNNING, State.STOPPING})


class Event(StrEnum):
    """What can happen to a replica."""

    START = "start"  # the supervisor wants it up: first start, an operator, a roll after an upgrade
    STOP = "stop"  # the supervisor wants it down
    READY = "ready"  # the started process passed its health and contract checks
    REFUSE = "refuse"  # the started process failed its contract check: stop it and do not retry
    EXIT = "exit"  # the process ended, whatever the reason
    TICK = "tick"  # time passed: a due start may begin


Restart = Literal["always", "on-failure", "never"]


@dataclass(frozen=True)
class RestartPolicy:
    """How a service is restarted and stopped (the ``[services.NAME.restart]`` table of a service file)."""

    restart: Restart = "always"
    #: A process that ends sooner than this after its spawn is a failed start (supervisord's startsecs).
    start_seconds: float = 1.0
    #: Failed starts in a row before FATAL (supervisord's startretries).
    start_retries: int = 3
    #: How long a process may take to become ready before it is stopped and counted as a failed start.
    start_timeout: float = 60.0
    #: The first backoff delay; each further failed start doubles it, up to ``backoff_max``.
    backoff: float = 1.0
    backoff_max: float = 30.0
    #: Each delay is spread by up to this fraction either way, so replicas that failed together do not retry in step.
    jitter: float = 0.2
    #: Seconds between SIGTERM and SIGKILL (the tracker itself allows open requests 10 s to finish).
    stop_timeout: float = 15.0

    def restarts_after(self, exit_code: int) -> bool:
        """Whether a process that ran and then ended with ``exit_code`` (negative: killed by that signal) is
        restarted."""
        if self.restart == "always":
            return True
        if self.restart == "on-failure":
            return exit_code != 0
        return False


@dataclass(frozen=True)
class Status:
    """A replica's state and the facts the transition rules need."""

    state: State = State.STOPPED
    #: When the replica entered ``state`` (the supervisor's monotonic clock).
    since: float = 0.0
    #: When the current (or last) process was spawned.
    started_at: float | None = None
    #: Failed starts in a row.
    retries: int = 0
    #: When the next start is due (BACKOFF, or EXITED with a restart pending); None when none is.
    due: float | None = None
    #: Why the last change happened, for people: an exit status, a refusal, the retry count.
    reason: str = ""
    #: Set while a refused process is being stopped: its exit makes the replica FATAL with ``reason``.
    refused: bool = False


def backoff_delay(policy: RestartPolicy, attempt: int, draw: float) -> float:
    """The delay before start number ``attempt + 1`` after ``attempt`` failed starts in a row.

    ``draw`` is a number in [0, 1] from the caller's random source: the delay is the exponential base spread by
    ``policy.jitter`` either way (0 gives the shortest, 1 the longest).
    """
    base: float = min(policy.backoff_max, policy.backoff * 2.0 ** max(0, attempt - 1))
    return max(0.0, base * (1 - policy.jitter + 2 * policy.jitter * draw))


def describe_exit(exit_code: int) -> str:
    """``exit status 3``, or ``ended by SIGKILL`` for a negative code (the :mod:`subprocess` convention)."""
    if exit_code >= 0:
        return f"exit status {exit_code}"
    try:
        return f"ended by {signal.Signals(-exit_code).name}"
    except ValueError:
        return f"ended by signal {-exit_code}"


def transition(
    status: Status,
    event: Event,
    *,
    now: float,
    policy: RestartPolicy,
    exit_code: int = 0,
    reason: str = "",
    draw: float = 0.5,
) -> Status:
    """The status after ``event`` happens at ``now``; the same status when the event changes nothing.

    ``exit_code`` goes with EXIT (negative when a signal ended the process), ``reason`` with REFUSE, and ``draw`` (in
    [0, 1]) is the jitter draw used when the event leads to BACKOFF.
    """
    state = status.state

    def enter(
        new: State,
        *,
        started_at: float | None = status.started_at,
        retries: int = status.retries,
        due: float | None = status.due,
        reason: str = status.reason,
        refused: bool = False,
    ) -> Status:
        return Status(new, now, started_at, retries, due, reason, refused)

    match event:
        case Event.START:
            if state in STOPPED_STATES or state is State.BACKOFF:
                retries = status.retries if state is State.BACKOFF else 0
                return enter(State.STARTING, started_at=now, retries=retries, due=None, reason="")
            return status
        case Event.STOP:
            if state in (State.STARTING, State.RUNNING):
                return enter(State.STOPPING, reason="stop requested")
            if state in (State.BACKOFF, State.EXITED):
                return enter(State.STOPPED, due=None, reason="stop requested")
            return status
        case Event.READY:
            return enter(State.RUNNING, reason="") if state is State.STARTING else status
        case Event.REFUSE:
            if state in (State.STARTING, State.RUNNING):
                return enter(State.STOPPING, reason=reason, refused=True)
            return status
        case Event.TICK:
            if state in (State.BACKOFF, State.EXITED) and status.due is not None and now >= status.due:
                return enter(State.STARTING, started_at=now, due=None, reason="")
            return status
        case Event.EXIT:
            return _after_exit(status, enter, now=now, policy=policy, exit_code=exit_code, draw=draw)
        case _:  # a new event must be handled above: mypy reports this line until it is
            assert_never(event)


def _after_exit(
    status: Status, enter: Callable[..., Status], *, now: float, policy: RestartPolicy, exit_code: int, draw: float
) -> Status:
    """The status after the process exits with ``exit_code``: stopped, restarted after its start period, backing
    off during a start, or fatal once the starts failed too often in a row."""
    state = status.state
    ended = describe_exit(exit_code)
    if state is State.STOPPING:
        if status.refused:
            return enter(State.FATAL, due=None)
        return enter(State.STOPPED, due=None, reason=ended)
    if state is State.RUNNING and status.started_at is not None and now - status.started_at >= policy.start_seconds:
        # A process that ran its start period was a good start: the crash-loop count begins again.
        due = now if policy.restarts_after(exit_code) else None
        return enter(State.EXITED, retries=0, due=due, reason=ended)
    if state in (State.STARTING, State.RUNNING):
        retries = status.retries + 1
        if retries > policy.start_retries:
            return enter(
                State.FATAL,
                retries=retries,
                due=None,
                reason=f"{ended}; the start failed {retries} times in a row (start_retries is {policy.start_retries})",
            )
        delay = backoff_delay(policy, retries, draw)
        return enter(
            State.BACKOFF,
            retries=retries,
            due=now + delay,
            reason=f"{ended} during start {retries}; next start in {delay:.2f} s",
        )
    return status
