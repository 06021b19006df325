"""The pieces `serve_http_workers` sends to each worker process: picklable, and a worker dies with its parent."""

import functools
import pickle
import subprocess
import sys
from pathlib import Path

from bee_hostkit.http.edge import EdgeProtocol, EdgeProtocolFactory, _protocol_of_this_process
from bee_hostkit.http.limits import EdgeLimits
from bee_hostkit.http.workers import _WorkerApp


def test_the_protocol_factory_and_the_app_factory_survive_pickling() -> None:
    limits = EdgeLimits(max_in_flight=7)
    factory = pickle.loads(pickle.dumps(EdgeProtocolFactory(limits)))
    assert factory.limits == limits
    app = pickle.loads(pickle.dumps(_WorkerApp(functools.partial(dict, answer=42))))
    assert app.factory() == {"answer": 42}


def test_one_process_binds_one_protocol_class_per_limits_so_its_connections_share_one_admission_count() -> None:
    bound = _protocol_of_this_process(EdgeLimits(max_in_flight=3))
    assert issubclass(bound, EdgeProtocol) and bound.admission.limit == 3
    assert _protocol_of_this_process(EdgeLimits(max_in_flight=3)) is bound
    assert _protocol_of_this_process(EdgeLimits(max_in_flight=4)) is not bound


def _run_child(parent: str) -> int:
    code = (
        "import os, time; from bee_hostkit.http.workers import die_with_parent; "
        f"die_with_parent({parent}); time.sleep(0.2)"
    )
    return subprocess.run([sys.executable, "-c", code], timeout=60, check=False).returncode


def test_a_worker_whose_parent_is_already_gone_stops_at_once() -> None:
    # pid 1 is never this test's pid: to the child, its real parent "has gone".
    assert _run_child("1") == -15
    assert _run_child("os.getppid()") == 0


def test_the_parent_stops_with_status_3_when_its_workers_cannot_start(tmp_path: Path) -> None:
    # A factory that raises in every worker: the parent must stop (not restart them forever) and say it failed.
    code = (
        "import functools; from bee_hostkit.http.workers import serve_http_workers; "
        "from bee_hostkit.http.limits import EdgeLimits; "
        "serve_http_workers(functools.partial(int, 'x'), workers=2, host='127.0.0.1', port=0, limits=EdgeLimits(), "
        "log_level='warning')"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 3, completed.stderr
    assert "the worker could not build its app" in completed.stderr


def test_connections_accepted_on_the_shared_socket_have_nagle_off() -> None:
    # uvicorn binds the shared socket as protocol 0; asyncio then leaves Nagle's algorithm on for the connections it
    # accepts, and every two-part response waits for the client's delayed ACK. _as_tcp names the protocol.
    import asyncio
    import socket

    from uvicorn import Config

    from bee_hostkit.http.workers import _as_tcp

    def nodelay_of_an_accepted_connection(listening: socket.socket) -> int:
        async def main() -> int:
            accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

            class Probe(asyncio.Protocol):
                def connection_made(self, transport: asyncio.BaseTransport) -> None:
                    sock = transport.get_extra_info("socket")
                    accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                    transport.close()

            server = await asyncio.get_running_loop().create_server(Probe, sock=listening)
            _, writer = await asyncio.open_connection(*listening.getsockname()[:2])
            value = await asyncio.wait_for(accepted, 10)
            writer.close()
            server.close()
            return value

        return asyncio.run(main())

    bound = Config(app=dict, host="127.0.0.1", port=0).bind_socket()
    assert bound.proto == 0
    assert nodelay_of_an_accepted_connection(_as_tcp(bound)) != 0
    assert nodelay_of_an_accepted_connection(Config(app=dict, host="127.0.0.1", port=0).bind_socket()) == 0
