"""Long imports, exports and `bee bd stats` show their progress on stderr: plain lines in a pipe, a rich bar on a
terminal (a real pseudo-terminal here), nothing for short runs, and never a byte of it on stdout."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bee_tracker.progress import LONG, progress

BEE = str(Path(sys.executable).parent / "bee")
#: Issues in the long runs: past PLAIN_EVERY (5,000) once, and not a multiple of it.
MANY = 6200


def _jsonl(path: Path, count: int) -> Path:
    stamp = "2025-01-01T00:00:00Z"
    with path.open("w") as out:
        for n in range(count):
            record = {"id": f"p-{n}", "title": f"Issue {n}", "status": "open", "priority": n % 5}
            out.write(json.dumps({**record, "issue_type": "task", "created_at": stamp, "updated_at": stamp}) + "\n")
    return path


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BEE_")}
    return subprocess.run([BEE, *argv], capture_output=True, text=True, timeout=600, check=False, env=env)


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _jsonl(tmp_path_factory.mktemp("progress") / "many.jsonl", MANY)


def test_in_a_pipe_long_runs_write_plain_lines_to_stderr_only(tmp_path: Path, many: Path) -> None:
    store = str(tmp_path / "t.db")
    imported = _run("tracker", "import", "--store", store, str(many))
    assert imported.returncode == 0, imported.stderr
    assert imported.stderr.splitlines() == ["importing: 5000 lines read", f"importing: {MANY} lines read"]
    assert json.loads(imported.stdout)["imported"] == MANY  # the answer on stdout, untouched
    exported = _run("tracker", "export", "--store", store, str(tmp_path / "out.jsonl"))
    assert exported.stderr.splitlines() == [
        "exporting: 5000 lines",
        f"exporting: {MANY} lines",
        f"exported {MANY} lines to {tmp_path / 'out.jsonl'}",
    ]
    stats = _run("bd", "--store", store, "stats", "--json")
    assert stats.returncode == 0 and json.loads(stats.stdout)["summary"]["total_issues"] == MANY
    steps = [f"counting issues: {n}/{MANY} issues" for n in range(1000, MANY, 1000)]
    assert stats.stderr.splitlines() == [*steps, f"counting issues: {MANY}/{MANY} issues"]
    for done in (imported, exported, stats):
        assert "\x1b" not in done.stderr and "\r" not in done.stderr


def test_short_runs_show_nothing(tmp_path: Path) -> None:
    store = str(tmp_path / "t.db")
    short = _jsonl(tmp_path / "short.jsonl", LONG - 1)
    assert _run("tracker", "import", "--store", store, str(short)).stderr == ""
    assert _run("bd", "--store", store, "stats", "--json").stderr == ""


def _on_a_terminal(*argv: str) -> tuple[int, str, str]:
    """``bee ARGV`` with its stderr on a pseudo-terminal: exit code, stdout, and what the terminal was sent."""
    leader, follower = pty.openpty()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("BEE_")}, "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen([BEE, *argv], stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    seen = bytearray()

    def drain() -> None:  # the terminal must be read as it is written, or a full buffer stops the command
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the far side closed
                return
            if not chunk:
                return
            seen.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    out, _ = process.communicate(timeout=600)
    reader.join(timeout=60)
    os.close(leader)
    return process.returncode, out.decode(), seen.decode(errors="replace")


def test_on_a_terminal_long_runs_draw_a_bar(tmp_path: Path, many: Path) -> None:
    store = str(tmp_path / "t.db")
    code, out, shown = _on_a_terminal("tracker", "import", "--store", store, str(many))
    assert code == 0 and json.loads(out)["imported"] == MANY
    assert "importing" in shown and f"{MANY}" in shown and "\x1b[" in shown  # drawn, with escapes
    assert "importing: 5000 lines read\n" not in shown.replace("\r\n", "\n")  # not the pipe's lines
    code, out, shown = _on_a_terminal("bd", "--store", store, "stats", "--json")
    assert code == 0 and json.loads(out)["summary"]["total_issues"] == MANY
    assert "counting issues" in shown and f"{MANY}/{MANY}" in shown and "━" in shown  # a bar, full at the end


def test_a_plain_line_for_every_tenth_of_a_known_total() -> None:
    stream = io.StringIO()
    with progress("reading", total=20_000, stream=stream) as shown:
        for _ in range(20_000 // 500):
            shown.advance(500)
    assert stream.getvalue().splitlines() == [f"reading: {n}/20000 issues" for n in range(2000, 20_001, 2000)]
