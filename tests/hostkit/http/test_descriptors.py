"""The file descriptors an HTTP host holds: the cap under the limit, the raised limit, and failed accepts logged once
an interval without a traceback (a real EMFILE, in a process of its own with a descriptor limit it has run out of)."""

import logging
import socket
import subprocess
import sys
import textwrap

import pytest

from bee_hostkit.http.descriptors import connection_cap


def test_the_cap_is_lowered_to_what_the_descriptor_limit_leaves_after_the_reserve(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="bee.hostkit.edge"):
        assert connection_cap(100, limit=1024) == 100
        assert not caplog.records
        assert connection_cap(2048, limit=1024) == 1024 - 128
        assert connection_cap(2048, limit=100_000) == 2048
        assert connection_cap(2048, limit=100) == 1
    assert caplog.records[0].getMessage() == (
        "the process may open 1024 file descriptors (ulimit -n): with 128 kept for everything else, it holds at most "
        "896 connections, not the 2048 asked for; raise the limit to hold more"
    )


def run(script: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=timeout, check=True
    )


@pytest.mark.parametrize(("hard", "raised"), [(4096, 2341), (1000, 1000)])
def test_the_soft_limit_is_raised_as_far_as_the_hard_limit_allows(hard: int, raised: int) -> None:
    out = run(
        f"""
        import resource
        from bee_hostkit.http.descriptors import raise_descriptor_limit
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, {hard}))
        raise_descriptor_limit(2048)
        print(*resource.getrlimit(resource.RLIMIT_NOFILE))
        """
    )
    assert out.stdout.split() == [str(raised), str(hard)]


#: A server on the edge's event loop that, once listening, leaves itself room for only a few more descriptors.
EMFILE_SERVER = """
    import asyncio, logging, os, resource, sys
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG, format="%(levelname)s %(name)s: %(message)s")
    from bee_hostkit.http.descriptors import edge_loop

    async def main():
        server = await asyncio.get_running_loop().create_server(asyncio.Protocol, "127.0.0.1", 0, backlog=2048)
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 5, hard))
        print(server.sockets[0].getsockname()[1], flush=True)
        sys.stdin.readline()  # the client's connections are in the backlog
        await asyncio.sleep(2.5)  # two retries of accept(), a second apart
        server.close()
        await server.wait_closed()

    loop = edge_loop()
    loop.run_until_complete(main())
    loop.run_until_complete(asyncio.sleep(1.5))  # the pending retry runs on a closed socket
"""


def test_failed_accepts_are_logged_once_an_interval_without_a_traceback() -> None:
    # asyncio alone logs each failed accept with a traceback, once for every slot of the backlog (2048) each time the
    # socket is ready: this script on asyncio's own loop wrote 24 MB, 28,666 tracebacks, in four seconds. The edge's
    # loop writes one line.
    server = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(EMFILE_SERVER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None and server.stdin is not None
    port = int(server.stdout.readline())
    clients = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(50)]
    try:
        server.stdin.write("go\n")
        server.stdin.flush()
        _, err = server.communicate(timeout=60)
    finally:
        for client in clients:
            client.close()
    assert server.returncode == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("WARNING")]
    assert warnings == [
        "WARNING bee.hostkit.edge: could not accept connections: [Errno 24] Too many open files (1 times since the "
        "last report); accepting again in a second. Raise the file-descriptor limit (ulimit -n) or lower the "
        "connection limit"
    ], err[:2000]
    assert "Traceback" not in err and "ERROR" not in err
