"""The published status and the table `bee supervise status` prints from it."""

import json
from pathlib import Path
from typing import Any

from bee_supervisor.status import STATUS_FILE, read_status, render, with_uptime, write_status

NOW = 1_800_000_000.0


def document() -> dict[str, Any]:
    return {
        "supervisor": {
            "pid": 10,
            "config": "services/tracker.toml",
            "installed": {"version": "0.1.0", "contractVersion": "1", "contractDigest": "sha256:aa"},
        },
        "replicas": [
            {
                "service": "tracker",
                "replica": 0,
                "state": "running",
                "address": "127.0.0.1:8765",
                "pid": 11,
                "started": NOW - 3725,
                "restarts": 2,
                "version": {"version": "0.1.0"},
                "health": {"ok": True, "detail": "GET http://127.0.0.1:1/health: HTTP 200", "at": NOW - 1},
                "reason": "",
            },
            {
                "service": "worker",
                "replica": 0,
                "state": "fatal",
                "address": None,
                "pid": None,
                "started": None,
                "restarts": 3,
                "version": None,
                "health": None,
                "reason": "exit status 1; the start failed 4 times in a row (start_retries is 3)",
            },
        ],
    }


def test_the_status_file_is_replaced_whole(tmp_path: Path) -> None:
    write_status(tmp_path, {"a": 1})
    write_status(tmp_path, document())
    assert read_status(tmp_path) == document()
    assert [p.name for p in tmp_path.iterdir()] == [STATUS_FILE]  # no temporary file left behind
    (tmp_path / STATUS_FILE).write_text("{half")
    assert read_status(tmp_path) is None


def test_uptime_counts_only_for_a_process_that_runs() -> None:
    shown = with_uptime(document(), now=NOW)
    assert [r["uptime"] for r in shown["replicas"]] == [3725.0, None]


def test_the_table_shows_state_address_pid_uptime_restarts_version_and_health() -> None:
    text = render(with_uptime(document(), now=NOW), running_pid=10)
    lines = text.splitlines()
    assert lines[0] == "supervisor: running, pid 10, config services/tracker.toml"
    assert lines[1] == "installed: bee 0.1.0 (contract 1, sha256:aa)"
    assert lines[3].split() == ["SERVICE", "STATE", "ADDRESS", "PID", "UPTIME", "RESTARTS", "VERSION", "HEALTH"]
    assert lines[4].split()[:7] == ["tracker/0", "running", "127.0.0.1:8765", "11", "1h02m", "2", "0.1.0"]
    assert "ok" in lines[4] and "HTTP 200" in lines[4]
    assert lines[5].split()[:7] == ["worker/0", "fatal", "-", "-", "-", "3", "-"]
    assert lines[-1] == "worker/0: exit status 1; the start failed 4 times in a row (start_retries is 3)"


def test_a_supervisor_that_is_gone_is_said_to_be_not_running() -> None:
    assert render(document(), running_pid=None).startswith("supervisor: not running (last status written by pid 10)")
    assert json.dumps(document())  # the document is plain JSON
