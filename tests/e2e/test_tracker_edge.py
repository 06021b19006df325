"""The tracker's HTTP edge, provoked over real sockets against `bee tracker serve`: header caps, admission at the
edge (503 + Retry-After), the request timeout and a graceful stop. Slow and silent clients, connection caps and
fair shares: tests/e2e/test_tracker_slow_clients.py."""

import contextlib
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.harness.raw_http import RawConnection, held_body, request
from tests.harness.tracker import TrackerProcess

pytestmark = pytest.mark.e2e

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
MIB = 1 << 20


def authorized(server: TrackerProcess) -> dict[str, str]:
    return {**ACCEPT, "Authorization": f"Bearer {server.token('edge@example.com')}"}


def memory_kib(pid: int) -> dict[str, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    found = {key: re.search(rf"^{key}:\s+(\d+) kB", status, re.M) for key in ("VmRSS", "VmHWM")}
    assert all(found.values()), status
    return {key: int(match.group(1)) for key, match in found.items() if match is not None}


def assert_serves(server: TrackerProcess) -> None:
    response = httpx.post(server.url, content=LIST, headers=authorized(server), timeout=30)
    assert response.status_code == 200 and response.json()["result"]["tools"]


# -- header caps ------------------------------------------------------------------------------------------------


def test_a_header_line_over_8_kib_is_answered_431_before_the_line_ends(
    tracker_factory: Callable[..., TrackerProcess],
) -> None:
    server = tracker_factory()
    with RawConnection(server.port) as connection:
        # The line never ends and the request never completes: only an answer given at the limit can arrive.
        connection.send(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nAuthorization: Bearer ".encode())
        connection.send(b"a" * (8 * 1024))
        answer = connection.response()
        assert answer is not None and answer.status == 431
        assert answer.json()["error"] == "request_header_fields_too_large"
        assert "8192 bytes" in answer.json()["error_description"]
        assert answer.headers["connection"] == "close"
        assert connection.closed_by_server()
    assert_serves(server)


def test_headers_over_32_kib_in_all_are_answered_431(tracker_factory: Callable[..., TrackerProcess]) -> None:
    server = tracker_factory()
    with RawConnection(server.port) as connection:
        connection.send(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n".encode())
        for n in range(9):  # nine lines of 4 KiB: each under the line cap, together over the total
            connection.send(f"X-Filler-{n}: {'f' * 4000}\r\n".encode())
        answer = connection.response()
        assert answer is not None and answer.status == 431
        assert "32768 bytes" in answer.json()["error_description"]


def test_a_request_line_over_8_kib_is_answered_414(tracker_factory: Callable[..., TrackerProcess]) -> None:
    server = tracker_factory()
    with RawConnection(server.port) as connection:
        connection.send(b"POST /mcp?" + b"q" * (9 * 1024))
        answer = connection.response()
        assert answer is not None and answer.status == 414 and answer.json()["error"] == "uri_too_long"


def test_headers_within_the_limits_are_served(tracker_factory: Callable[..., TrackerProcess]) -> None:
    server = tracker_factory()
    headers = authorized(server)
    headers["X-Long"] = "l" * 8000  # a line just under 8 KiB
    headers.update({f"X-Filler-{n}": "f" * 4000 for n in range(5)})  # about 29 KiB in all
    with RawConnection(server.port) as connection:
        connection.send(request("/mcp", port=server.port, headers=headers, body=LIST))
        answer = connection.response()
        assert answer is not None and answer.status == 200 and answer.json()["result"]["tools"]


def test_header_limits_are_options_of_serve(tracker_factory: Callable[..., TrackerProcess]) -> None:
    server = tracker_factory(None, "--max-header-line-bytes", "1024", "--max-header-bytes", "4096")
    headers = {**authorized(server), "X-Two-KiB": "x" * 2048}
    refused = httpx.post(server.url, content=LIST, headers=headers, timeout=30)
    assert refused.status_code == 431 and "1024 bytes" in refused.json()["error_description"]
    assert_serves(server)


def test_an_ordinary_client_reads_the_431_for_a_64_mib_header(tracker_factory: Callable[..., TrackerProcess]) -> None:
    server = tracker_factory()
    # httpx writes the whole request before it reads: the server drains what follows its answer instead of
    # resetting the connection, so the client sees the 431 rather than a broken pipe.
    response = httpx.post(server.url, content=LIST, headers={**ACCEPT, "Authorization": "Bearer " + "a" * (64 * MIB)})
    assert response.status_code == 431


def test_six_parallel_64_mib_headers_leave_memory_small_and_the_server_serving(
    tracker_factory: Callable[..., TrackerProcess],
) -> None:
    server = tracker_factory()
    assert server.process is not None
    pid = server.process.pid

    before = memory_kib(pid)
    answers: list[int | None] = []

    def attack() -> None:
        with RawConnection(server.port, timeout=120) as connection:
            connection.send(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nAuthorization: Bearer ".encode())
            chunk = b"a" * MIB
            for _ in range(64):
                if not connection.send(chunk):
                    break
            connection.send(b"\r\n\r\n")
            answer = connection.response()
            answers.append(answer.status if answer else None)

    attackers = [threading.Thread(target=attack) for _ in range(6)]
    for thread in attackers:
        thread.start()
    for thread in attackers:
        thread.join(timeout=300)
    after = memory_kib(pid)
    assert answers == [431] * 6
    # Buffering even one of the headers would add 64 MiB to the peak; the edge holds at most a few KiB of each.
    assert after["VmHWM"] - before["VmHWM"] < 16 * 1024, (before, after)
    assert_serves(server)


def test_pipelined_requests_are_answered_in_order_even_when_the_second_is_refused(
    tracker_factory: Callable[..., TrackerProcess],
) -> None:
    server = tracker_factory()
    headers = authorized(server)
    first = request("/mcp", port=server.port, headers=headers, body=LIST)
    second = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nX-Huge: {'h' * 9000}\r\n\r\n".encode()
    with RawConnection(server.port) as connection:
        connection.send(first + second)
        served, refused = connection.response(), connection.response()
        assert served is not None and served.status == 200 and served.json()["result"]["tools"]
        assert refused is not None and refused.status == 431
        assert connection.closed_by_server()


# -- admission at the edge --------------------------------------------------------------------------------------
#
# A request is admitted once its body has arrived, or once 64 KiB of it has (past uvicorn's flow-control mark the app
# must read it): a request with a body that size, sent but for its last bytes, holds its slot until they come.


def test_over_the_limit_the_answer_is_503_with_retry_after_at_once(
    tracker_factory: Callable[..., TrackerProcess],
) -> None:
    server = tracker_factory(None, "--max-in-flight", "1")
    headers = authorized(server)
    call = json.dumps(
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ready", "arguments": {}}}
    ).encode()
    with RawConnection(server.port) as holder:
        whole = request("/mcp", port=server.port, headers=headers, body=held_body(call))
        holder.send(whole[:-10])
        with httpx.Client(timeout=30) as http:
            # Probes are served until the server has admitted the holder; from then on they are shed.
            deadline = time.monotonic() + 30
            while (shed := http.post(server.url, content=call, headers=headers)).status_code == 200:
                assert time.monotonic() < deadline, "the held request was never admitted"
            assert shed.status_code == 503 and shed.headers["retry-after"] == "1"
            assert shed.json() == {
                "error": "busy",
                "error_description": "the host is at its limit of 1 requests in flight; retry after 1 s",
                "retry_after_seconds": 1,
            }
            # The same keep-alive connection carries on, and /health is never shed.
            assert http.get(f"http://127.0.0.1:{server.port}/health").status_code == 200
            holder.send(whole[-10:])
            held = holder.response()
            assert held is not None and held.status == 200 and held.json()["id"] == 7
            # The slot was released when the held request finished.
            served = http.post(server.url, content=call, headers=headers)
            assert served.status_code == 200 and served.json()["result"]["isError"] is False


def hold_until_shed(server: TrackerProcess, holders: list[RawConnection], call: bytes) -> httpx.Response:
    """Send each holder its request but the last bytes (admitted, it holds its slot), then probe with complete
    calls of the same client until one is shed: probes are served until the server has admitted every holder."""
    headers = authorized(server)
    whole = request("/mcp", port=server.port, headers=headers, body=held_body(call))
    for holder in holders:
        holder.send(whole[:-10])
    with httpx.Client(timeout=30) as http:
        deadline = time.monotonic() + 30
        while (shed := http.post(server.url, content=call, headers=headers)).status_code == 200:
            assert time.monotonic() < deadline, "the held requests were never admitted"
    for holder in holders:
        holder.send(whole[-10:])
        held = holder.response()
        assert held is not None and held.status == 200 and held.json()["result"]["isError"] is False
    return shed


def test_admission_sheds_by_queued_work_where_a_count_would_admit(
    tracker_factory: Callable[..., TrackerProcess],
) -> None:
    call = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ready"}}).encode()
    # Count alone: one client's 36 held `ready` calls are admitted, and the next is shed because one client never
    # takes the last tenth of the limit (kept for others: see tests/e2e/test_tracker_slow_clients.py).
    by_count = tracker_factory(None, "--max-in-flight", "40", "--max-queue-seconds", "0")
    with contextlib.ExitStack() as stack:
        holders = [stack.enter_context(RawConnection(by_count.port)) for _ in range(36)]
        shed = hold_until_shed(by_count, holders, call)
    assert shed.status_code == 503
    assert shed.json()["error_description"].startswith("this client holds its share of the requests in flight (at")
    assert "at most 36 of the host's 40" in shed.json()["error_description"]
    # By cost, with a target no real call fits: the 32 requests of the floor are admitted, and the next, below the
    # count limit, is shed because the calls already queued would keep it waiting longer than 1 ms.
    by_cost = tracker_factory(None, "--max-in-flight", "40", "--max-queue-seconds", "0.001")
    with contextlib.ExitStack() as stack:
        holders = [stack.enter_context(RawConnection(by_cost.port)) for _ in range(32)]
        shed = hold_until_shed(by_cost, holders, call)
    assert shed.status_code == 503 and shed.headers["retry-after"] == "1"
    assert shed.json() == {
        "error": "busy",
        "error_description": "the host holds as much work as it finishes in 0.001 s; retry after 1 s",
        "retry_after_seconds": 1,
    }
    # The held calls finished, so the next one is admitted again.
    answer = httpx.post(by_cost.url, content=call, headers=authorized(by_cost), timeout=30)
    assert answer.status_code == 200 and answer.json()["result"]["isError"] is False
    # The log counts what was shed and why.
    assert "over 0.001 s of queued work" in by_cost.log.read_text()


def test_a_request_that_does_not_arrive_in_time_is_answered_408(
    tracker_factory: Callable[..., TrackerProcess],
) -> None:
    server = tracker_factory(None, "--max-in-flight", "1", "--request-timeout", "1")
    headers = authorized(server)
    with RawConnection(server.port) as slow_body:
        slow_body.send(request("/mcp", port=server.port, headers=headers, body=LIST)[:-5])
        answer = slow_body.response()
        assert answer is not None and answer.status == 408 and answer.json()["error"] == "request_timeout"
    with RawConnection(server.port) as slow_headers:
        slow_headers.send(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n".encode())
        answer = slow_headers.response()
        assert answer is not None and answer.status == 408
    assert_serves(server)


def test_inconsistent_header_limits_are_a_usage_error(tmp_path: Path) -> None:
    bee = str(Path(sys.executable).parent / "bee")
    argv = [bee, "tracker", "serve", "--home", str(tmp_path), "--max-header-line-bytes", "8192"]
    completed = subprocess.run(
        [*argv, "--max-header-bytes", "4096"], capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode == 2 and "--max-header-line-bytes" in completed.stderr


# -- a graceful stop ------------------------------------------------------------------------------------------


def wait_for_log(server: TrackerProcess, text: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while text not in server.log.read_text():
        assert time.monotonic() < deadline, f"{text!r} never logged:\n{server.log.read_text()}"
        time.sleep(0.02)


def test_a_stopping_server_answers_the_requests_already_on_their_way_then_closes(
    tracker_factory: Callable[..., TrackerProcess],
) -> None:
    # A replica told to stop (a rolling restart) has accepted connections whose requests have not arrived, or not
    # in full: uvicorn closes those at once, and their clients read a dropped connection. They are answered, with
    # "connection: close"; a connection that never sends anything is closed after a short grace.
    import signal

    server = tracker_factory()
    headers = authorized(server)
    call = request("/mcp", port=server.port, headers=headers, body=LIST)
    with (
        RawConnection(server.port) as fresh,
        RawConnection(server.port) as halfway,
        RawConnection(server.port) as silent,
        RawConnection(server.port) as idle,
    ):
        halfway.send(call[:20])
        idle.send(call)
        answered = idle.response()  # accepted after the others (one accept queue): they are all accepted now
        assert answered is not None and answered.status == 200
        assert server.process is not None
        server.process.send_signal(signal.SIGTERM)
        wait_for_log(server, "Shutting down")
        fresh.send(call)
        halfway.send(call[20:])
        for connection in (fresh, halfway):
            response = connection.response()
            assert response is not None, "the stopping server dropped a request it had accepted"
            assert response.status == 200 and response.json()["result"]["tools"]
            assert response.headers.get("connection") == "close" and connection.closed_by_server()
        assert silent.closed_by_server()
        # An idle keep-alive connection is closed at once, as HTTP lets a server do (RFC 9112, section 9.5).
        assert idle.closed_by_server()
        # A clean stop: uvicorn re-raises the signal it caught once every connection has closed.
        assert server.process.wait(timeout=30) == -signal.SIGTERM
        assert "timeout graceful shutdown exceeded" not in server.log.read_text()


def test_a_client_that_waits_for_100_continue_is_told_to_send_its_body(
    tracker_factory: Callable[..., TrackerProcess],
) -> None:
    # The edge admits a request once its body is in, so it cannot wait for the app's first read to say "continue"
    # (uvicorn's way): it says so itself, or such a client would wait until the request timeout.
    server = tracker_factory()
    headers = {**authorized(server), "Expect": "100-continue"}
    whole = request("/mcp", port=server.port, headers=headers, body=LIST)
    head, _, body = whole.partition(b"\r\n\r\n")
    with RawConnection(server.port) as connection:
        connection.send(head + b"\r\n\r\n")
        interim = connection.response()
        assert interim is not None and interim.status == 100
        connection.send(body)
        answer = connection.response()
        assert answer is not None and answer.status == 200 and answer.json()["result"]["tools"]
