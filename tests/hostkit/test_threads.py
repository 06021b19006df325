"""bee_hostkit.threads: blocking work in reused worker threads, its results, failures, context and abandonment."""

import contextvars
import threading

import anyio
import anyio.to_thread
import pytest

from bee_hostkit import threads

pytestmark = pytest.mark.anyio

WHO = contextvars.ContextVar("WHO", default="nobody")


async def test_returns_the_result_from_another_thread() -> None:
    caller = threading.get_ident()
    result = await threads.run_sync(lambda a, b: (a + b, threading.get_ident()), 2, 3)
    assert result[0] == 5
    assert result[1] != caller


async def test_reraises_what_the_function_raised() -> None:
    def fail() -> None:
        raise ValueError("broken on purpose")

    with pytest.raises(ValueError, match="broken on purpose"):
        await threads.run_sync(fail)


async def test_stop_iteration_arrives_as_a_runtime_error() -> None:
    def stop() -> None:
        raise StopIteration

    with pytest.raises(RuntimeError, match="StopIteration"):
        await threads.run_sync(stop)


async def test_runs_in_a_copy_of_the_callers_context() -> None:
    WHO.set("caller")

    def read_and_change() -> str:
        seen = WHO.get()
        WHO.set("worker")
        return seen

    assert await threads.run_sync(read_and_change) == "caller"
    assert WHO.get() == "caller"  # the worker's change stayed in its copy


async def test_a_cancelled_wait_ends_at_once_and_the_worker_comes_back() -> None:
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def stuck() -> str:
        started.set()
        release.wait(30)
        finished.set()
        return "late"

    with anyio.fail_after(20):
        with anyio.move_on_after(0.2) as scope:
            await threads.run_sync(stuck)
        assert scope.cancelled_caught  # the caller stopped waiting while the function still ran
        assert started.is_set() and not finished.is_set()
        # Other work is not held up by the abandoned thread.
        assert await threads.run_sync(lambda: "other") == "other"
        release.set()
        await anyio.to_thread.run_sync(finished.wait, 10)
        # The abandoned worker finished, dropped its result and is reusable: many calls still all complete.
        assert [await threads.run_sync(lambda n=n: n * 2) for n in range(50)] == [n * 2 for n in range(50)]


async def test_concurrent_jobs_all_complete_beyond_the_limiter() -> None:
    """More jobs than the limiter's 40 places: the rest wait for a place, none is lost or answered twice."""
    gate = threading.Barrier(8)  # at least eight run at once, in separate threads

    def job(n: int) -> tuple[int, int]:
        if n < 8:
            gate.wait(10)
        return n, threading.get_ident()

    results: dict[int, int] = {}

    async def one(n: int) -> None:
        number, ident = await threads.run_sync(job, n)
        results[number] = ident

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            for n in range(120):
                tg.start_soon(one, n)
    assert sorted(results) == list(range(120))
    assert len({results[n] for n in range(8)}) == 8
    assert anyio.to_thread.current_default_thread_limiter().borrowed_tokens == 0
