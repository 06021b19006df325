"""The pieces `serve_http_workers` sends to each worker process: picklable, and a worker dies with its parent."""

import functools
import pickle
import subprocess
import sys

from bee_hostkit.http_edge import EdgeProtocol, EdgeProtocolFactory, _protocol_of_this_process
from bee_hostkit.http_limits import EdgeLimits
from bee_hostkit.http_workers import _WorkerApp


def test_the_protocol_factory_and_the_app_factory_survive_pickling():
    limits = EdgeLimits(max_in_flight=7)
    factory = pickle.loads(pickle.dumps(EdgeProtocolFactory(limits)))
    assert factory.limits == limits
    app = pickle.loads(pickle.dumps(_WorkerApp(functools.partial(dict, answer=42))))
    assert app.factory() == {"answer": 42}


def test_one_process_binds_one_protocol_class_per_limits_so_its_connections_share_one_admission_count():
    bound = _protocol_of_this_process(EdgeLimits(max_in_flight=3))
    assert issubclass(bound, EdgeProtocol) and bound.admission.limit == 3
    assert _protocol_of_this_process(EdgeLimits(max_in_flight=3)) is bound
    assert _protocol_of_this_process(EdgeLimits(max_in_flight=4)) is not bound


def _run_child(parent: str) -> int:
    code = (
        "import os, time; from bee_hostkit.http_workers import die_with_parent; "
        f"die_with_parent({parent}); time.sleep(0.2)"
    )
    return subprocess.run([sys.executable, "-c", code], timeout=60, check=False).returncode


def test_a_worker_whose_parent_is_already_gone_stops_at_once():
    # pid 1 is never this test's pid: to the child, its real parent "has gone".
    assert _run_child("1") == -15
    assert _run_child("os.getppid()") == 0
